"""The questions over a store's catalog: History's answers over a window, in DuckDB SQL.

Each answer is a method of :class:`Questions`, which :class:`~ccanalytics.history.History`
is: it resolves the window on fresh views and runs one of this package's queries
(:mod:`._queries`, :mod:`._waste`, :mod:`._stragglers`, ...) inside the catalog's retries
(:class:`~ccanalytics.history.queries._catalog.Catalog`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from ccanalytics.measures import Params, renamed
from ccanalytics.measures.rules import RIGHTSIZING_HEADROOM

if TYPE_CHECKING:
    from collections.abc import Sequence
    from os import PathLike

    import pandas as pd

    from ccanalytics.history.queries._catalog import Catalog
    from ccanalytics.history.queries._teams import Teams
    from ccanalytics.history.queries._window import DurationLike, TimeLike
    from ccanalytics.measures import GpuTypes

__all__ = ["IDLE_COST_COLUMNS", "IDLE_COST_MEASURES", "Questions"]


#: The registry's measures :meth:`Questions.idle_cost` gives (every other one:
#: :meth:`Questions.measures`).
IDLE_COST_MEASURES = (
    "total_cost",
    "idle_gpu_hours",
    "idle_cost",
    "unused_cost",
    "busy_unused_cost",
    "idle_cost_share",
    "unused_cost_share",
)
#: The columns of :meth:`Questions.idle_cost` after its key columns.
IDLE_COST_COLUMNS = ("observed_hours", *IDLE_COST_MEASURES, "unobserved_hours")


class Questions:
    """History's answers over a window (see :class:`~ccanalytics.history.History`)."""

    _catalog: Catalog

    def measures(
        self,
        names: str | Sequence[str],
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        by: Literal["cluster", "team", "gpu_type", "pod", "rank", "day", "hour"]
        | list[str]
        | None = "cluster",
        params: Params | None = None,
        max_gap: DurationLike | None = None,
        teams: Teams | str | PathLike[str] | None = None,
    ) -> pd.DataFrame:
        """Any of the registry's measures in the window, split by any declared dimensions.

        ``h.measures(["idle_cost", "idle_cost_share"], "7d", by=["gpu_type", "day"])``.

        Parameters
        ----------
        names
            Measure names of :data:`ccanalytics.measures.MEASURES` whose kind is a sum
            over pod rows (``total_cost``, ``idle_cost``, ``memory_risk_pod_hours``, the
            waste classes, ...) or a share of two (``idle_cost_share``), or the count
            ``stragglers`` (asked alone, by ``cluster`` or ``None``: the ranks flagged in
            at least ``chronic_share`` of their snapshots, the newest one included when
            ``until`` is None; :meth:`stragglers` lists them); a name it does not know,
            or a measure of another kind (``spent``: :meth:`spend`), is a ValueError
            saying so.
        since, until, max_gap, params
            As for :meth:`idle_cost`.
        by
            Dimension names (:data:`ccanalytics.measures._dimensions.DIMENSIONS`:
            ``cluster``, ``team``, ``gpu_type``, ``pod``, ``rank``, ``day``, ``hour``),
            one or several (at most one of ``day`` and ``hour``), or ``None``: one row.
        teams
            The team mapping ``team`` splits by (as for :meth:`showback`); without one,
            ``by="team"`` is an :class:`~ccanalytics.errors.ArgumentsError`.

        Returns
        -------
        pandas.DataFrame
            The dimensions' columns, the hours, then each measure (Float64: USD, hours
            or a 0-1 share, <NA> over no denominator). Split by nothing but ``cluster``,
            ``day`` or ``pod`` and asked only sums that :meth:`idle_cost` answers, the hours
            are ``observed_hours``, the time the snapshots cover (a cluster's hours; a
            pod's hours seen), and ``unobserved_hours`` follows; otherwise they are
            ``pod_hours``, the pod-hours the rows stand for (two pods for an hour: 2).
            Every split of one measure sums to the same total.
        """
        from ccanalytics.history.queries import _measures, _queries
        from ccanalytics.history.queries._showback import resolve_teams
        from ccanalytics.measures import columns_of, dimensions

        chosen = _measures.resolve(names)
        split = dimensions(by)
        mapping = resolve_teams(teams)  # a bad file fails before any query
        judged_by = params if params is not None else Params()
        con = self._catalog.reader("measures")
        if _measures.counts_only(chosen, split):
            from ccanalytics.history.queries import _stragglers

            def query(start: Any, end: Any) -> pd.DataFrame:
                by_one = split[0].name if split else None
                return _stragglers.counted(con, start, end, by=by_one, params=judged_by)

        elif _queries.answers(chosen, split):
            columns = [*columns_of(split), "observed_hours", *(m.name for m in chosen)]

            def query(start: Any, end: Any) -> pd.DataFrame:
                by_one = split[0].name if split else None
                frame = _queries.idle_cost(
                    con,
                    start,
                    end,
                    by=by_one,
                    params=judged_by,
                    max_gap=max_gap,
                    measures=[m.name for m in chosen],
                )
                return frame[[*columns, "unobserved_hours"]]

        else:

            def query(start: Any, end: Any) -> pd.DataFrame:
                return _measures.measures(
                    con,
                    start,
                    end,
                    chosen=chosen,
                    by=split,
                    params=judged_by,
                    max_gap=max_gap,
                    teams=mapping,
                )

        return self._catalog.answer(query, since, until)

    def coverage(self, since: TimeLike = None, until: TimeLike = None) -> pd.DataFrame:
        """Per cluster: snapshots taken, failed and missing against its schedule, and why
        the last one failed; see :func:`ccanalytics.history.queries._coverage.coverage`."""
        from ccanalytics.history.queries import _coverage

        return self._catalog.answer(
            lambda start, end: _coverage.coverage(self._catalog.reader("coverage"), start, end),
            since,
            until,
        )

    def idle_cost(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        by: Literal["cluster", "day", "pod"] | None = "cluster",
        idle_threshold: float | None = None,
        max_gap: DurationLike | None = None,
        params: Params | None = None,
        threshold: float | None = None,
    ) -> pd.DataFrame:
        """Spend, idle spend and unused-GPU spend in the window, per ``by`` value.

        A view of :meth:`measures` (``measures(IDLE_COST_MEASURES, by=by)``): its columns
        are the ``by`` key columns (``cluster_id``; ``day``, a UTC midnight; a pod's
        ``cluster_id, pod_id, name, rank``; none for ``by=None``), then, Float64:

        - ``observed_hours``: cluster-hours the snapshots cover (a pod: hours it was seen);
        - ``total_cost``: what the pods cost, USD (Σ cost·Δt);
        - ``idle_gpu_hours``: GPU-hours of idle pods (busiest GPU below ``idle_threshold``);
        - ``idle_cost``: the whole cost of those idle pods, USD;
        - ``unused_cost``: unused capacity, Σ cost·(1 − gpu_util_mean/100)·Δt over running
          GPU pods reporting utilization, idle pods included, USD;
        - ``busy_unused_cost``: the same over the pods that are not idle, USD (what
          :func:`ccanalytics.plots.idle_cost_by_day` draws between idle and the rest);
        - ``idle_cost_share`` and ``unused_cost_share``: those over ``total_cost``
          (<NA> over no cost);
        - ``unobserved_hours``: cluster-hours of the window no snapshot covers (a pod:
          the uncovered time right after snapshots that saw it).

        Every other registry measure (``gpu_cost``, ``memory_risk_pod_hours``, ...) is
        :meth:`measures`'. The time accounting:
        :func:`ccanalytics.history.queries._queries.idle_cost`. ``by`` is ``"cluster"``,
        ``"day"``, ``"pod"`` or ``None``. ``idle_threshold`` (percent, default 10) is the
        live rule's; ``params`` (:class:`ccanalytics.measures.Params`) gives every
        threshold at once; ``threshold=`` is the old spelling of ``idle_threshold=``
        (DeprecationWarning). With no covered time the sums are 0.
        """
        from ccanalytics.history.queries._queries import IDLE_COST_KEYS

        if by not in IDLE_COST_KEYS:
            raise ValueError(f"by must be one of 'cluster', 'day', 'pod' or None, not {by!r}")
        idle = renamed("threshold", "idle_threshold", threshold, idle_threshold)
        judged_by = Params.of(params, idle_threshold=idle)
        frame = self.measures(
            IDLE_COST_MEASURES, since, until, by=by, params=judged_by, max_gap=max_gap
        )
        return frame[[*IDLE_COST_KEYS[by], *IDLE_COST_COLUMNS]]

    def waste(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        by: Literal["cluster", "pod"] | None = "cluster",
        max_gap: DurationLike | None = None,
        params: Params | None = None,
    ) -> pd.DataFrame:
        """What each waste class cost in the window, USD: one row per ``by`` value.

        ``h.waste("7d", by="pod")``: per pod (or ``"cluster"``, or ``None`` for one row),
        a column per class of the registry (``idle_empty_cost``, ``idle_loaded_cost``,
        ``straggler_cost``, ``idle_gpus_cost``, ``low_compute_cost``), their sum
        ``waste_cost``, ``total_cost``, ``waste_share`` and ``pod_hours`` (pod-hours seen,
        not :meth:`idle_cost`'s cluster-hours ``observed_hours``). A pod-snapshot is in one class
        at most (:mod:`ccanalytics.measures.rules`), so ``idle_empty_cost +
        idle_loaded_cost`` is :meth:`idle_cost`'s ``idle_cost``. ``params`` judges
        (idle, memory and low-compute lines, straggler ``z`` and ``min_gap``). See
        :mod:`ccanalytics.history.queries._waste`. A view of :meth:`measures`: the
        registry's classes, ``waste_cost``, ``waste_share`` and ``total_cost`` by ``by``.
        """
        from ccanalytics.history.queries._waste import WASTE_KEYS, WASTE_MEASURES, with_waste

        if by not in WASTE_KEYS:
            raise ValueError(f"by must be one of 'cluster', 'pod' or None, not {by!r}")
        judged_by = params if params is not None else Params()
        frame = self.measures(
            WASTE_MEASURES, since, until, by=by, params=judged_by, max_gap=max_gap
        )
        return with_waste(frame, WASTE_KEYS[by])

    def rightsizing(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        gpu_types: GpuTypes | None = None,
        headroom: float = RIGHTSIZING_HEADROOM,
        max_gap: DurationLike | None = None,
        params: Params | None = None,
    ) -> pd.DataFrame:
        """Right-sizing hints over the window, with what each saves per month (USD, 30 days).

        ``h.rightsizing("7d")``: one row per hint, largest saving first: the pod
        (``cluster_id, pod_id, name``), its ``gpu_type`` and ``gpu_count``, the
        ``suggested_type`` and ``suggested_count``, ``monthly_saving``, ``reason``, and
        the evidence (peak GPU memory in GB, mean utilization, hours observed). "Fits on
        fewer GPUs": GPUs below the idle line in every snapshot; "fits a cheaper type":
        a pod under ``params.low_compute_threshold`` whose fullest GPU's peak memory
        plus ``headroom`` (0.2: 20 %) fits one GPU of a type the store saw cost less.
        ``gpu_types``: a TOML file (or mapping ``{gpu id: GB}``) extending the packaged
        table (:func:`ccanalytics.measures.gpu_types`). See
        :mod:`ccanalytics.history.queries._rightsizing`.
        """
        from ccanalytics.history.queries import _rightsizing
        from ccanalytics.measures import gpu_types as load_gpu_types

        memory = load_gpu_types(gpu_types)
        judged_by = params if params is not None else Params()
        return self._catalog.answer(
            lambda start, end: _rightsizing.rightsizing(
                self._catalog.reader("rightsizing"),
                start,
                end,
                memory=memory,
                headroom=headroom,
                params=judged_by,
                max_gap=max_gap,
            ),
            since,
            until,
        )

    def utilization(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        freq: DurationLike = "1h",
        by: Literal["cluster", "rank", "pod"] = "cluster",
        max_gap: DurationLike | None = None,
    ) -> pd.DataFrame:
        """GPU utilization per ``freq`` bucket, long format: ``time, cluster_id, ...``.

        ``by`` is ``"cluster"``, ``"rank"`` or ``"pod"``; unobserved buckets are <NA>.
        See :func:`ccanalytics.history.queries._utilization.utilization`.
        """
        from ccanalytics.history.queries import _utilization

        return self._catalog.answer(
            lambda start, end: _utilization.utilization(
                self._catalog.reader("utilization"), start, end, freq=freq, by=by, max_gap=max_gap
            ),
            since,
            until,
        )

    def stragglers(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        min_share: float | None = None,
        idle_threshold: float | None = None,
        z: float | None = None,
        min_gap: float | None = None,
        params: Params | None = None,
    ) -> pd.DataFrame:
        """Per (cluster_id, rank): snapshots judged, flagged, share flagged (>= ``min_share``).

        The drill-down of the registry's ``stragglers`` measure: at the default
        ``min_share`` its rows are the ranks ``measures("stragglers")`` counts. Flagged by the rule of :func:`ccanalytics.analysis.stragglers`, snapshot by
        snapshot, at ``idle_threshold``, ``z`` and ``min_gap`` (or ``params``'s; the
        defaults are the live function's); ``min_share`` defaults to the chronic share
        (0.5). See :func:`ccanalytics.history.queries._stragglers.stragglers`.
        """
        from ccanalytics.history.queries import _stragglers

        judged_by = Params.of(params, idle_threshold=idle_threshold, z=z, min_gap=min_gap)
        return self._catalog.answer(
            lambda start, end: _stragglers.stragglers(
                self._catalog.reader("stragglers"),
                start,
                end,
                min_share=min_share,
                params=judged_by,
            ),
            since,
            until,
        )

    def straggler_flags(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        params: Params | None = None,
    ) -> pd.DataFrame:
        """Every judgement of the straggler rule in the window: one row per snapshot and rank.

        Columns ``cluster_id, observed_at, rank, deficit, flagged``: what
        :meth:`stragglers` counts, for drill-downs (the report's runs of flagged snapshots).
        """
        from ccanalytics.history.queries import _stragglers

        judged_by = params if params is not None else Params()
        return self._catalog.answer(
            lambda start, end: _stragglers.flags(
                self._catalog.reader("straggler_flags"), start, end, params=judged_by
            ),
            since,
            until,
        )

    def pod_lifetimes(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        idle_threshold: float | None = None,
        max_gap: DurationLike | None = None,
        params: Params | None = None,
        threshold: float | None = None,
    ) -> pd.DataFrame:
        """Per pod seen: first/last seen, statuses, observed hours, cost in this window, idle
        time share.

        Most expensive idle pods first; see
        :func:`ccanalytics.history.queries._queries.pod_lifetimes`. ``threshold=`` is the
        old spelling of ``idle_threshold=`` (DeprecationWarning).
        """
        from ccanalytics.history.queries import _queries

        idle = renamed("threshold", "idle_threshold", threshold, idle_threshold)
        judged_by = Params.of(params, idle_threshold=idle)
        return self._catalog.answer(
            lambda start, end: _queries.pod_lifetimes(
                self._catalog.reader("pod_lifetimes"), start, end, params=judged_by, max_gap=max_gap
            ),
            since,
            until,
        )

    def showback(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        by: Literal["hour", "day"] = "hour",
        teams: Teams | str | PathLike[str] | None = None,
        idle_threshold: float | None = None,
        max_gap: DurationLike | None = None,
        params: Params | None = None,
    ) -> pd.DataFrame:
        """What each pod cost per UTC hour (or day) of the window, and whose it was.

        Parameters
        ----------
        since, until
            The window, as for :meth:`idle_cost`: ``h.showback("7d")`` is the week
            before the newest snapshot.
        by
            ``"hour"`` or ``"day"``: the charge periods (UTC), each clipped to the window.
        teams
            A team mapping (:class:`ccanalytics.history.Teams`, or the path of its TOML
            file: cluster and pod-name globs to a team, the first matching rule wins);
            ``None``: every pod is ``"unallocated"``. A bad file raises
            :class:`~ccanalytics.errors.TeamsError` before the store is read.
        idle_threshold, params, max_gap
            As for :meth:`idle_cost`.

        Returns
        -------
        pandas.DataFrame
            One row per pod and period in which the pod was observed, with the columns
            of :data:`ccanalytics.history.SHOWBACK_COLUMNS`. ``cost`` is Σ cost·Δt by the
            one rule of time :meth:`idle_cost` uses, unrounded: the rows sum to its
            ``total_cost`` over the same window (and any grouping of them to the
            matching answer: per cluster, per day, per pod).
        """
        from ccanalytics.history.queries import _showback

        mapping = _showback.resolve_teams(teams)  # a bad file fails before any query
        judged_by = Params.of(params, idle_threshold=idle_threshold)
        return self._catalog.answer(
            lambda start, end: _showback.showback(
                self._catalog.reader("showback"),
                start,
                end,
                by=by,
                teams=mapping,
                params=judged_by,
                max_gap=max_gap,
            ),
            since,
            until,
        )

"""Spend so far in the current UTC day, ISO week and calendar month, and where it is heading.

The method, stated once (the column docs of :data:`SPEND_COLUMNS` say it too):

- **now** is the store's newest snapshot (or the ``at`` given): the figures are those of
  the history collected, never of the local clock;
- **spent** is Σ cost·Δt over ``[period start, now)`` by the one rule of time every
  History answer uses (:meth:`History.idle_cost`'s ``total_cost``): unobserved time is
  never counted as spend, and never projected;
- **burn rate** is the USD per hour of each cluster's newest listing that answered at or
  before now (the sum of its pods' ``cost``; each pod once): an empty listing burns 0,
  a failed one is unobserved and leaves the rate of the listing before it;
- **projected** is spent + burn rate × the hours left until the period ends;
- **projected_p10/p50/p90** are spent + the seasonal forecast of the rest of the period
  (:mod:`ccanalytics.history.queries._forecast`: an hour-of-week profile of the recent
  weeks with their trend, its interval from its own errors on this store's past); with
  too little history they are the line above, ``forecast`` says ``"burn_rate"`` and
  ``forecast_note`` why. ``breach_at_p10/p50/p90`` are when each reaches the limit
  (the P90 first);
- **breach_at**, given a limit, is the instant that same line, spent + burn rate × the
  hours from now, reaches it: ``now + (limit − spent) / burn rate``, when spent is still
  under the limit and the projection is over it
  (:func:`~ccanalytics.measures.breach_instant`, the registry's ``breach_at``, which
  the alerts' sentences call too); NULL otherwise (no limit, a burn rate that never gets
  there this period, or a spend already over it, which the spend itself says).

A cluster that appears mid-period has spent only from its first snapshot; one whose
collection stopped keeps the burn rate of its last answered listing (its spend stops
growing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar

from ccanalytics.measures import (
    KIND_RELATIONS,
    SpendLimit,
    by_name,
    computed,
    limit_of,
    of_kind,
    query,
    select_list,
)

if TYPE_CHECKING:
    import pandas as pd

    from ccanalytics.history.queries._window import TimeLike

__all__ = ["PERIODS", "SPEND_COLUMNS", "Ledger", "period_bounds", "spend"]

Period = Literal["day", "week", "month"]
_T = TypeVar("_T")

#: The periods a budget can be set for, each starting at a UTC boundary.
PERIODS: Final[tuple[Period, ...]] = ("day", "week", "month")

#: Columns of :meth:`History.spend`: name -> meaning and unit.
SPEND_COLUMNS: Final[Mapping[str, str]] = {
    "cluster_id": "the cluster (absent with by=None: the whole store)",
    "period": "'day' (UTC), 'week' (ISO: from Monday 00:00 UTC) or 'month' (calendar, UTC)",
    "period_start": "UTC start of the period that holds now",
    "period_end": "UTC end of that period (exclusive)",
    "now": "the instant judged: the store's newest snapshot, or the at= given",
    "spent": "USD spent from period_start to now: Σ cost·Δt over observed time only",
    "observed_hours": "cluster-hours of [period_start, now) covered by snapshots",
    "unobserved_hours": "cluster-hours of [period_start, now) no snapshot covers (not spend)",
    "burn_rate": "USD per hour of the newest answered listing at or before now (empty: 0)",
    "hours_left": "hours from now to period_end",
    "projected": "USD by period_end: spent + burn_rate × hours_left",
    "breach_at": "UTC instant the projection reaches limit= (now + (limit − spent) / "
    "burn_rate), when spent < limit < projected; NULL otherwise, and without a limit",
    "forecast": "how projected_p10/p50/p90 were made: 'seasonal' (hour-of-week profile "
    "with trend) or 'burn_rate' (too little history: the projected line)",
    "forecast_note": "why the forecast is the burn-rate line (NULL when seasonal)",
    "projected_p10": "USD by period_end: spent + the forecast's 10th percentile of the rest",
    "projected_p50": "USD by period_end: spent + the forecast's median of the rest",
    "projected_p90": "USD by period_end: spent + the forecast's 90th percentile of the rest",
    "breach_at_p10": "UTC instant spent + the P10 forecast reaches limit= (the latest likely)",
    "breach_at_p50": "UTC instant spent + the P50 forecast reaches limit=",
    "breach_at_p90": "UTC instant spent + the P90 forecast reaches limit= (the earliest likely)",
}

#: A limit for :func:`spend`'s ``breach_at``: USD for every period, or per period.
Limit = SpendLimit


class Ledger(Protocol):
    """What spend reads of a History's catalog (:class:`~ccanalytics.history.queries._catalog.Catalog`).

    A protocol, not the class: spend needs its queries and windows only.
    """

    def query(self, sql: str, params: Any = None) -> pd.DataFrame: ...

    def window_bounds(
        self, since: TimeLike = None, until: TimeLike = None
    ) -> tuple[pd.Timestamp | None, pd.Timestamp | None]: ...

    def fresh(self, action: Callable[[Any], _T]) -> _T: ...


def period_bounds(now: pd.Timestamp, period: Period) -> tuple[pd.Timestamp, pd.Timestamp]:
    """``[start, end)`` in UTC of the ``period`` that holds ``now`` (an aware timestamp)."""
    import pandas as pd

    midnight = now.tz_convert("UTC").floor("D")
    if period == "day":
        return midnight, midnight + pd.Timedelta(days=1)
    if period == "week":
        monday = midnight - pd.Timedelta(days=midnight.weekday())  # ISO weeks start on Monday
        return monday, monday + pd.Timedelta(days=7)
    if period == "month":
        first = midnight.replace(day=1)
        return first, first + pd.offsets.MonthBegin(1)
    raise ValueError(f"period must be one of {', '.join(PERIODS)}, not {period!r}")


def spend(
    history: Ledger,
    at: pd.Timestamp | None,
    *,
    by: Literal["cluster"] | None = "cluster",
    max_gap: pd.Timedelta | None = None,
    limit: Limit = None,
) -> pd.DataFrame:
    """Spent so far and projected per period (and cluster): see the module's method."""
    import pandas as pd

    from ccanalytics.history.queries._forecast import hourly_series
    from ccanalytics.history.queries._queries import idle_cost_since

    now = _newest_snapshot(history, at)
    if now is None:
        return _empty(by)
    rates = burn_rates(history, now)
    bounds = [period_bounds(now, period) for period in PERIODS]
    # Every period's spend in one query: the pod rows are read once, not once a period.
    costs = history.fresh(
        lambda con: idle_cost_since(
            con, [start for start, _ in bounds], now, max_gap=max_gap, measures=["total_cost"]
        )
    )
    parts = [
        _period_rows(period, bound, now, cost, rates)
        for period, bound, cost in zip(PERIODS, bounds, costs, strict=True)
    ]
    rows = pd.concat(parts, ignore_index=True)
    if by is None:
        rows = _totals(rows)
    series = history.fresh(lambda con: hourly_series(con, int(now.value // 1000)))
    rests = _rests(rows, series)
    rows = _figures(rows, rests)
    rows["breach_at"] = _breach_column(rows, limit)
    rows = pd.concat([rows, _forecast_columns(rows, rests, limit)], axis=1)
    columns = [*SPEND_COLUMNS, *(m.name for m in of_kind("spend"))]
    return rows[[c for c in dict.fromkeys(columns) if c in rows.columns]].reset_index(drop=True)


def _rests(rows: pd.DataFrame, series: Mapping[str, Any]) -> list[Any]:
    """The forecast of the rest of the period of each row: its cluster's series (by=None:
    their sum)."""
    from ccanalytics.history.queries._forecast import forecast_rest

    whole = None
    for part in series.values():
        whole = part if whole is None else whole.total(part)
    rests = []
    for row in rows.to_dict("records"):  # a few rows, one per period and cluster
        own = series.get(str(row["cluster_id"])) if "cluster_id" in row else whole
        now, end = row["now"], row["period_end"]
        rests.append(
            forecast_rest(
                own, int(now.value // 1000), int(end.value // 1000), float(row["burn_rate"])
            )
        )
    return rests


def _figures(rows: pd.DataFrame, rests: list[Any]) -> pd.DataFrame:
    """``rows`` (the relation ``period_spend``) with each spend entry of the registry
    computed over it by its own SQL: spent, projected, the forecast's projections."""
    import pandas as pd

    relation = KIND_RELATIONS["spend"]
    for q in ("p10", "p50", "p90"):
        rows[f"rest_{q}"] = pd.array([rest.quantile(q) for rest in rests], dtype="Float64")
    figures = query(
        rows,
        f"WITH {relation.name} AS (SELECT * FROM frame) "
        f"SELECT {select_list('spend')} FROM {relation.name} ORDER BY _row",
        {},
        reads=relation.columns,
        frame_dtypes=dict.fromkeys(relation.columns, "Float64"),
    )
    figures.index = rows.index
    return pd.concat([rows, figures], axis=1)


def _breach_column(rows: pd.DataFrame, limit: Limit) -> pd.Series:
    """``breach_at`` of each row against ``limit`` (one for every period, or per period)."""
    import pandas as pd

    breach_instant = computed(by_name("breach_at"))
    instants: list[Any] = []
    for row in rows.to_dict("records"):  # Any values: a few rows, one per period
        cap = limit_of(limit, str(row["period"]))
        crossing = None
        if cap is not None:
            crossing = breach_instant(
                float(row["spent"]), float(row["burn_rate"]), cap, row["now"], row["period_end"]
            )
        instants.append(pd.NaT if crossing is None else crossing)
    return pd.Series(instants, index=rows.index, dtype="datetime64[ns, UTC]")


def _forecast_columns(rows: pd.DataFrame, rests: list[Any], limit: Limit) -> pd.DataFrame:
    """The forecast's method and breach dates of each row (its projections are
    :func:`_figures`'), against ``limit``."""
    import pandas as pd

    # One rule for the three quantiles' dates: the registry's breach_at_p90 and _p10.
    breach = computed(by_name("breach_at_p90"))
    names = [c for c in SPEND_COLUMNS if c.startswith(("forecast", "breach_at_p"))]
    out: dict[str, list[Any]] = {c: [] for c in names}
    for row, rest in zip(rows.to_dict("records"), rests, strict=True):
        spent, cap = float(row["spent"]), limit_of(limit, str(row["period"]))
        out["forecast"].append(rest.method)
        out["forecast_note"].append(rest.note)
        for q in ("p10", "p50", "p90"):
            crossing = None
            if cap is not None:
                total = rest.quantile(q)
                crossing = breach(rest.path, rest.hour_weights, total, spent, cap, row["now"])
            out[f"breach_at_{q}"].append(pd.NaT if crossing is None else crossing)
    return pd.DataFrame(
        {c: pd.Series(v, index=rows.index, dtype=_FORECAST_DTYPES[c]) for c, v in out.items()}
    )


_FORECAST_DTYPES: Final = {
    "forecast": "string",
    "forecast_note": "string",
    **{f"projected_{q}": "Float64" for q in ("p10", "p50", "p90")},
    **{f"breach_at_{q}": "datetime64[ns, UTC]" for q in ("p10", "p50", "p90")},
}


def _newest_snapshot(history: Ledger, at: pd.Timestamp | None) -> pd.Timestamp | None:
    """The newest snapshot in the store; with ``at``, ``at`` itself if a snapshot precedes it."""
    import pandas as pd

    if at is None:  # the one definition of the newest instant every window uses (both tables)
        return history.window_bounds(timedelta(0))[0]
    found = history.query(
        "SELECT max(observed_at) AS t FROM pods WHERE observed_at <= $at",
        {"at": at.to_pydatetime()},
    )
    newest = found["t"].iloc[0] if len(found) else None
    # Judged at ``at`` itself when given: the hours left count from there.
    return None if newest is None or pd.isna(newest) else at


def _period_rows(
    period: Period,
    bounds: tuple[pd.Timestamp, pd.Timestamp],
    now: pd.Timestamp,
    spent: pd.DataFrame,
    rates: pd.Series,
) -> pd.DataFrame:
    """One row per cluster seen in the period or burning at ``now``: ``spent`` is
    :meth:`History.idle_cost` by cluster over ``[period start, now)``."""
    import pandas as pd

    start, end = bounds
    costs = spent.set_index(spent["cluster_id"].astype(str))
    rates = rates.set_axis(rates.index.astype(str))
    clusters = sorted(set(costs.index) | set(rates.index))

    def per_cluster(values: pd.Series) -> pd.Series:
        """``values`` (by cluster) for each of ``clusters`` in turn, 0 where it has none."""
        return values.astype("Float64").reindex(clusters).fillna(0.0).reset_index(drop=True)

    # Built in one go from whole columns: pandas' cost is per call (assign, map, astype),
    # and a spend builds three periods.
    hours_left = (end - now) / pd.Timedelta(hours=1)
    return pd.DataFrame(
        {
            "cluster_id": pd.array(clusters, dtype="string"),
            "period": period,
            "period_start": start,
            "period_end": end,
            "now": now,
            "total_cost": per_cluster(costs["total_cost"]),
            "observed_hours": per_cluster(costs["observed_hours"]),
            "unobserved_hours": per_cluster(costs["unobserved_hours"]),
            "burn_rate": per_cluster(rates),
            "hours_left": hours_left,
        }
    )


def burn_rates(history: Ledger, now: pd.Timestamp) -> pd.Series:
    """USD per hour of each cluster's newest answered listing at or before ``now``.

    The newest listing that answered, by the snapshots table too: an empty one is
    observed time at zero cost, so its rate is 0 (not that of the last listing with
    pods); a failed one is unobserved and leaves the rate of the one before. Each pod
    counts once (a snapshot held by two files).
    """
    import pandas as pd

    from ccanalytics.history.queries._accounting import snapshot_instants  # DuckDB: on first use

    rates = history.query(
        f"""
        WITH {snapshot_instants()},
        latest AS (
            SELECT cluster_id, max(t) AS t
            FROM snapshot_instants WHERE ok AND t <= $now_us GROUP BY cluster_id
        ), per_pod AS (
            SELECT p.cluster_id, coalesce(p.pod_id, p.name) AS pod, max(p.cost) AS cost
            FROM pods AS p JOIN latest
              ON p.cluster_id = latest.cluster_id AND epoch_us(p.observed_at) = latest.t
            GROUP BY p.cluster_id, pod
        )
        SELECT latest.cluster_id, coalesce(sum(per_pod.cost), 0.0) AS burn_rate
        FROM latest LEFT JOIN per_pod USING (cluster_id) GROUP BY latest.cluster_id
        """,
        {"now_us": int(now.value // 1000)},  # .value is nanoseconds since the epoch
    )
    if rates.empty:
        return pd.Series(dtype="Float64")
    return rates.set_index(rates["cluster_id"].astype(str))["burn_rate"].astype("Float64")


def _totals(rows: pd.DataFrame) -> pd.DataFrame:
    keys = ["period", "period_start", "period_end", "now", "hours_left"]
    sums = ["total_cost", "observed_hours", "unobserved_hours", "burn_rate"]
    return rows.groupby(keys, sort=False, as_index=False)[sums].sum()


def _empty(by: Literal["cluster"] | None) -> pd.DataFrame:
    import pandas as pd

    dtypes = {
        **_FORECAST_DTYPES,
        "cluster_id": "string",
        "period": "string",
        "period_start": "datetime64[ns, UTC]",
        "period_end": "datetime64[ns, UTC]",
        "now": "datetime64[ns, UTC]",
        "breach_at": "datetime64[ns, UTC]",
    }
    every = [*SPEND_COLUMNS, *(m.name for m in of_kind("spend") if m.name not in SPEND_COLUMNS)]
    columns = [c for c in every if by is not None or c != "cluster_id"]
    return pd.DataFrame({c: pd.Series(dtype=dtypes.get(c, "Float64")) for c in columns})

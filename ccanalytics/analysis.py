"""Answers to the questions people open a notebook for, from a pods frame.

Every function takes the frame :func:`ccanalytics.pods_frame` (or
:func:`ccanalytics.load_cluster_pods`) returns and gives a new, small frame:

- :func:`cluster_summary`: per cluster, pods by status, GPUs, cost per hour, mean and
  cost-weighted GPU utilization, idle and unused-capacity cost, stragglers;
- :func:`idle_pods`: running GPU pods whose every GPU is below a utilization
  threshold, with the cost per hour they waste and what they cost since they started;
- :func:`stragglers`: ranks whose GPU utilization falls well below their
  cluster's typical rank, judged by a robust statistic (median and MAD);
- :func:`cost_per_gpu_hour`: by GPU type, what one *utilized* GPU-hour costs.

Importing this module also gives every DataFrame a ``df.cc`` accessor with the same
functions as methods (``df.cc.idle_pods()``; see :class:`CCAccessor`).

Units as the service sends them: ``cost`` in USD per hour, utilization in percent
(0-100), uptime in seconds. Only ``RUNNING`` pods have runtime metrics, so only they
are judged idle or straggling; pods in any other state (``PROVISIONING``,
``STARTING``, ``EXITED``, ``ERROR``, ``TERMINATED``) are counted under their state.
A pod whose status is missing (``<NA>``) is not ``RUNNING``: it is counted (under
``pods_other_status``) and its cost is summed, but it is never judged idle, unused or
straggling. The rules themselves live in one module shared with
:class:`ccanalytics.history.History` (:mod:`ccanalytics.measures`), so a live frame and a
store holding the same snapshot give the same answers.
Every helper is vectorised (one ``groupby`` per question, no per-row Python).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Final

import pandas as pd

from ccanalytics.frames import POD_COLUMNS
from ccanalytics.measures import (
    MEASURES,
    Params,
    idle_threshold_given,
    query,
    rules,
    sql_columns,
    sql_tables,
    sum_where,
    threshold,
    waste_classes,
)

__all__ = [
    "DEFAULT_IDLE_THRESHOLD",
    "DEFAULT_STRAGGLER_MIN_GAP",
    "DEFAULT_STRAGGLER_Z",
    "MIN_RANKS_FOR_STRAGGLERS",
    "POD_STATES",
    "CCAccessor",
    "cc",
    "cluster_summary",
    "cost_per_gpu_hour",
    "idle_pods",
    "stragglers",
]


def __dir__() -> list[str]:
    # Only the public names: no np, pd or typing helpers in tab completion.
    return sorted(__all__)


#: A GPU pod is idle when its busiest GPU is below this utilization (percent).
DEFAULT_IDLE_THRESHOLD: Final = threshold("idle_threshold").default
#: A rank straggles when its robust z-score is below minus this...
DEFAULT_STRAGGLER_Z: Final = threshold("z").default
#: ...and it is at least this many utilization points below its cluster's median
#: (so a perfectly uniform cluster, whose MAD is ~0, does not flag noise).
DEFAULT_STRAGGLER_MIN_GAP: Final = threshold("min_gap").default
#: Fewer ranks reporting than this, and "typical" has no meaning.
MIN_RANKS_FOR_STRAGGLERS: Final = rules.MIN_RANKS_FOR_STRAGGLERS
#: A pod's lifecycle states, in the order a pod goes through them (provider notes).
POD_STATES: Final = ("PROVISIONING", "STARTING", "RUNNING", "EXITED", "ERROR", "TERMINATED")

#: The pods-frame types of the columns the queries may read (an absent one is NULL of it).
_FRAME_DTYPES: Final = {name: str(spec.dtype) for name, spec in POD_COLUMNS.items()}


_A_PODS_FRAME: Final = "a pods frame (ccanalytics.pods_frame)"


def _require(frame: pd.DataFrame, columns: list[str], what: str = _A_PODS_FRAME) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(_not_a(what, missing))


def _not_a(what: str, missing: list[str]) -> str:
    return f"expected {what}; missing columns: {missing}"


#: The GPU frame's columns the waste classes read (relation ``gpus_frame`` in the SQL).
_GPU_DTYPES: Final = {
    "cluster_id": "string",
    "pod_id": "string",
    "gpu_index": "Int64",
    "util": "Float64",
}
_GPUS: Final = "gpus_frame"


def _run(
    frame: pd.DataFrame,
    sql: str,
    params: Params,
    dtypes: dict[str, str],
    gpus: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """``sql`` over ``frame`` by the one engine (:func:`ccanalytics.measures.query`).

    Rows that name a pod carry ``_row``; ``dtypes``' columns the SQL does not compute
    (names, ids) are taken from ``frame`` at those rows. ``gpus`` (a GPU frame) is the
    relation ``gpus_frame``: no rows when not given.
    """
    tables = None
    if _GPUS in sql_tables(sql):
        if gpus is not None:
            _require(
                gpus, ["cluster_id", "pod_id", "gpu_index", "util"], "a GPU frame (gpus_frame)"
            )
        given = gpus if gpus is not None else pd.DataFrame(columns=list(_GPU_DTYPES))
        tables = {_GPUS: (given, _GPU_DTYPES)}
    return query(
        frame,
        sql,
        params.sql(),
        reads=_reads(sql),
        frame_dtypes=_FRAME_DTYPES,
        dtypes=dtypes,
        tables=tables,
        fallbacks=_FALLBACKS,
    )


#: A frame made before a pod column was read: the GPU count weighs each pod's mean in
#: place of the GPUs reporting.
_FALLBACKS: Final = {"gpus_reporting": "gpu_count"}


@functools.cache
def _reads(sql: str) -> tuple[str, ...]:
    """The pod columns ``sql``'s tree reads: only those are handed to the engine."""
    read = sql_columns(sql)
    return tuple(name for name in POD_COLUMNS if name in read)


def _params(params: Params | None, **given: Any) -> Params:
    return Params.of(params, **given)


_IDLE_DTYPES: Final = {
    "cluster_id": "string",
    "pod_id": "string",
    "name": "string",
    "rank": "Int64",
    "gpu_type": "string",
    "gpu_count": "Int64",
    "gpu_util_mean": "Float64",
    "gpu_util_max": "Float64",
    "cost": "Float64",
    "uptime_s": "Float64",
    "wasted_cost_per_hour": "Float64",
    "cost_so_far": "Float64",
}

_IDLE_SQL: Final = f"""
SELECT _row, coalesce(cost, 0) AS wasted_cost_per_hour,
       coalesce(cost, 0) * uptime_s / 3600.0 AS cost_so_far
FROM frame WHERE {rules.IDLE_SQL}
ORDER BY wasted_cost_per_hour DESC, cluster_id ASC NULLS LAST, _row"""


def idle_pods(
    frame: pd.DataFrame,
    *,
    idle_threshold: float | None = None,
    threshold: float | None = None,
    params: Params | None = None,
) -> pd.DataFrame:
    """Running GPU pods that are paid for while every GPU is below ``idle_threshold`` percent.

    ``idle_threshold`` defaults to :data:`DEFAULT_IDLE_THRESHOLD` (10 %);
    ``threshold=`` is its old spelling (DeprecationWarning). ``params``
    (:class:`ccanalytics.measures.Params`) gives every threshold at once.

    Returns one row per idle pod, most expensive first, with ``cluster_id, pod_id,
    name, rank, gpu_type, gpu_count, gpu_util_mean, gpu_util_max, cost`` (USD per
    hour), ``uptime_s`` (seconds since its container started),
    ``wasted_cost_per_hour`` (the pod's whole cost: an idle GPU pod buys nothing) and
    ``cost_so_far`` (USD: ``cost * uptime_s / 3600``, what it has cost since then;
    ``<NA>`` when the uptime is unknown). Pods that are not ``RUNNING`` are never idle.
    """
    _require(frame, ["cluster_id", "pod_id", "gpu_count", "gpu_util_max", "cost"])
    if threshold is not None:
        idle_threshold = idle_threshold_given(idle_threshold, threshold)
    judged_by = _params(params, idle_threshold=idle_threshold)
    return _run(frame, _IDLE_SQL, judged_by, _IDLE_DTYPES)


_STRAGGLER_DTYPES: Final = {
    "cluster_id": "string",
    "rank": "Int64",
    "pod_id": "string",
    "name": "string",
    "gpu_util_mean": "Float64",
    "cluster_median": "Float64",
    "deficit": "Float64",
    "robust_z": "Float64",
}

#: Each cluster of a live frame is one snapshot: the store's straggler CTEs, keyed by it.
_STRAGGLER_CTES: Final = rules.straggler_ctes("frame", "cluster_id", ", _row")
_STRAGGLERS_SQL: Final = f"""WITH {_STRAGGLER_CTES}
SELECT _row, v AS gpu_util_mean, median AS cluster_median, deficit, robust_z
FROM judged WHERE flagged
ORDER BY deficit DESC, cluster_id, _row"""


def stragglers(
    frame: pd.DataFrame,
    *,
    z: float | None = None,
    min_gap: float | None = None,
    idle_threshold: float | None = None,
    params: Params | None = None,
) -> pd.DataFrame:
    """Ranks whose mean GPU utilization is far below their cluster's typical rank.

    Per cluster, over running GPU pods that report utilization, have a rank, and are
    not idle (idle pods, every GPU below ``idle_threshold``, are what :func:`idle_pods`
    reports: a rank doing nothing is not slow, it is stuck or forgotten; pass
    ``idle_threshold=0`` to judge them here too): the median of ``gpu_util_mean``
    and its median absolute deviation (MAD). A rank straggles when
    ``MAD_SCALE * (util - median) / MAD < -z`` (the scale that makes a MAD-based z
    comparable to a standard one for normal data) *and* it is at least ``min_gap`` points
    below the median. With MAD 0 (all other ranks equal) the gap alone decides.
    Robust: one slow rank cannot drag the median or MAD toward itself as it would a
    mean and standard deviation. Clusters with fewer than 4 such ranks are not judged.
    Defaults: ``z`` 3.5, ``min_gap`` 10, ``idle_threshold`` 10 (or ``params``'s).

    Returns ``cluster_id, rank, pod_id, name, gpu_util_mean, cluster_median,
    deficit`` (points below the median) and ``robust_z``, worst first.
    """
    _require(frame, ["cluster_id", "rank", "pod_id", "gpu_util_mean", "gpu_util_max", "gpu_count"])
    judged_by = _params(params, z=z, min_gap=min_gap, idle_threshold=idle_threshold)
    return _run(frame, _STRAGGLERS_SQL, judged_by, _STRAGGLER_DTYPES)


def _count(where: str) -> str:
    """``count(*) FILTER (WHERE where)``, in the aggregate's one pass (as
    :func:`~ccanalytics.measures.sum_where` writes a sum)."""
    return f"count(CASE WHEN {where} THEN 1 END)"


_STATE_COUNTS: Final = ",\n       ".join(
    _count(f"status = '{state}'") + f" AS pods_{state.lower()}" for state in POD_STATES
)
_OTHER_STATES: Final = ", ".join(f"'{state}'" for state in POD_STATES)
_HAS_GPUS: Final = "coalesce(gpu_count, 0) > 0"
_WITHOUT_METRICS: Final = (
    f"(({_HAS_GPUS} AND gpu_util_mean IS NULL) OR (NOT {_HAS_GPUS} AND cpu_util IS NULL))"
)


#: The registry's measures the live summary carries (per hour), in the registry's order.
_LIVE_SUMS: Final = tuple(m for m in MEASURES if m.kind == "sum" and m.live)
#: The waste classes, per hour, over the pod rows :func:`rules.waste_ctes` completes.
_LIVE_WASTE: Final = tuple(m for m in waste_classes() if m.live)
_LIVE_SHARES: Final = tuple(m for m in MEASURES if m.kind == "share" and m.live)


def _summary_sql() -> str:
    """The per-cluster counts, and every live measure of the registry, in one pass."""
    weight = "CAST(coalesce(gpus_reporting, 0) AS DOUBLE)"
    judged = rules.JUDGED_SQL
    other = _count(f"status IS NULL OR status NOT IN ({_OTHER_STATES})")
    without = _count(f"status = 'RUNNING' AND {_WITHOUT_METRICS}")
    sums = ",\n       ".join(f"coalesce({m.sql_sum(case=True)}, 0) AS {m.live}" for m in _LIVE_SUMS)
    live = {m.name: m.live for m in _LIVE_SUMS}
    shares = "".join(
        f", {live[str(m.numerator)]} / nullif({live[str(m.denominator)]}, 0) AS {m.live}"
        for m in _LIVE_SHARES
    )
    waste = ",\n       ".join(
        f"coalesce({m.sql_sum(case=True)}, 0) AS {m.live}" for m in _LIVE_WASTE
    )
    waste_names = ", ".join(str(m.live) for m in _LIVE_WASTE)
    # One pass over the pod rows: pod_waste is every row of the frame (with what the
    # waste classes read), so the counts, the registry's sums, the stragglers and the
    # waste classes are one GROUP BY (two, joined, scanned and grouped the frame twice),
    # every conditional sum and count a CASE in its one pass (not a FILTER: a pass each).
    return f"""WITH {_STRAGGLER_CTES},
{rules.waste_ctes("frame", _GPUS, "cluster_id, pod_id", "_row")},
sums AS (
SELECT cluster_id, count(*) AS pods,
       {_STATE_COUNTS},
       {other} AS pods_other_status,
       {_count("gpu_util_mean IS NOT NULL OR cpu_util IS NOT NULL")} AS pods_reporting,
       {without} AS running_without_metrics,
       coalesce(sum(CAST(gpu_count AS DOUBLE)), 0) AS gpus,
       {sum_where("gpu_util_mean * " + weight, judged)}
         / nullif({sum_where(weight, judged)}, 0) AS gpu_util_mean,
       {sum_where("gpu_util_mean * coalesce(cost, 0)", judged)}
         / nullif({sum_where("coalesce(cost, 0)", judged)}, 0) AS gpu_util_cost_weighted,
       {sums},
       count(straggler_deficit) AS stragglers,
       {waste}
FROM pod_waste WHERE cluster_id IS NOT NULL GROUP BY cluster_id
)
SELECT sums.* EXCLUDE (stragglers, {waste_names}){shares}, stragglers, {waste_names}
FROM sums ORDER BY cluster_id"""


_SUMMARY_DTYPES: Final = {
    "cluster_id": "string",
    "pods": "Int64",
    **{f"pods_{state.lower()}": "Int64" for state in POD_STATES},
    "pods_other_status": "Int64",
    "pods_reporting": "Int64",
    "running_without_metrics": "Int64",
    "gpus": "Int64",
    "gpu_util_mean": "Float64",
    "gpu_util_cost_weighted": "Float64",
    "idle_pods": "Int64",
    **{str(m.live): m.live_dtype for m in MEASURES if m.live},
}

_SUMMARY_SQL: Final = _summary_sql()


def cluster_summary(
    frame: pd.DataFrame,
    *,
    idle_threshold: float | None = None,
    params: Params | None = None,
    gpus: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per cluster: what it runs, what it costs, how busy its GPUs are.

    Columns: ``pods``; ``pods_provisioning``, ``pods_starting``, ``pods_running``,
    ``pods_exited``, ``pods_error``, ``pods_terminated`` and ``pods_other_status``
    (any other or no status) by lifecycle state; ``pods_reporting`` (with runtime
    metrics); ``running_without_metrics`` (``RUNNING`` pods without the metric of their kind:
    GPU utilization on GPU pods, CPU utilization on the others);
    ``gpus``; ``gpu_util_mean`` (percent, mean
    over every reporting GPU); ``gpu_util_cost_weighted`` (pods' mean GPU
    utilization weighted by their cost: what the money buys); ``idle_pods`` (the
    registry's ``idle_pod_hours``, live); then the registry's live measures (:data:`ccanalytics.measures.MEASURES`, the docs'
    measures page): ``cost_per_hour`` and ``gpu_cost_per_hour`` (USD per hour; an
    ``EXITED`` pod costs 0.0 and adds nothing), ``idle_gpus``, ``idle_cost_per_hour``
    (see :func:`idle_pods`), ``unused_cost_per_hour`` (the sum over running GPU pods
    reporting utilization of ``cost * (1 - gpu_util_mean / 100)``: the part of the
    GPU spend no work uses, idle pods included), ``idle_cost_share`` (idle cost over
    all cost, 0-1), ``idle_gpu_cost_share`` (idle cost over GPU cost, 0-1; the column
    was ``idle_share``), ``judged_pods``, ``reporting_gpus``, ``used_gpus`` (GPUs
    reporting times their utilization) and ``gpu_utilization`` (their quotient, 0-1,
    weighted by the GPUs reporting, all of a pod's when its count is unknown) and
    ``stragglers`` (:func:`stragglers`, at the same thresholds);
    then the waste classes in USD per hour (``idle_empty_cost_per_hour``,
    ``idle_loaded_cost_per_hour``, ``straggler_cost_per_hour``,
    ``idle_gpus_cost_per_hour``, ``low_compute_cost_per_hour``: a pod is in one class at
    most, see :mod:`ccanalytics.measures.rules`). The idle GPUs of a busy pod are read
    from ``gpus``, the GPU frame of the same listing (:func:`ccanalytics.gpus_frame`);
    without it they are unknown, that class is 0 and such a pod is judged on its mean.
    """
    _require(
        frame, ["cluster_id", "cost", "gpu_count", "gpu_util_mean", "gpu_util_max", "cpu_util"]
    )
    judged_by = _params(params, idle_threshold=idle_threshold)
    return _run(frame, _SUMMARY_SQL, judged_by, _SUMMARY_DTYPES, gpus)


_BY_GPU_DTYPES: Final = {
    "gpu_type": "string",
    "pods": "Int64",
    "gpus": "Int64",
    "cost_per_hour": "Float64",
    "list_cost_per_gpu_hour": "Float64",
    "gpu_util_mean": "Float64",
    "utilized_gpus": "Float64",
    "cost_per_utilized_gpu_hour": "Float64",
}

_BY_GPU_SQL: Final = f"""
SELECT gpu_type, count(*) AS pods, sum(CAST(gpu_count AS DOUBLE)) AS gpus,
       sum(coalesce(cost, 0)) AS cost_per_hour,
       sum(coalesce(cost, 0)) / nullif(sum(CAST(gpu_count AS DOUBLE)), 0)
         AS list_cost_per_gpu_hour,
       sum(gpu_util_mean * gpu_count) / nullif(sum(CAST(gpu_count AS DOUBLE)), 0)
         AS gpu_util_mean,
       sum(gpu_count * gpu_util_mean / 100.0) AS utilized_gpus,
       sum(coalesce(cost, 0)) / nullif(sum(gpu_count * gpu_util_mean / 100.0), 0)
         AS cost_per_utilized_gpu_hour
FROM frame WHERE {rules.JUDGED_SQL} AND gpu_type IS NOT NULL
GROUP BY gpu_type ORDER BY cost_per_hour DESC, gpu_type"""


def cost_per_gpu_hour(frame: pd.DataFrame) -> pd.DataFrame:
    """By GPU type, over running GPU pods that report utilization: what a GPU-hour of work costs.

    Every column of a row describes the same pods: the GPU pods of that type that are
    running and report GPU utilization (pods without metrics, or not running, are
    left out, since their utilization is unknown). ``pods``, ``gpus``,
    ``cost_per_hour`` (USD per hour), ``list_cost_per_gpu_hour`` (cost over GPUs),
    ``gpu_util_mean`` (percent, weighted by GPU count), ``utilized_gpus`` (the sum of
    ``gpu_count * util / 100``: how many GPUs' worth of work they do) and
    ``cost_per_utilized_gpu_hour`` (cost over utilized GPUs: the price actually paid
    for one GPU-hour of work, which idle GPUs push above the list price).
    """
    _require(frame, ["gpu_type", "gpu_count", "gpu_util_mean", "cost"])
    return _run(frame, _BY_GPU_SQL, Params(), _BY_GPU_DTYPES)


_POD_DTYPES: Final = {
    "running": "boolean",
    "judged": "boolean",
    "idle": "boolean",
    "straggler": "boolean",
    "without_metrics": "boolean",
    "unused_cost_per_hour": "Float64",
}

_PODS_SQL: Final = f"""WITH {_STRAGGLER_CTES}
SELECT f._row, coalesce(f.status = 'RUNNING', FALSE) AS running,
       coalesce({rules.JUDGED_SQL}, FALSE) AS judged,
       coalesce({rules.IDLE_SQL}, FALSE) AS idle,
       coalesce(j.flagged, FALSE) AS straggler,
       {_WITHOUT_METRICS} AS without_metrics,
       CASE WHEN {rules.JUDGED_SQL} THEN coalesce({rules.UNUSED_COST_SQL}, 0) ELSE 0 END
         AS unused_cost_per_hour
FROM frame f LEFT JOIN (SELECT _row, flagged FROM judged) j USING (_row)
ORDER BY _row"""


def judge_pods(frame: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """Each pod of ``frame`` judged by the rules, on ``frame``'s index (for the report, plots).

    Boolean columns ``running`` (status ``RUNNING``, GPU or not), ``judged`` (a running
    GPU pod reporting utilization), ``idle``, ``straggler`` (:func:`stragglers`' rows),
    ``without_metrics`` (no metric of its kind) and ``unused_cost_per_hour`` (0 unless
    judged), at ``params``'s thresholds.
    """
    out = _run(frame, _PODS_SQL, params or Params(), _POD_DTYPES)
    out.index = frame.index
    return out


def _forwarded(function: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
    """``function`` as a method of :class:`CCAccessor`: called with the accessor's frame
    first, with the function's name, docstring and signature (the frame left out), so
    ``help(df.cc.idle_pods)`` reads as ``help(idle_pods)`` and the two cannot drift."""

    def method(self: CCAccessor, /, *args: Any, **kwargs: Any) -> pd.DataFrame:
        # The function's own checks, errors and warnings (which name the caller's line).
        return function(self._frame, *args, **kwargs)

    functools.update_wrapper(method, function)  # __doc__, __name__, __wrapped__, ...
    signature = inspect.signature(function)
    itself = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    rest = list(signature.parameters.values())[1:]
    method.__signature__ = signature.replace(parameters=[itself, *rest])  # type: ignore[attr-defined]
    return method


#: The columns every forwarded function reads between them: the accessor checks them once.
_ACCESSOR_COLUMNS: Final = (
    "cluster_id",
    "pod_id",
    "rank",
    "cost",
    "gpu_type",
    "gpu_count",
    "gpu_util_mean",
    "gpu_util_max",
    "cpu_util",
)


@pd.api.extensions.register_dataframe_accessor("cc")
class CCAccessor:
    """This module's functions as methods of a pods frame: ``df.cc.idle_pods()``.

    Each method forwards to the function of its name (:data:`FORWARDED`) with the frame
    first, and has its signature and docstring, generated from it:
    :meth:`cluster_summary`, :meth:`idle_pods`, :meth:`stragglers` and
    :meth:`cost_per_gpu_hour`. Shorter aliases, the same methods: ``summary`` =
    ``cluster_summary``, ``idle`` = ``idle_pods``, ``cost_by_gpu_type`` =
    ``cost_per_gpu_hour``. The frame is checked once, when the accessor is made (as
    pandas' own accessors do): one that is not a pods frame has no ``cc``
    (``AttributeError`` naming the missing columns).
    """

    #: The functions forwarded, by name (each a method of that name).
    FORWARDED: Final = ("cluster_summary", "idle_pods", "stragglers", "cost_per_gpu_hour")

    def __init__(self, frame: pd.DataFrame) -> None:
        missing = [c for c in _ACCESSOR_COLUMNS if c not in frame.columns]
        if missing:
            raise AttributeError(_not_a(_A_PODS_FRAME, missing))
        self._frame = frame

    def __repr__(self) -> str:
        frame = self._frame
        clusters = frame["cluster_id"].nunique()
        pods = f"{len(frame)} pod{'' if len(frame) == 1 else 's'}"
        methods = ", ".join(f".cc.{name}()" for name in self.FORWARDED)
        return (
            f"<ccanalytics accessor on {pods} in {clusters} cluster{'' if clusters == 1 else 's'}: "
            f"{methods}>"
        )

    cluster_summary = _forwarded(cluster_summary)
    idle_pods = _forwarded(idle_pods)
    stragglers = _forwarded(stragglers)
    cost_per_gpu_hour = _forwarded(cost_per_gpu_hour)

    # Documented aliases (the names the README has used).
    summary = cluster_summary
    idle = idle_pods
    cost_by_gpu_type = cost_per_gpu_hour


def cc(frame: pd.DataFrame) -> CCAccessor:
    """``frame.cc``, typed: the same accessor object, for code a type checker reads.

    pandas-stubs cannot declare an accessor registered at run time, so to mypy and
    pyright ``frame.cc`` is whatever any unknown attribute is (a ``Series``) and a
    misspelled method passes; ``cc(frame).idle_pods()`` is checked. Raises
    ``AttributeError`` for a frame that is not a pods frame, as ``frame.cc`` does.
    """
    accessor: CCAccessor = getattr(frame, "cc")  # noqa: B009 (the stubs type .cc as a Series)
    return accessor

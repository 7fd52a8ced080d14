"""Per cluster, in one pass: pods by state, GPUs, utilization, and every live measure."""

from __future__ import annotations

from typing import Final

import pandas as pd

from ccanalytics.analysis._pods import STRAGGLER_CTES
from ccanalytics.analysis._run import GPUS, params_of, require, run
from ccanalytics.measures import MEASURES, Params, rules, sum_where

__all__ = ["POD_STATES", "cluster_summary"]

#: A pod's lifecycle states, in the order a pod goes through them (provider notes).
POD_STATES: Final = ("PROVISIONING", "STARTING", "RUNNING", "EXITED", "ERROR", "TERMINATED")


def _count(where: str) -> str:
    """``count(*) FILTER (WHERE where)``, in the aggregate's one pass (as
    :func:`~ccanalytics.measures.sum_where` writes a sum)."""
    return f"count(CASE WHEN {where} THEN 1 END)"


_STATE_COUNTS: Final = ",\n       ".join(
    _count(f"status = '{state}'") + f" AS pods_{state.lower()}" for state in POD_STATES
)
_OTHER_STATES: Final = ", ".join(f"'{state}'" for state in POD_STATES)

#: The registry's measures the live summary carries (per hour), in the registry's order.
_LIVE_SUMS: Final = tuple(m for m in MEASURES if m.kind == "sum" and m.live)
#: The waste classes and their sum, per hour, over the pod rows :func:`rules.waste_ctes` completes.
_LIVE_WASTE: Final = tuple(m for m in MEASURES if m.kind == "waste" and m.live)
_LIVE_SHARES: Final = tuple(m for m in MEASURES if m.kind == "share" and m.live)


def _summary_sql() -> str:
    """The per-cluster counts, and every live measure of the registry, in one pass."""
    weight = f"CAST({rules.UTIL_WEIGHT_SQL} AS DOUBLE)"  # the registry's gpu_utilization's
    judged = rules.JUDGED_SQL
    other = _count(f"status IS NULL OR status NOT IN ({_OTHER_STATES})")
    sums = ",\n       ".join(f"coalesce({m.sql_sum(case=True)}, 0) AS {m.live}" for m in _LIVE_SUMS)
    live = {m.name: m.live for m in (*_LIVE_SUMS, *_LIVE_WASTE)}
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
    return f"""WITH {STRAGGLER_CTES},
{rules.waste_ctes("frame", GPUS, "cluster_id, pod_id", "_row")},
sums AS (
SELECT cluster_id, count(*) AS pods,
       {_STATE_COUNTS},
       {other} AS pods_other_status,
       {_count("gpu_util_mean IS NOT NULL OR cpu_util IS NOT NULL")} AS pods_reporting,
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
    metrics); ``gpus``; ``gpu_util_mean`` (percent, mean
    over every reporting GPU); ``gpu_util_cost_weighted`` (pods' mean GPU
    utilization weighted by their cost: what the money buys); then the registry's live
    measures (:data:`ccanalytics.measures.MEASURES`, the docs'
    measures page): ``cost_per_hour`` and ``gpu_cost_per_hour`` (USD per hour; an
    ``EXITED`` pod costs 0.0 and adds nothing), ``idle_gpus``, ``idle_cost_per_hour``
    (see :func:`idle_pods`), ``unused_cost_per_hour`` (the sum over running GPU pods
    reporting utilization of ``cost * (1 - gpu_util_mean / 100)``: the part of the
    GPU spend no work uses, idle pods included), ``memory_risk_pods``, ``saturated_pods``,
    ``running_without_metrics`` (``RUNNING`` pods without the metric of their kind: GPU
    utilization on GPU pods, CPU utilization on the others), ``pods_not_running`` (any
    other status, or none), ``idle_pods`` (the registry's ``idle_pod_hours``, live),
    ``judged_pods``, ``reporting_gpus``, ``used_gpus`` (GPUs reporting times their
    utilization), ``gpu_utilization`` (their quotient, 0-1, weighted by the GPUs
    reporting, all of a pod's when its count is unknown), ``idle_cost_share`` (idle cost over
    all cost, 0-1), ``idle_gpu_cost_share`` (idle cost over GPU cost, 0-1; the column
    was ``idle_share``) and ``stragglers`` (:func:`stragglers`, at the same thresholds);
    then the waste classes in USD per hour (``idle_empty_cost_per_hour``,
    ``idle_loaded_cost_per_hour``, ``straggler_cost_per_hour``,
    ``idle_gpus_cost_per_hour``, ``low_compute_cost_per_hour``: a pod is in one class at
    most, see :mod:`ccanalytics.measures.rules`). The idle GPUs of a busy pod are read
    from ``gpus``, the GPU frame of the same listing (:func:`ccanalytics.gpus_frame`);
    without it they are unknown, that class is 0 and such a pod is judged on its mean.
    """
    require(frame, ["cluster_id", "cost", "gpu_count", "gpu_util_mean", "gpu_util_max", "cpu_util"])
    judged_by = params_of(params, idle_threshold=idle_threshold)
    return run(frame, _SUMMARY_SQL, judged_by, _SUMMARY_DTYPES, gpus)

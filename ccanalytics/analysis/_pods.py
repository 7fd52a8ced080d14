"""The per-pod answers: idle pods, straggling ranks, and each pod judged by the rules."""

from __future__ import annotations

from typing import Final

import pandas as pd

from ccanalytics.analysis._run import params_of, require, run
from ccanalytics.measures import POD_IDENTITY, Params, idle_threshold_given, rules, threshold

__all__ = [
    "DEFAULT_IDLE_THRESHOLD",
    "DEFAULT_STRAGGLER_MIN_GAP",
    "DEFAULT_STRAGGLER_Z",
    "MIN_RANKS_FOR_STRAGGLERS",
    "STRAGGLER_CTES",
    "idle_pods",
    "judge_pods",
    "stragglers",
]

#: A GPU pod is idle when its busiest GPU is below this utilization (percent).
DEFAULT_IDLE_THRESHOLD: Final = threshold("idle_threshold").default
#: A rank straggles when its robust z-score is below minus this...
DEFAULT_STRAGGLER_Z: Final = threshold("z").default
#: ...and it is at least this many utilization points below its cluster's median
#: (so a perfectly uniform cluster, whose MAD is ~0, does not flag noise).
DEFAULT_STRAGGLER_MIN_GAP: Final = threshold("min_gap").default
#: Fewer ranks reporting than this, and "typical" has no meaning.
MIN_RANKS_FOR_STRAGGLERS: Final = rules.MIN_RANKS_FOR_STRAGGLERS

_IDLE_DTYPES: Final = {
    **POD_IDENTITY,
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
    require(frame, ["cluster_id", "pod_id", "gpu_count", "gpu_util_max", "cost"])
    if threshold is not None:
        idle_threshold = idle_threshold_given(idle_threshold, threshold)
    judged_by = params_of(params, idle_threshold=idle_threshold)
    return run(frame, _IDLE_SQL, judged_by, _IDLE_DTYPES)


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
STRAGGLER_CTES: Final = rules.straggler_ctes("frame", "cluster_id", ", _row")
_STRAGGLERS_SQL: Final = f"""WITH {STRAGGLER_CTES}
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
    require(frame, ["cluster_id", "rank", "pod_id", "gpu_util_mean", "gpu_util_max", "gpu_count"])
    judged_by = params_of(params, z=z, min_gap=min_gap, idle_threshold=idle_threshold)
    return run(frame, _STRAGGLERS_SQL, judged_by, _STRAGGLER_DTYPES)


_POD_DTYPES: Final = {
    "running": "boolean",
    "judged": "boolean",
    "idle": "boolean",
    "straggler": "boolean",
    "without_metrics": "boolean",
    "unused_cost_per_hour": "Float64",
}

_PODS_SQL: Final = f"""WITH {STRAGGLER_CTES}
SELECT f._row, coalesce(f.status = 'RUNNING', FALSE) AS running,
       coalesce({rules.JUDGED_SQL}, FALSE) AS judged,
       coalesce({rules.IDLE_SQL}, FALSE) AS idle,
       coalesce(j.flagged, FALSE) AS straggler,
       {rules.WITHOUT_METRICS_SQL} AS without_metrics,
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
    out = run(frame, _PODS_SQL, params or Params(), _POD_DTYPES)
    out.index = frame.index
    return out

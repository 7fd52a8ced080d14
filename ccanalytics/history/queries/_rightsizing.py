"""Right-sizing hints over a window: "fits on fewer GPUs", "fits a cheaper GPU type".

Two questions per pod, from what the store saw while the pod ran and reported
utilization (its pod rows whose snapshot covers some of the window, and the per-GPU
rows of those snapshots):

- **fewer GPUs**: how many of its GPUs stayed below the idle line in *every* snapshot
  (``always_idle``). It fits on ``gpu_count - always_idle`` GPUs, but never fewer than
  one nor fewer than its peak memory needs: the largest sum over its GPUs of memory in
  use in one snapshot (``peak_total_memory_gb``), plus ``headroom``, over one GPU's
  memory.
- **a cheaper type**: only for a pod doing little (its time-weighted mean GPU
  utilization below ``low_compute_threshold``: a busy pod on a slower type would run
  slower, and memory says nothing of that). A type fits when one of its GPUs holds the
  pod's fullest GPU at its peak (``peak_memory_gb``) plus ``headroom``; of the types
  that fit and cost less per GPU-hour than the pod paid, the cheapest.

Memory is sent in percent of a GPU; GB is that share of the type's memory from the
table of GPU types (:func:`ccanalytics.measures.gpu_types`); a type missing from the
table, or a pod that never reported its GPU memory, gets no hint (nothing would prove
the fit). A type's price is what the store observed it cost in the window: Σ cost·Δt /
Σ gpu_count·Δt over running pods of that type (USD per GPU-hour); a type the store did
not see has no price and is never suggested. A month is :data:`HOURS_PER_MONTH` hours
at the pod's own cost per hour while it ran.
"""

from __future__ import annotations

import math
from typing import Any, Final

import pandas as pd

from ccanalytics.history.queries._accounting import (
    JUDGED,
    US_PER_HOUR,
    max_gap_us,
    run,
    us_scaled,
    window_us,
)
from ccanalytics.history.queries._queries import pod_rows_ctes
from ccanalytics.measures import Params
from ccanalytics.measures.rules import DAYS_PER_MONTH, RIGHTSIZING_HEADROOM

__all__ = ["DEFAULT_HEADROOM", "HOURS_PER_MONTH", "RIGHTSIZING_COLUMNS", "hints", "rightsizing"]

#: The monthly saving counts the rules' month (30 days), as the report's projections.
HOURS_PER_MONTH: Final = DAYS_PER_MONTH * 24
#: Memory kept free on top of the observed peak (the rule's default, in measures.rules).
DEFAULT_HEADROOM: Final = RIGHTSIZING_HEADROOM

RIGHTSIZING_COLUMNS: Final = {
    "cluster_id": "string",
    "pod_id": "string",
    "name": "string",
    "gpu_type": "string",
    "gpu_count": "Int64",
    "suggested_type": "string",
    "suggested_count": "Int64",
    "monthly_saving": "Float64",
    "reason": "string",
    "peak_memory_gb": "Float64",
    "peak_total_memory_gb": "Float64",
    "gpu_util_mean": "Float64",
    "observed_hours": "Float64",
}

_RUNNING = f"""{pod_rows_ctes()},
    running AS MATERIALIZED (SELECT * FROM pod_rows WHERE {JUDGED} AND covered_us > 0)"""

_PODS_SQL = f"""{_RUNNING},
    gpu_rows AS (
        SELECT cluster_id, observed_at, pod_id, gpu_index,
               max(util) AS util, max(memory_util) AS memory_util
        FROM gpus SEMI JOIN running USING (cluster_id, observed_at, pod_id)
        WHERE observed_at >= make_timestamptz((SELECT min(t) FROM running))
          AND observed_at <= make_timestamptz((SELECT max(t) FROM running))
        GROUP BY cluster_id, observed_at, pod_id, gpu_index
    ),
    per_pod AS (
        SELECT cluster_id, pod_id, arg_max(name, t) AS name,
               arg_max(gpu_type, t) AS gpu_type, arg_max(gpu_count, t) AS gpu_count,
               count(DISTINCT gpu_type) AS types, count(DISTINCT gpu_count) AS counts,
               count(*) AS snapshots, sum(covered_us) AS running_us,
               sum(coalesce(cost, 0) * {us_scaled("covered_us")})
                   / sum({us_scaled("covered_us")}) AS cost_per_hour,
               sum(gpu_util_mean * covered_us) / sum(covered_us) AS gpu_util_mean,
               max(gpu_mem_util_max) AS peak_memory_pct
        FROM running GROUP BY cluster_id, pod_id
    ),
    per_gpu AS (
        SELECT cluster_id, pod_id, gpu_index, max(util) AS util_max, count(util) AS readings
        FROM gpu_rows GROUP BY cluster_id, pod_id, gpu_index
    ),
    per_snapshot AS (
        SELECT cluster_id, pod_id, sum(memory_util) AS memory_sum
        FROM gpu_rows GROUP BY cluster_id, observed_at, pod_id
    ),
    idle AS (
        SELECT g.cluster_id, g.pod_id, count(*) AS always_idle
        FROM per_gpu g JOIN per_pod p USING (cluster_id, pod_id)
        WHERE g.readings = p.snapshots AND g.util_max < $idle_threshold
        GROUP BY g.cluster_id, g.pod_id
    ),
    memory AS (
        SELECT cluster_id, pod_id, max(memory_sum) AS peak_total_pct
        FROM per_snapshot GROUP BY cluster_id, pod_id
    )
    SELECT p.*, coalesce(i.always_idle, 0) AS always_idle, m.peak_total_pct
    FROM per_pod p LEFT JOIN idle i USING (cluster_id, pod_id)
    LEFT JOIN memory m USING (cluster_id, pod_id)
    ORDER BY cluster_id, pod_id"""

#: USD per GPU-hour each GPU type was observed to cost in the window.
_PRICES_SQL = f"""{_RUNNING}
    SELECT gpu_type,
           sum(cost * {us_scaled("covered_us")}) / sum(gpu_count * {us_scaled("covered_us")})
               AS usd_per_gpu_hour
    FROM running WHERE gpu_type IS NOT NULL AND cost > 0
    GROUP BY gpu_type ORDER BY gpu_type"""


def rightsizing(
    con: Any,
    start: Any,
    end: Any,
    *,
    memory: dict[str, float],
    headroom: float = DEFAULT_HEADROOM,
    params: Params | None = None,
    max_gap: Any = None,
) -> pd.DataFrame:
    """The hints over ``[start, end)`` (see the module docstring), largest saving first.

    ``memory``: GB per GPU by type (:func:`ccanalytics.measures.gpu_types`). Columns
    :data:`RIGHTSIZING_COLUMNS`: the pod (``cluster_id, pod_id, name``), its
    ``gpu_type`` and ``gpu_count``, the ``suggested_type`` and ``suggested_count``,
    ``monthly_saving`` (USD per 30 days), ``reason`` (one sentence), the evidence
    (``peak_memory_gb``, ``peak_total_memory_gb``, ``gpu_util_mean``) and the
    ``observed_hours`` it ran. A pod may have one hint of each kind.
    """
    if not (isinstance(headroom, int | float) and math.isfinite(headroom) and headroom >= 0):
        raise ValueError(f"headroom is a share of memory kept free (0 or more), not {headroom!r}")
    judged_by = params if params is not None else Params()
    window = window_us(con, start, end)
    if window is None:
        return _empty()
    sql_params = {
        "start_us": window[0],
        "end_us": window[1],
        "max_gap_us": max_gap_us(max_gap),
        **judged_by.sql(),
    }
    pods = run(con, _PODS_SQL, sql_params)
    prices = run(con, _PRICES_SQL, sql_params)
    price = {
        str(t): float(p)
        for t, p in zip(prices["gpu_type"], prices["usd_per_gpu_hour"], strict=True)
    }
    return hints(pods, price, memory, headroom=headroom, params=judged_by)


def _empty() -> pd.DataFrame:
    return pd.DataFrame(columns=list(RIGHTSIZING_COLUMNS)).astype(RIGHTSIZING_COLUMNS)


def hints(
    pods: pd.DataFrame,
    price: dict[str, float],
    memory: dict[str, float],
    *,
    headroom: float,
    params: Params,
) -> pd.DataFrame:
    """The hints for ``pods`` (one row each, as :data:`_PODS_SQL` gives them)."""
    out: list[dict[str, Any]] = []
    rows: Any = pods.itertuples(index=False)
    for pod in rows:
        gpu_type = None if pd.isna(pod.gpu_type) else str(pod.gpu_type)
        if (
            gpu_type not in memory
            or pod.types != 1
            or pod.counts != 1
            or pd.isna(pod.peak_memory_pct)
            or pd.isna(pod.gpu_count)
            or int(pod.gpu_count) < 1
            or not pod.running_us > 0
        ):
            continue
        gb, count = memory[str(gpu_type)], int(pod.gpu_count)
        peak = float(pod.peak_memory_pct) / 100 * gb
        total_pct = pod.peak_total_pct
        total = peak * count if pd.isna(total_pct) else float(total_pct) / 100 * gb
        per_hour = float(pod.cost_per_hour)
        base = {
            "cluster_id": pod.cluster_id,
            "pod_id": pod.pod_id,
            "name": pod.name,
            "gpu_type": gpu_type,
            "gpu_count": count,
            "peak_memory_gb": peak,
            "peak_total_memory_gb": total,
            "gpu_util_mean": float(pod.gpu_util_mean),
            "observed_hours": float(pod.running_us) / US_PER_HOUR,
        }
        fewer = _fewer(count, int(pod.always_idle), total, gb, headroom)
        if fewer is not None and per_hour > 0:
            out.append(
                {
                    **base,
                    "suggested_type": gpu_type,
                    "suggested_count": fewer,
                    "monthly_saving": per_hour * (count - fewer) / count * HOURS_PER_MONTH,
                    "reason": (
                        f"{int(pod.always_idle)} of its {count} GPUs stayed below "
                        f"{params.idle_threshold:g}% in every snapshot; its peak memory, "
                        f"{total:,.1f} GB plus {headroom:.0%}, fits on {fewer}"
                    ),
                }
            )
        if float(pod.gpu_util_mean) < params.low_compute_threshold:
            cheaper = _cheaper(str(gpu_type), per_hour / count, peak, price, memory, headroom)
            if cheaper is not None:
                other, other_price = cheaper
                out.append(
                    {
                        **base,
                        "suggested_type": other,
                        "suggested_count": count,
                        "monthly_saving": count
                        * (per_hour / count - other_price)
                        * HOURS_PER_MONTH,
                        "reason": (
                            f"its GPUs averaged {float(pod.gpu_util_mean):.0f}% (under "
                            f"{params.low_compute_threshold:g}%) and its fullest GPU peaked "
                            f"at {peak:,.1f} GB: {other} holds {memory[other]:g} GB "
                            f"(peak plus {headroom:.0%}) at {other_price:,.2f} USD per "
                            f"GPU-hour, against {per_hour / count:,.2f}"
                        ),
                    }
                )
    if not out:
        return _empty()
    frame = pd.DataFrame(out)[list(RIGHTSIZING_COLUMNS)].astype(RIGHTSIZING_COLUMNS)
    return frame.sort_values(
        ["monthly_saving", "cluster_id", "pod_id"], ascending=[False, True, True], kind="stable"
    ).reset_index(drop=True)


def _fewer(count: int, always_idle: int, total_gb: float, gb: float, headroom: float) -> int | None:
    """The GPUs a pod fits on, fewer than ``count``; None when it needs them all."""
    needed = math.ceil(total_gb * (1 + headroom) / gb) if total_gb > 0 else 1
    fewer = max(count - always_idle, needed, 1)
    return fewer if fewer < count else None


def _cheaper(
    gpu_type: str,
    paid: float,
    peak_gb: float,
    price: dict[str, float],
    memory: dict[str, float],
    headroom: float,
) -> tuple[str, float] | None:
    """The cheapest type (observed price) whose one GPU holds ``peak_gb`` plus headroom."""
    fits = [
        (price[other], other)
        for other, gb in memory.items()
        if other != gpu_type
        and other in price
        and gb >= peak_gb * (1 + headroom)
        and price[other] < paid
    ]
    if not fits:
        return None
    cost, other = min(fits)
    return other, cost

"""Answers to the questions people open a notebook for, from a pods frame.

Every function takes the frame :func:`ccanalytics.pods_frame` (or
:func:`ccanalytics.load_cluster_pods`) returns and gives a new, small frame:

- :func:`cluster_summary`: per cluster, pods, GPUs, cost per hour, mean and
  cost-weighted GPU utilization, and the share of GPU spend that is idle;
- :func:`idle_pods`: paid-for GPU pods whose every GPU is below a utilization
  threshold, with the cost per hour they waste;
- :func:`stragglers`: ranks whose GPU utilization falls well below their
  cluster's typical rank, judged by a robust statistic (median and MAD);
- :func:`cost_per_gpu_hour`: by GPU type, what one *utilized* GPU-hour costs.

Utilization is in percent (0-100) and ``cost`` is the pod's price per hour, as in
the pods frame (the spec does not state units; see :data:`ccanalytics.frames.POD_COLUMNS`).
Pods without runtime metrics (pending, starting, exited) cannot be judged idle or
straggling: they are counted in the summary but never flagged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "DEFAULT_IDLE_THRESHOLD",
    "DEFAULT_STRAGGLER_MIN_GAP",
    "DEFAULT_STRAGGLER_Z",
    "cluster_summary",
    "cost_per_gpu_hour",
    "idle_pods",
    "stragglers",
]

#: A GPU pod is idle when its busiest GPU is below this utilization (percent).
DEFAULT_IDLE_THRESHOLD = 10.0
#: A rank straggles when its robust z-score is below minus this...
DEFAULT_STRAGGLER_Z = 3.5
#: ...and it is at least this many utilization points below its cluster's median
#: (so a perfectly uniform cluster, whose MAD is ~0, does not flag noise).
DEFAULT_STRAGGLER_MIN_GAP = 10.0
#: Fewer ranks reporting than this, and "typical" has no meaning.
MIN_RANKS_FOR_STRAGGLERS = 4

_MAD_SCALE = 0.6745  # makes MAD-based z comparable to a standard z for normal data


def _require(frame: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"expected a pods frame (ccanalytics.pods_frame); missing columns: {missing}"
        )


def _has_gpus(frame: pd.DataFrame) -> pd.Series:
    return frame["gpu_count"].fillna(0).gt(0)


def _reporting(frame: pd.DataFrame) -> pd.Series:
    return frame["gpu_util_mean"].notna()


def idle_pods(frame: pd.DataFrame, *, threshold: float = DEFAULT_IDLE_THRESHOLD) -> pd.DataFrame:
    """GPU pods that are paid for while every GPU is below ``threshold`` percent.

    Returns one row per idle pod, most expensive first, with ``cluster_id, pod_id,
    name, rank, gpu_type, gpu_count, gpu_util_mean, gpu_util_max, cost`` and
    ``wasted_cost_per_hour`` (the pod's whole cost: an idle GPU pod buys nothing).
    """
    _require(frame, ["cluster_id", "pod_id", "gpu_count", "gpu_util_max", "cost"])
    if not 0 <= threshold <= 100:
        raise ValueError("threshold is a utilization in percent (0-100)")
    mask = _has_gpus(frame) & frame["gpu_util_max"].lt(threshold).fillna(False)
    cols = [
        "cluster_id",
        "pod_id",
        "name",
        "rank",
        "gpu_type",
        "gpu_count",
        "gpu_util_mean",
        "gpu_util_max",
        "cost",
    ]
    out = frame.loc[mask, [c for c in cols if c in frame.columns]].copy()
    out["wasted_cost_per_hour"] = out["cost"].fillna(0.0).astype("Float64")
    return out.sort_values(
        ["wasted_cost_per_hour", "cluster_id"], ascending=[False, True]
    ).reset_index(drop=True)


def stragglers(
    frame: pd.DataFrame,
    *,
    z: float = DEFAULT_STRAGGLER_Z,
    min_gap: float = DEFAULT_STRAGGLER_MIN_GAP,
    idle_threshold: float = DEFAULT_IDLE_THRESHOLD,
) -> pd.DataFrame:
    """Ranks whose mean GPU utilization is far below their cluster's typical rank.

    Per cluster, over GPU pods that report utilization, have a rank, and are not
    idle (idle pods, every GPU below ``idle_threshold``, are what :func:`idle_pods`
    reports: a rank doing nothing is not slow, it is stuck or forgotten; pass
    ``idle_threshold=0`` to judge them here too): the
    median of ``gpu_util_mean`` and its median absolute deviation (MAD). A rank
    straggles when ``0.6745 * (util - median) / MAD < -z`` *and* it is at least
    ``min_gap`` points below the median. With MAD 0 (all other ranks equal) the
    gap alone decides. Robust: one slow rank cannot drag the median or MAD toward
    itself as it would a mean and standard deviation.

    Returns ``cluster_id, rank, pod_id, name, gpu_util_mean, cluster_median,
    deficit`` (points below the median) and ``robust_z``, worst first.
    """
    _require(frame, ["cluster_id", "rank", "pod_id", "gpu_util_mean", "gpu_util_max", "gpu_count"])
    busy = frame["gpu_util_max"].ge(idle_threshold).fillna(False)
    usable = frame[_has_gpus(frame) & _reporting(frame) & frame["rank"].notna() & busy]
    rows: list[dict[str, Any]] = []
    for cluster_id, group in usable.groupby("cluster_id", sort=True):
        if len(group) < MIN_RANKS_FOR_STRAGGLERS:
            continue
        util = group["gpu_util_mean"].astype("float64").to_numpy()
        median = float(np.median(util))
        mad = float(np.median(np.abs(util - median)))
        for (_, pod), value in zip(group.iterrows(), util, strict=True):
            deficit = median - value
            robust_z = (
                _MAD_SCALE * (value - median) / mad
                if mad > 0
                else (-np.inf if deficit > 0 else 0.0)
            )
            if deficit >= min_gap and robust_z < -z:
                rows.append(
                    {
                        "cluster_id": cluster_id,
                        "rank": pod["rank"],
                        "pod_id": pod["pod_id"],
                        "name": pod.get("name", pd.NA),
                        "gpu_util_mean": value,
                        "cluster_median": median,
                        "deficit": deficit,
                        "robust_z": robust_z,
                    }
                )
    out = pd.DataFrame(
        rows,
        columns=[
            "cluster_id",
            "rank",
            "pod_id",
            "name",
            "gpu_util_mean",
            "cluster_median",
            "deficit",
            "robust_z",
        ],
    )
    out = out.astype(
        {
            "cluster_id": "string",
            "rank": "Int64",
            "pod_id": "string",
            "name": "string",
            "gpu_util_mean": "Float64",
            "cluster_median": "Float64",
            "deficit": "Float64",
            "robust_z": "Float64",
        }
    )
    return out.sort_values("deficit", ascending=False).reset_index(drop=True)


def cluster_summary(
    frame: pd.DataFrame, *, idle_threshold: float = DEFAULT_IDLE_THRESHOLD
) -> pd.DataFrame:
    """One row per cluster: what it runs, what it costs, how busy its GPUs are.

    Columns: ``pods``, ``pods_reporting`` (with runtime metrics), ``gpus``,
    ``cost_per_hour``, ``gpu_cost_per_hour``, ``gpu_util_mean`` (mean over every
    reporting GPU), ``gpu_util_cost_weighted`` (pods' mean GPU utilization weighted
    by their cost: what the money buys), ``idle_pods``, ``idle_cost_per_hour`` and
    ``idle_share`` (idle cost over GPU cost, 0-1), ``stragglers``.
    """
    _require(
        frame, ["cluster_id", "cost", "gpu_count", "gpu_util_mean", "gpu_util_max", "cpu_util"]
    )
    idle = idle_pods(frame, threshold=idle_threshold)
    slow = stragglers(frame, idle_threshold=idle_threshold)
    rows = []
    for cluster_id, group in frame.groupby("cluster_id", sort=True):
        gpu_pods = group[_has_gpus(group)]
        cost = group["cost"].fillna(0.0).astype("float64")
        gpu_cost = float(gpu_pods["cost"].fillna(0.0).sum())
        reporting = gpu_pods[_reporting(gpu_pods)]
        n_reporting = (
            reporting.get("gpus_reporting", reporting["gpu_count"]).fillna(0).astype("float64")
        )
        util = reporting["gpu_util_mean"].astype("float64")
        weights = reporting["cost"].fillna(0.0).astype("float64")
        cluster_idle = idle[idle["cluster_id"] == cluster_id]
        idle_cost = float(cluster_idle["wasted_cost_per_hour"].sum())
        rows.append(
            {
                "cluster_id": cluster_id,
                "pods": len(group),
                "pods_reporting": int(
                    (group["gpu_util_mean"].notna() | group["cpu_util"].notna()).sum()
                ),
                "gpus": int(group["gpu_count"].fillna(0).sum()),
                "cost_per_hour": float(cost.sum()),
                "gpu_cost_per_hour": gpu_cost,
                "gpu_util_mean": float(np.average(util, weights=n_reporting))
                if n_reporting.sum() > 0
                else np.nan,
                "gpu_util_cost_weighted": float(np.average(util, weights=weights))
                if weights.sum() > 0
                else np.nan,
                "idle_pods": len(cluster_idle),
                "idle_cost_per_hour": idle_cost,
                "idle_share": idle_cost / gpu_cost if gpu_cost > 0 else np.nan,
                "stragglers": int((slow["cluster_id"] == cluster_id).sum()),
            }
        )
    out = pd.DataFrame(rows, columns=list(_SUMMARY_DTYPES))
    return out.astype(_SUMMARY_DTYPES)


_SUMMARY_DTYPES = {
    "cluster_id": "string",
    "pods": "Int64",
    "pods_reporting": "Int64",
    "gpus": "Int64",
    "cost_per_hour": "Float64",
    "gpu_cost_per_hour": "Float64",
    "gpu_util_mean": "Float64",
    "gpu_util_cost_weighted": "Float64",
    "idle_pods": "Int64",
    "idle_cost_per_hour": "Float64",
    "idle_share": "Float64",
    "stragglers": "Int64",
}


def cost_per_gpu_hour(frame: pd.DataFrame) -> pd.DataFrame:
    """By GPU type: GPUs, cost per hour, mean utilization, and cost per *utilized* GPU-hour.

    ``utilized_gpus`` is the sum over reporting pods of ``gpu_count * util / 100``:
    how many GPUs' worth of work the fleet does. ``cost_per_utilized_gpu_hour`` is
    the reporting pods' cost per hour divided by it: the price actually paid for one
    GPU-hour of work, which idle GPUs push above the list price. Pods without
    metrics are excluded from both (their utilization is unknown).
    """
    _require(frame, ["gpu_type", "gpu_count", "gpu_util_mean", "cost"])
    gpu = frame[_has_gpus(frame) & frame["gpu_type"].notna()]
    rows = []
    for gpu_type, group in gpu.groupby("gpu_type", sort=True):
        rep = group[_reporting(group)]
        count = rep["gpu_count"].astype("float64")
        util = rep["gpu_util_mean"].astype("float64")
        utilized = float((count * util / 100.0).sum())
        rep_cost = float(rep["cost"].fillna(0.0).sum())
        rows.append(
            {
                "gpu_type": gpu_type,
                "gpus": int(group["gpu_count"].sum()),
                "cost_per_hour": float(group["cost"].fillna(0.0).sum()),
                "list_cost_per_gpu_hour": rep_cost / count.sum() if count.sum() > 0 else np.nan,
                "gpu_util_mean": float(np.average(util, weights=count))
                if count.sum() > 0
                else np.nan,
                "utilized_gpus": utilized,
                "cost_per_utilized_gpu_hour": rep_cost / utilized if utilized > 0 else np.nan,
            }
        )
    dtypes = {
        "gpu_type": "string",
        "gpus": "Int64",
        "cost_per_hour": "Float64",
        "list_cost_per_gpu_hour": "Float64",
        "gpu_util_mean": "Float64",
        "utilized_gpus": "Float64",
        "cost_per_utilized_gpu_hour": "Float64",
    }
    out = pd.DataFrame(rows, columns=list(dtypes)).astype(dtypes)
    return out.sort_values("cost_per_hour", ascending=False).reset_index(drop=True)


@pd.api.extensions.register_dataframe_accessor("cc")
class CCAccessor:
    """``df.cc.summary()``, ``df.cc.idle()``, ``df.cc.stragglers()``, ``df.cc.cost_by_gpu_type()``.

    A thin shortcut to this module's functions for a pods frame.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    def summary(self, **kw: Any) -> pd.DataFrame:
        return cluster_summary(self._frame, **kw)

    def idle(self, **kw: Any) -> pd.DataFrame:
        return idle_pods(self._frame, **kw)

    def stragglers(self, **kw: Any) -> pd.DataFrame:
        return stragglers(self._frame, **kw)

    def cost_by_gpu_type(self) -> pd.DataFrame:
        return cost_per_gpu_hour(self._frame)

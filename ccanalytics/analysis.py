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
:class:`ccanalytics.history.History` (``ccanalytics._rules``), so a live frame and a
store holding the same snapshot give the same answers.
Every helper is vectorised (one ``groupby`` per question, no per-row Python).
"""

from __future__ import annotations

import warnings
from typing import Final

import numpy as np
import pandas as pd

from ccanalytics import _rules

__all__ = [
    "DEFAULT_IDLE_THRESHOLD",
    "DEFAULT_STRAGGLER_MIN_GAP",
    "DEFAULT_STRAGGLER_Z",
    "MIN_RANKS_FOR_STRAGGLERS",
    "POD_STATES",
    "CCAccessor",
    "cluster_summary",
    "cost_per_gpu_hour",
    "idle_pods",
    "stragglers",
]


def __dir__() -> list[str]:
    # Only the public names: no np, pd or typing helpers in tab completion.
    return sorted(__all__)


#: A GPU pod is idle when its busiest GPU is below this utilization (percent).
DEFAULT_IDLE_THRESHOLD: Final = _rules.IDLE_THRESHOLD
#: A rank straggles when its robust z-score is below minus this...
DEFAULT_STRAGGLER_Z: Final = _rules.STRAGGLER_Z
#: ...and it is at least this many utilization points below its cluster's median
#: (so a perfectly uniform cluster, whose MAD is ~0, does not flag noise).
DEFAULT_STRAGGLER_MIN_GAP: Final = _rules.STRAGGLER_MIN_GAP
#: Fewer ranks reporting than this, and "typical" has no meaning.
MIN_RANKS_FOR_STRAGGLERS: Final = _rules.MIN_RANKS_FOR_STRAGGLERS
#: A pod's lifecycle states, in the order a pod goes through them (provider notes).
POD_STATES: Final = ("PROVISIONING", "STARTING", "RUNNING", "EXITED", "ERROR", "TERMINATED")


def _require(frame: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"expected a pods frame (ccanalytics.pods_frame); missing columns: {missing}"
        )


def _has_gpus(frame: pd.DataFrame) -> pd.Series:
    return frame["gpu_count"].fillna(0).gt(0)


# The report's names for two rules (kept: report/_findings imports them).
_may_be_judged = _rules.status_running
_gpu_reporting = _rules.judged_mask


def _without_metrics(frame: pd.DataFrame) -> pd.Series:
    """Pods with no metric for their kind: GPU utilization on GPU pods, CPU on the others."""
    has_gpus = _has_gpus(frame)
    return (has_gpus & frame["gpu_util_mean"].isna()) | (~has_gpus & frame["cpu_util"].isna())


def _costs(frame: pd.DataFrame) -> pd.Series:
    """Cost per hour as float, a missing cost counting as 0."""
    return frame["cost"].astype("Float64").fillna(0.0).astype("float64")


def idle_pods(
    frame: pd.DataFrame,
    *,
    idle_threshold: float | None = None,
    threshold: float | None = None,
) -> pd.DataFrame:
    """Running GPU pods that are paid for while every GPU is below ``idle_threshold`` percent.

    ``idle_threshold`` defaults to :data:`DEFAULT_IDLE_THRESHOLD` (10 %);
    ``threshold=`` is its old spelling (DeprecationWarning).

    Returns one row per idle pod, most expensive first, with ``cluster_id, pod_id,
    name, rank, gpu_type, gpu_count, gpu_util_mean, gpu_util_max, cost`` (USD per
    hour), ``wasted_cost_per_hour`` (the pod's whole cost: an idle GPU pod buys
    nothing), ``uptime_s`` (seconds since its container started) and
    ``cost_so_far`` (USD: ``cost * uptime_s / 3600``, what it has cost since then;
    ``<NA>`` when the uptime is unknown). Pods that are not ``RUNNING`` are never idle.
    """
    _require(frame, ["cluster_id", "pod_id", "gpu_count", "gpu_util_max", "cost"])
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
        "uptime_s",
    ]
    idle = _rules.idle_mask(frame, _rules.idle_threshold_given(idle_threshold, threshold))
    out = frame.loc[idle, [c for c in cols if c in frame.columns]].copy()
    out["wasted_cost_per_hour"] = out["cost"].astype("Float64").fillna(0.0)
    uptime = out["uptime_s"] if "uptime_s" in out.columns else pd.Series(pd.NA, index=out.index)
    out["uptime_s"] = uptime.astype("Float64")
    out["cost_so_far"] = out["wasted_cost_per_hour"] * out["uptime_s"] / 3600.0
    return out.sort_values(
        ["wasted_cost_per_hour", "cluster_id"], ascending=[False, True], kind="stable"
    ).reset_index(drop=True)


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


def stragglers(
    frame: pd.DataFrame,
    *,
    z: float = DEFAULT_STRAGGLER_Z,
    min_gap: float = DEFAULT_STRAGGLER_MIN_GAP,
    idle_threshold: float = DEFAULT_IDLE_THRESHOLD,
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

    Returns ``cluster_id, rank, pod_id, name, gpu_util_mean, cluster_median,
    deficit`` (points below the median) and ``robust_z``, worst first.
    """
    _require(frame, ["cluster_id", "rank", "pod_id", "gpu_util_mean", "gpu_util_max", "gpu_count"])
    busy = frame["gpu_util_max"].ge(idle_threshold).fillna(False).astype(bool)
    usable = frame.loc[_gpu_reporting(frame) & frame["rank"].notna() & busy]
    usable = usable[usable["cluster_id"].notna()]
    util = usable["gpu_util_mean"].astype("float64")
    by_cluster = util.groupby(usable["cluster_id"], sort=False)
    median = by_cluster.transform("median")
    mad = (util - median).abs().groupby(usable["cluster_id"], sort=False).transform("median")
    deficit = median - util
    robust_z = _rules.robust_z(util, median, mad)
    enough = by_cluster.transform("size") >= MIN_RANKS_FOR_STRAGGLERS
    flagged = enough & _rules.straggler_flags(deficit, robust_z, z=z, min_gap=min_gap)
    out = pd.DataFrame(
        {
            "cluster_id": usable["cluster_id"],
            "rank": usable["rank"],
            "pod_id": usable["pod_id"],
            "name": usable["name"] if "name" in usable.columns else pd.NA,
            "gpu_util_mean": util,
            "cluster_median": median,
            "deficit": deficit,
            "robust_z": robust_z,
        },
        columns=list(_STRAGGLER_DTYPES),
    )[flagged.to_numpy()]
    out = out.astype(_STRAGGLER_DTYPES).sort_values("cluster_id", kind="stable")
    return out.sort_values("deficit", ascending=False, kind="stable").reset_index(drop=True)


_SUMMARY_DTYPES: Final = {
    "cluster_id": "string",
    "pods": "Int64",
    **{f"pods_{state.lower()}": "Int64" for state in POD_STATES},
    "pods_other_status": "Int64",
    "pods_reporting": "Int64",
    "running_without_metrics": "Int64",
    "gpus": "Int64",
    "cost_per_hour": "Float64",
    "gpu_cost_per_hour": "Float64",
    "gpu_util_mean": "Float64",
    "gpu_util_cost_weighted": "Float64",
    "idle_pods": "Int64",
    "idle_cost_per_hour": "Float64",
    "idle_share": "Float64",
    "unused_cost_per_hour": "Float64",
    "stragglers": "Int64",
}


def cluster_summary(
    frame: pd.DataFrame, *, idle_threshold: float = DEFAULT_IDLE_THRESHOLD
) -> pd.DataFrame:
    """One row per cluster: what it runs, what it costs, how busy its GPUs are.

    Columns: ``pods``; ``pods_provisioning``, ``pods_starting``, ``pods_running``,
    ``pods_exited``, ``pods_error``, ``pods_terminated`` and ``pods_other_status``
    (any other or no status) by lifecycle state; ``pods_reporting`` (with runtime
    metrics); ``running_without_metrics`` (``RUNNING`` pods without the metric of their kind:
    GPU utilization on GPU pods, CPU utilization on the others);
    ``gpus``; ``cost_per_hour`` and ``gpu_cost_per_hour`` (USD per hour; an
    ``EXITED`` pod costs 0.0 and adds nothing); ``gpu_util_mean`` (percent, mean
    over every reporting GPU); ``gpu_util_cost_weighted`` (pods' mean GPU
    utilization weighted by their cost: what the money buys); ``idle_pods``,
    ``idle_cost_per_hour`` and ``idle_share`` (idle cost over GPU cost, 0-1; see
    :func:`idle_pods`); ``unused_cost_per_hour`` (the sum over running GPU pods
    reporting utilization of ``cost * (1 - gpu_util_mean / 100)``: the part of the
    GPU spend no work uses, idle pods included); ``stragglers``.
    """
    _require(
        frame, ["cluster_id", "cost", "gpu_count", "gpu_util_mean", "gpu_util_max", "cpu_util"]
    )
    return _cluster_summary(frame, idle_threshold, stragglers(frame, idle_threshold=idle_threshold))


def _cluster_summary(
    frame: pd.DataFrame, idle_threshold: float, slow: pd.DataFrame
) -> pd.DataFrame:
    """:func:`cluster_summary` with the stragglers already found (the report reuses them)."""
    cost = _costs(frame)
    has_gpus = _has_gpus(frame)
    gpu_rep = _gpu_reporting(frame)
    idle = _rules.idle_mask(frame, idle_threshold)
    util = frame["gpu_util_mean"].astype("Float64").fillna(0.0).astype("float64")
    weight = frame["gpus_reporting"] if "gpus_reporting" in frame.columns else frame["gpu_count"]
    n_reporting = weight.astype("Float64").fillna(0.0).astype("float64").where(gpu_rep, 0.0)
    reporting = frame["gpu_util_mean"].notna() | frame["cpu_util"].notna()
    status = frame["status"] if "status" in frame.columns else pd.Series(pd.NA, index=frame.index)
    parts = {
        "pods": pd.Series(1, index=frame.index),
        **{f"pods_{s.lower()}": status.eq(s).fillna(False).astype(int) for s in POD_STATES},
        "pods_other_status": (~status.isin(POD_STATES)).astype(int),
        "pods_reporting": reporting.astype(int),
        "running_without_metrics": (
            status.eq("RUNNING").fillna(False) & _without_metrics(frame)
        ).astype(int),
        "gpus": frame["gpu_count"].astype("Float64").fillna(0).astype("float64"),
        "cost_per_hour": cost,
        "gpu_cost_per_hour": cost.where(has_gpus, 0.0),
        "_util_x_gpus": util * n_reporting,
        "_gpus_reporting": n_reporting,
        "_util_x_cost": (util * cost).where(gpu_rep, 0.0),
        "_cost_reporting": cost.where(gpu_rep, 0.0),
        "idle_pods": idle.astype(int),
        "idle_cost_per_hour": cost.where(idle, 0.0),
        "unused_cost_per_hour": _rules.unused_cost(cost, util, gpu_rep),
    }
    sums = pd.DataFrame(parts).groupby(frame["cluster_id"], sort=True).sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        sums["gpu_util_mean"] = sums["_util_x_gpus"] / sums["_gpus_reporting"].where(
            sums["_gpus_reporting"] > 0
        )
        sums["gpu_util_cost_weighted"] = sums["_util_x_cost"] / sums["_cost_reporting"].where(
            sums["_cost_reporting"] > 0
        )
        sums["idle_share"] = sums["idle_cost_per_hour"] / sums["gpu_cost_per_hour"].where(
            sums["gpu_cost_per_hour"] > 0
        )
    sums["stragglers"] = slow["cluster_id"].value_counts().reindex(sums.index, fill_value=0)
    out = sums.rename_axis("cluster_id").reset_index()
    return out[list(_SUMMARY_DTYPES)].astype(_SUMMARY_DTYPES)


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
    mask = _gpu_reporting(frame) & frame["gpu_type"].notna()
    pods = frame.loc[mask]
    count = pods["gpu_count"].astype("float64")
    util = pods["gpu_util_mean"].astype("float64")
    parts = pd.DataFrame(
        {
            "pods": 1,
            "gpus": count,
            "cost_per_hour": _costs(pods),
            "_util_x_gpus": util * count,
            "utilized_gpus": count * util / 100.0,
        },
        index=pods.index,
    )
    sums = parts.groupby(pods["gpu_type"], sort=True).sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        gpus = sums["gpus"].where(sums["gpus"] > 0)
        sums["list_cost_per_gpu_hour"] = sums["cost_per_hour"] / gpus
        sums["gpu_util_mean"] = sums["_util_x_gpus"] / gpus
        sums["cost_per_utilized_gpu_hour"] = sums["cost_per_hour"] / sums["utilized_gpus"].where(
            sums["utilized_gpus"] > 0
        )
    out = sums.rename_axis("gpu_type").reset_index()[list(_BY_GPU_DTYPES)].astype(_BY_GPU_DTYPES)
    return out.sort_values("cost_per_hour", ascending=False, kind="stable").reset_index(drop=True)


@pd.api.extensions.register_dataframe_accessor("cc")
class CCAccessor:
    """This module's functions as methods of a pods frame: ``df.cc.idle_pods()``.

    Each method has the signature and docstring of the function it calls, with the
    frame left out: :meth:`cluster_summary`, :meth:`idle_pods`, :meth:`stragglers`
    and :meth:`cost_per_gpu_hour`. Shorter aliases, the same methods:
    ``summary`` = ``cluster_summary``, ``idle`` = ``idle_pods``,
    ``cost_by_gpu_type`` = ``cost_per_gpu_hour``.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    def __repr__(self) -> str:
        frame = self._frame
        clusters = frame["cluster_id"].nunique() if "cluster_id" in frame.columns else 0
        pods = f"{len(frame)} pod{'' if len(frame) == 1 else 's'}"
        return (
            f"<ccanalytics accessor on {pods} in {clusters} cluster{'' if clusters == 1 else 's'}: "
            ".cc.cluster_summary(), .cc.idle_pods(), .cc.stragglers(), "
            ".cc.cost_per_gpu_hour()>"
        )

    def cluster_summary(self, *, idle_threshold: float = DEFAULT_IDLE_THRESHOLD) -> pd.DataFrame:
        return cluster_summary(self._frame, idle_threshold=idle_threshold)

    def idle_pods(
        self, *, idle_threshold: float | None = None, threshold: float | None = None
    ) -> pd.DataFrame:
        if threshold is not None:  # warn here, so the warning names the caller's line
            warnings.warn(
                "threshold= is now idle_threshold= (the old spelling goes in the next release)",
                DeprecationWarning,
                stacklevel=2,
            )
            idle_threshold = threshold if idle_threshold is None else idle_threshold
        return idle_pods(self._frame, idle_threshold=idle_threshold)

    def stragglers(
        self,
        *,
        z: float = DEFAULT_STRAGGLER_Z,
        min_gap: float = DEFAULT_STRAGGLER_MIN_GAP,
        idle_threshold: float = DEFAULT_IDLE_THRESHOLD,
    ) -> pd.DataFrame:
        return stragglers(self._frame, z=z, min_gap=min_gap, idle_threshold=idle_threshold)

    def cost_per_gpu_hour(self) -> pd.DataFrame:
        return cost_per_gpu_hour(self._frame)

    # The functions' own docstrings, so help(df.cc.idle_pods) reads as help(idle_pods).
    cluster_summary.__doc__ = globals()["cluster_summary"].__doc__
    idle_pods.__doc__ = globals()["idle_pods"].__doc__
    stragglers.__doc__ = globals()["stragglers"].__doc__
    cost_per_gpu_hour.__doc__ = globals()["cost_per_gpu_hour"].__doc__

    # Documented aliases (the names the README has used).
    summary = cluster_summary
    idle = idle_pods
    cost_by_gpu_type = cost_per_gpu_hour

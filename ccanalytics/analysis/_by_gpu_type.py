"""By GPU type: what one *utilized* GPU-hour costs, by the registry's measures."""

from __future__ import annotations

from typing import Final

import pandas as pd

from ccanalytics.analysis._by import measures_by
from ccanalytics.analysis._run import require
from ccanalytics.measures import by_name, rules

__all__ = ["BY_GPU_MEASURES", "as_cost_per_gpu_hour", "cost_per_gpu_hour", "gpu_type_measures"]

#: The registry's measures of a GPU type's row, in the table's order, and the column
#: each is in (the names the table had before they were registry entries).
BY_GPU_MEASURES: Final = {
    "judged_pod_hours": "pods",
    "reporting_pods_gpu_hours": "gpus",
    "reporting_cost": "cost_per_hour",
    "list_cost_per_gpu_hour": "list_cost_per_gpu_hour",
    "gpu_utilization": "gpu_util_mean",
    "used_gpu_hours": "utilized_gpus",
    "cost_per_utilized_gpu_hour": "cost_per_utilized_gpu_hour",
}
#: The rows every column describes: running GPU pods that report utilization, of a type.
_ROWS: Final = f"{rules.JUDGED_SQL} AND gpu_type IS NOT NULL"


def gpu_type_measures(frame: pd.DataFrame) -> pd.DataFrame:
    """:data:`BY_GPU_MEASURES` per GPU type in their live columns (``reporting_cost_per_hour``,
    ``gpu_utilization`` 0-1, ...), over the rows :func:`cost_per_gpu_hour` describes, by
    the engine (:func:`~ccanalytics.analysis.measures_by`), most costly type first."""
    require(frame, ["gpu_type", "gpu_count", "gpu_util_mean", "cost"])
    out = measures_by(frame, list(BY_GPU_MEASURES), "gpu_type", where=_ROWS)
    cost = str(by_name("reporting_cost").live)
    order = out.sort_values([cost, "gpu_type"], ascending=[False, True], kind="stable")
    return order.reset_index(drop=True)


def as_cost_per_gpu_hour(measures: pd.DataFrame) -> pd.DataFrame:
    """:func:`gpu_type_measures`' frame in :func:`cost_per_gpu_hour`'s columns."""
    out = measures.rename(columns={str(by_name(n).live): c for n, c in BY_GPU_MEASURES.items()})
    # A share (0-1) in the percent this column has always been in: a unit, not a figure.
    out["gpu_util_mean"] = out["gpu_util_mean"] * 100
    return out


def cost_per_gpu_hour(frame: pd.DataFrame) -> pd.DataFrame:
    """By GPU type, over running GPU pods that report utilization: what a GPU-hour of work costs.

    Every column of a row describes the same pods: the GPU pods of that type that are
    running and report GPU utilization (pods without metrics, or not running, are
    left out, since their utilization is unknown); each is a registry measure
    (:data:`BY_GPU_MEASURES`) summed per type by the engine. ``pods``, ``gpus`` (all
    their GPUs), ``cost_per_hour`` (USD per hour), ``list_cost_per_gpu_hour`` (cost
    over GPUs), ``gpu_util_mean`` (percent: the registry's ``gpu_utilization``, weighted
    by the GPUs reporting), ``utilized_gpus`` (``used_gpus``: the GPUs reporting times
    their utilization / 100, how many GPUs' worth of work they do) and
    ``cost_per_utilized_gpu_hour`` (cost over utilized GPUs: the price actually paid
    for one GPU-hour of work, which idle GPUs push above the list price). Most costly
    type first.
    """
    return as_cost_per_gpu_hour(gpu_type_measures(frame))

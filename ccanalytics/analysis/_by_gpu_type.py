"""By GPU type: what one *utilized* GPU-hour costs."""

from __future__ import annotations

from typing import Final

import pandas as pd

from ccanalytics.analysis._run import require, run
from ccanalytics.measures import Params, rules

__all__ = ["cost_per_gpu_hour"]


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
    require(frame, ["gpu_type", "gpu_count", "gpu_util_mean", "cost"])
    return run(frame, _BY_GPU_SQL, Params(), _BY_GPU_DTYPES)

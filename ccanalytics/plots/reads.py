"""The columns of a pods frame each plot of pods reads: written once, for two readers.

The plots check their input against these (``_require``), and the report sends a
fleet-wide plot only these columns when a worker process draws it (the whole
50,000-pod frame is 34 MB to pickle, per figure). A plot of one cluster gets that
cluster's rows whole. Plain data: no matplotlib, no pandas.
"""

from __future__ import annotations

from typing import Final

__all__ = ["COST_BREAKDOWN", "COST_VS_UTILIZATION", "UTILIZATION_BY_RANK"]

#: :func:`ccanalytics.plots.cost_vs_utilization`: the idle rule's columns and the axes'.
COST_VS_UTILIZATION: Final = ("cost", "status", "gpu_count", "gpu_util_mean", "gpu_util_max")
#: :func:`ccanalytics.plots.cost_breakdown`: the spend categories' and the groups'.
COST_BREAKDOWN: Final = (*COST_VS_UTILIZATION, "cluster_id", "gpu_type", "cpu_util")
#: :func:`ccanalytics.plots.utilization_by_rank` (and ``memory_util``, when the frame has it).
UTILIZATION_BY_RANK: Final = (
    "cluster_id",
    "rank",
    "status",
    "gpu_count",
    "gpu_util_mean",
    "gpu_util_min",
    "gpu_util_max",
    "cpu_util",
)

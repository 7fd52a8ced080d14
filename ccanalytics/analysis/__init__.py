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
Every answer is one SQL statement over the frame (no per-row Python).

One module per kind of answer: ``_pods`` (idle pods, stragglers, each pod judged),
``_summary`` (per cluster), ``_by_gpu_type``, ``_by`` (the registry's sums by a dimension)
and ``_accessor`` (``df.cc``), each run by
``_run`` through the measures' engine.
"""

from __future__ import annotations

from ccanalytics.analysis._accessor import CCAccessor, cc
from ccanalytics.analysis._by import measures_by as measures_by  # for the report
from ccanalytics.analysis._by_gpu_type import (
    BY_GPU_MEASURES as BY_GPU_MEASURES,  # for the report, not in __all__
    as_cost_per_gpu_hour as as_cost_per_gpu_hour,  # for the report, not in __all__
    cost_per_gpu_hour,
    gpu_type_measures as gpu_type_measures,
)
from ccanalytics.analysis._pods import (
    DEFAULT_IDLE_THRESHOLD,
    DEFAULT_STRAGGLER_MIN_GAP,
    DEFAULT_STRAGGLER_Z,
    MIN_RANKS_FOR_STRAGGLERS,
    idle_pods,
    judge_pods as judge_pods,  # for plots and the report, not in __all__
    stragglers,
)
from ccanalytics.analysis._summary import POD_STATES, cluster_summary

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

"""The registry's measures of the report's cost chart, GPU-type table and waste chart.

Sums over pod rows and quotients of two of them, declared once as every measure is: the
report's cost chart (each group's spend on pods in use, on idle pods and on pods the
rules cannot judge, and the idle share beside each bar), its "Cost by GPU type" table
(what a GPU-hour costs at list and per GPU-hour of work, over the running GPU pods that
report utilization) and its waste chart (idle pods, then the unused capacity of the pods
in use, and their share of the spend) read them, live by a dimension and over a window
from History. A quotient of two sums is a
"share" entry whatever its unit (``USD per GPU-hour`` here): the engine divides the two
sums after every grouping, never a mean of quotients.
:data:`~ccanalytics.measures.MEASURES` lists them after the waste classes.
"""

from __future__ import annotations

from typing import Final

from ccanalytics.measures._measure import Measure
from ccanalytics.measures.rules import (
    IDLE_SQL,
    IN_USE_SQL,
    JUDGED_SQL,
    UNJUDGED_SQL,
    UNUSED_COST_SQL,
)

__all__ = ["REPORT_MEASURES"]

#: In the order the docs and History's columns list them.
REPORT_MEASURES: Final[tuple[Measure, ...]] = (
    Measure(
        name="in_use_cost",
        kind="sum",
        unit="USD",
        meaning="what the pods in use cost: running GPU pods reporting utilization that are "
        "not idle, and pods without GPUs reporting their CPU",
        label="in use",
        fmt="usd",
        live="in_use_cost_per_hour",
        live_unit="USD/h",
        row="cost",
        where=IN_USE_SQL,
        params=("idle_threshold",),
    ),
    Measure(
        name="unjudged_cost",
        kind="sum",
        unit="USD",
        meaning="what the pods the rules cannot judge cost: GPU pods not running or without "
        "GPU utilization, pods without GPUs or CPU utilization; with in_use_cost and "
        "idle_cost, every pod's whole cost in one of the three",
        label="no metrics (pending, starting, exited)",
        fmt="usd",
        live="unjudged_cost_per_hour",
        live_unit="USD/h",
        row="cost",
        where=UNJUDGED_SQL,
        params=("idle_threshold",),
    ),
    Measure(
        name="reporting_cost",
        kind="sum",
        unit="USD",
        meaning="what the running GPU pods reporting utilization cost: the pods every "
        "figure of a GPU type's row describes",
        label="spend of pods reporting",
        fmt="usd",
        live="reporting_cost_per_hour",
        live_unit="USD/h",
        row="cost",
        where=JUDGED_SQL,
    ),
    Measure(
        name="reporting_pods_gpu_hours",
        kind="sum",
        unit="GPU-hours",
        meaning="GPU-hours of the same pods, every GPU of each (reporting or not): Σ gpu_count·Δt",
        label="GPU-hours of pods reporting",
        fmt="hours",
        live="reporting_pods_gpus",
        live_unit="GPUs",
        row="CAST(gpu_count AS DOUBLE)",
        where=JUDGED_SQL,
    ),
    Measure(
        name="list_cost_per_gpu_hour",
        kind="share",
        unit="USD per GPU-hour",
        meaning="what a GPU-hour of those pods costs at list: "
        "reporting_cost / reporting_pods_gpu_hours",
        label="list price",
        fmt="usd",
        live="list_cost_per_gpu_hour",
        live_unit="USD per GPU-hour",
        numerator="reporting_cost",
        denominator="reporting_pods_gpu_hours",
    ),
    Measure(
        name="cost_per_utilized_gpu_hour",
        kind="share",
        unit="USD per GPU-hour",
        meaning="what a GPU-hour of work costs: reporting_cost / used_gpu_hours; idle "
        "GPUs push it above the list price",
        label="price of work",
        fmt="usd",
        live="cost_per_utilized_gpu_hour",
        live_unit="USD per GPU-hour",
        numerator="reporting_cost",
        denominator="used_gpu_hours",
    ),
    Measure(
        name="busy_unused_cost",
        kind="sum",
        unit="USD",
        meaning="unused capacity of the pods in use: Σ cost·(1 − gpu_util_mean/100)·Δt over "
        "running GPU pods reporting utilization that are not idle",
        label="unused spend of pods in use",
        fmt="usd",
        live="busy_unused_cost_per_hour",
        live_unit="USD/h",
        row=UNUSED_COST_SQL,
        where=f"({JUDGED_SQL} AND NOT {IDLE_SQL})",
        params=("idle_threshold",),
    ),
    Measure(
        name="idle_and_unused_cost",
        kind="sum",
        unit="USD",
        meaning="what the waste chart draws: idle pods' whole cost (idle_cost) plus the "
        "unused capacity of the pods in use (busy_unused_cost)",
        label="idle and unused spend",
        fmt="usd",
        live="idle_and_unused_cost_per_hour",
        live_unit="USD/h",
        row=f"CASE WHEN {IDLE_SQL} THEN cost ELSE {UNUSED_COST_SQL} END",
        where=f"({JUDGED_SQL} OR {IDLE_SQL})",
        params=("idle_threshold",),
    ),
    Measure(
        name="idle_and_unused_cost_share",
        kind="share",
        unit="0-1",
        meaning="idle and unused spend over all spend (total_cost): the share beside each "
        "bar of the waste chart",
        label="idle and unused share of spend",
        fmt="share",
        live="idle_and_unused_cost_share",
        live_unit="0-1",
        numerator="idle_and_unused_cost",
        denominator="total_cost",
        params=("idle_threshold",),
    ),
)

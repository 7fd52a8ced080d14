"""The registry's waste measures: each waste class, their sum and its share of the spend.

A class's rule (which pod rows it holds, what a row wastes per hour) is
:data:`ccanalytics.measures.rules.WASTE_CLASSES`'; a pod row is in one class at most, so
``waste_cost`` (any class's row where some class holds) is their sum, computed by the
engine like any other measure. :data:`~ccanalytics.measures.MEASURES` lists them after
the sums.
"""

from __future__ import annotations

from typing import Final

from ccanalytics.measures._measure import Measure, Metric
from ccanalytics.measures.rules import WASTE_CLASSES, WASTE_ROW_SQL, WASTED_SQL

__all__ = ["WASTE_CLASS_NAMES", "WASTE_MEASURES"]

_CLASS: Final = {c.name: c for c in WASTE_CLASSES}
#: The classes' names, in the order a pod row is assigned to them.
WASTE_CLASS_NAMES: Final = tuple(_CLASS)


def _waste(name: str, label: str, meaning: str, params: tuple[str, ...]) -> Measure:
    """A waste class's measure: its rule from :data:`~ccanalytics.measures.rules.WASTE_CLASSES`."""
    rule = _CLASS[name]
    return Measure(
        name=name,
        kind="waste",
        unit="USD",
        meaning=meaning,
        label=label,
        fmt="usd",
        live=f"{name}_per_hour",
        live_unit="USD/h",
        row=rule.row,
        where=rule.where,
        params=params,
        policy_key=f"max_{name}",
        metric=Metric(f"{name}_usd", "gauge", f"USD wasted over the window: {label}"),
        sentence=f"{label} cost {{value}}",
        card=True,
    )


#: Each class, in the order a pod row is assigned to them.
_CLASS_MEASURES: Final[tuple[Measure, ...]] = (
    _waste(
        "idle_empty_cost",
        "idle, empty GPUs",
        "waste class 1: idle pods whose fullest GPU's memory is below idle_memory_threshold "
        "(or unknown), their whole cost",
        ("idle_threshold", "idle_memory_threshold"),
    ),
    _waste(
        "idle_loaded_cost",
        "idle GPUs with a model loaded",
        "waste class 2: idle pods whose fullest GPU's memory is at or above "
        "idle_memory_threshold (a server nobody calls), their whole cost; with class 1 it "
        "is idle_cost",
        ("idle_threshold", "idle_memory_threshold"),
    ),
    _waste(
        "straggler_cost",
        "stragglers' shortfall",
        "waste class 3: ranks the straggler rule flags in a snapshot, cost x points below "
        "the median / 100",
        ("idle_threshold", "z", "min_gap"),
    ),
    _waste(
        "idle_gpus_cost",
        "idle GPUs in busy pods",
        "waste class 4: busy multi-GPU pods with GPUs below idle_threshold (per-GPU table), "
        "cost x idle GPUs / GPUs",
        ("idle_threshold",),
    ),
    _waste(
        "low_compute_cost",
        "low compute",
        "waste class 5: busy pods whose mean GPU utilization is below low_compute_threshold, "
        "their unused capacity cost x (1 - gpu_util_mean/100)",
        ("idle_threshold", "low_compute_threshold"),
    ),
)
#: What judges some class: what judges their sum and its share.
_ANY_CLASS_PARAMS: Final = tuple(dict.fromkeys(p for m in _CLASS_MEASURES for p in m.params))

#: In the order the docs and History's columns list them.
WASTE_MEASURES: Final[tuple[Measure, ...]] = (
    *_CLASS_MEASURES,
    Measure(
        name="waste_cost",
        kind="waste",
        unit="USD",
        meaning="every waste class together (a pod row is in one class at most): what the "
        "report's first screen gives per day",
        label="waste",
        fmt="usd",
        live="waste_cost_per_hour",
        live_unit="USD/h",
        row=WASTE_ROW_SQL,
        where=WASTED_SQL,
        params=_ANY_CLASS_PARAMS,
    ),
    Measure(
        name="waste_share",
        kind="share",
        unit="0-1",
        meaning="waste_cost over all spend (total_cost)",
        label="waste share of spend",
        fmt="share",
        live="waste_share",
        live_unit="0-1",
        numerator="waste_cost",
        denominator="total_cost",
        params=_ANY_CLASS_PARAMS,
    ),
)

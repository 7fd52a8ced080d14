"""Kept for :mod:`ccanalytics.history` until it reads :mod:`ccanalytics.measures` itself."""

from ccanalytics.measures._params import idle_threshold_given
from ccanalytics.measures.rules import (
    CHRONIC_SHARE,
    IDLE_SQL as _IDLE,
    IDLE_THRESHOLD,
    JUDGED_SQL,
    MAD_SCALE,
    MIN_RANKS_FOR_STRAGGLERS,
    STRAGGLER_MIN_GAP,
    STRAGGLER_Z,
    UNUSED_COST_SQL,
)

__all__ = [
    "CHRONIC_SHARE",
    "IDLE_SQL",
    "IDLE_THRESHOLD",
    "JUDGED_SQL",
    "MAD_SCALE",
    "MIN_RANKS_FOR_STRAGGLERS",
    "STRAGGLER_MIN_GAP",
    "STRAGGLER_Z",
    "UNUSED_COST_SQL",
    "check_idle_threshold",
    "idle_threshold_given",
    "median_sql",
    "straggler_flag_sql",
]

#: The store's queries name the idle threshold ``$threshold``.
IDLE_SQL = _IDLE.replace("$idle_threshold", "$threshold")


def check_idle_threshold(idle_threshold: float) -> float:
    """``idle_threshold`` as a float; ValueError unless it is a percentage (0-100)."""
    if not 0 <= idle_threshold <= 100:
        raise ValueError("idle_threshold is a utilization in percent (0-100)")
    return float(idle_threshold)


def straggler_flag_sql(value: str, median: str, mad: str, deficit: str) -> str:
    """The straggler test in SQL; ``$min_gap`` and ``$z`` are parameters."""
    return (
        f"({deficit} >= $min_gap AND CASE WHEN {mad} > 0 "
        f"THEN {MAD_SCALE} * ({value} - {median}) / {mad} < -$z ELSE {deficit} > 0 END)"
    )


def median_sql(sorted_list: str, count: str) -> str:
    """numpy's median of a sorted DuckDB list (1-based): the middle, or the two middles' mean."""
    return f"(({sorted_list})[({count} + 1) // 2] + ({sorted_list})[{count} // 2 + 1]) / 2"

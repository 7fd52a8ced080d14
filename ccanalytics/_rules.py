"""The domain rules, written once: judged, idle, unused capacity, stragglers.

Every path that answers these questions calls this module: the live frames
(:mod:`ccanalytics.analysis` and the ``df.cc`` accessor, in pandas) and the store
(:class:`ccanalytics.history.History`, in DuckDB SQL). Each rule is one definition here
with its two renderings side by side (a pandas mask and a SQL predicate over the same
column names), and the constants exist nowhere else. A property test
(``tests/analysis/test_rules_agree.py``) checks that the two paths give the same idle
pods, stragglers and costs on random frames.

Why two renderings of one definition and not one DuckDB query run over the live frame
too: the pandas path keeps :mod:`ccanalytics.analysis`'s results (nullable dtypes,
numpy medians) bit for bit, and its speed on a 50,000-pod frame is unchanged
(~85-95 ms for the four analyses, before and after). DuckDB over the frame was measured
faster for the sums alone (12 ms against 56 ms for ``cluster_summary``), so moving the
live path onto :data:`IDLE_SQL` and friends is the next step, not a loss.

The rules (``status`` is the pod's lifecycle state as the service sends it):

- **judged**: ``status`` is ``RUNNING``, the pod has GPUs and reports
  ``gpu_util_mean``. Only running pods have runtime metrics (provider notes). A
  **missing status** (``<NA>``/NULL: a cell the decoder could not read, or an older
  payload) is *not* ``RUNNING``: the pod is counted, and costs what it costs, but is
  never judged idle, unused or straggling. The same in pandas and SQL (where
  ``NULL = 'RUNNING'`` is NULL, which a filter drops).
- **idle**: ``status`` is ``RUNNING``, the pod has GPUs and its busiest GPU
  (``gpu_util_max``) is below the idle threshold (percent, default
  :data:`IDLE_THRESHOLD`). A pod without metrics is unknown, never idle.
- **unused capacity**: over judged pods, ``cost * (1 - gpu_util_mean / 100)``.
- **straggler**: among judged pods with a rank that are not idle (busiest GPU at or
  above the idle threshold), with at least :data:`MIN_RANKS_FOR_STRAGGLERS` of them in
  the cluster (snapshot), a rank straggles when it is at least :data:`STRAGGLER_MIN_GAP`
  points below the median of ``gpu_util_mean`` and its robust z-score
  ``MAD_SCALE * (util - median) / MAD`` is below ``-STRAGGLER_Z`` (with MAD 0 the gap
  alone decides). Medians are numpy's (the middle value or the mean of the two middle
  values), in SQL too, so both flag exactly the same ranks.
- a missing ``cost`` counts as 0 USD/h in every sum.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "IDLE_SQL",
    "IDLE_THRESHOLD",
    "JUDGED_SQL",
    "MAD_SCALE",
    "MIN_RANKS_FOR_STRAGGLERS",
    "RUNNING_SQL",
    "STRAGGLER_MIN_GAP",
    "STRAGGLER_Z",
    "UNUSED_COST_SQL",
    "check_idle_threshold",
    "idle_mask",
    "judged_mask",
    "median_sql",
    "robust_z",
    "running_mask",
    "status_running",
    "straggler_flag_sql",
    "straggler_flags",
    "unused_cost",
]

#: A GPU pod is idle when its busiest GPU is below this utilization (percent).
IDLE_THRESHOLD: Final = 10.0
#: A rank straggles when its robust z-score is below minus this...
STRAGGLER_Z: Final = 3.5
#: ...and it is at least this many utilization points below its cluster's median
#: (so a perfectly uniform cluster, whose MAD is ~0, does not flag noise).
STRAGGLER_MIN_GAP: Final = 10.0
#: Fewer ranks reporting than this, and "typical" has no meaning.
MIN_RANKS_FOR_STRAGGLERS: Final = 4
#: Makes a MAD-based z comparable to a standard z for normal data.
MAD_SCALE: Final = 0.6745


def idle_threshold_given(idle_threshold: float | None, threshold: float | None) -> float:
    """``idle_threshold``, or its old spelling ``threshold=`` with a DeprecationWarning.

    For the public functions that take both (the warning points at their caller).
    """
    if threshold is not None:
        warnings.warn(
            "threshold= is now idle_threshold= (the old spelling goes in the next release)",
            DeprecationWarning,
            stacklevel=3,
        )
        if idle_threshold is not None:
            raise TypeError("pass idle_threshold= only (threshold= is its old spelling)")
        idle_threshold = threshold
    return IDLE_THRESHOLD if idle_threshold is None else idle_threshold


def check_idle_threshold(idle_threshold: float) -> float:
    """``idle_threshold`` as a float; ValueError unless it is a percentage (0-100)."""
    if not 0 <= idle_threshold <= 100:
        raise ValueError("idle_threshold is a utilization in percent (0-100)")
    return float(idle_threshold)


# -- running: the only pods with runtime metrics --------------------------------------

RUNNING_SQL: Final = "(status = 'RUNNING' AND gpu_count > 0)"


def status_running(frame: pd.DataFrame) -> pd.Series:
    """Pods whose status is ``RUNNING``, GPU or not (a missing status is not)."""
    import pandas as pd

    if "status" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return frame["status"].eq("RUNNING").fillna(False).astype(bool)


def running_mask(frame: pd.DataFrame) -> pd.Series:
    """Running GPU pods (a missing status or GPU count is not: see the module docstring)."""
    return frame["gpu_count"].fillna(0).gt(0) & status_running(frame)


# -- judged: running GPU pods reporting utilization ----------------------------------

JUDGED_SQL: Final = f"({RUNNING_SQL} AND gpu_util_mean IS NOT NULL)"


def judged_mask(frame: pd.DataFrame) -> pd.Series:
    """Pods that can be judged busy or idle: running GPU pods reporting utilization."""
    return running_mask(frame) & frame["gpu_util_mean"].notna()


# -- idle: running GPU pods whose busiest GPU is below the threshold ------------------

#: The SQL predicate; ``$threshold`` is the idle threshold parameter.
IDLE_SQL: Final = f"({RUNNING_SQL} AND gpu_util_max IS NOT NULL AND gpu_util_max < $threshold)"


def idle_mask(frame: pd.DataFrame, idle_threshold: float) -> pd.Series:
    """Idle pods: running GPU pods whose busiest GPU is below ``idle_threshold`` percent."""
    below = frame["gpu_util_max"].lt(check_idle_threshold(idle_threshold)).fillna(False)
    return running_mask(frame) & below.astype(bool)


# -- unused capacity ------------------------------------------------------------------

#: USD per hour of a judged pod that no work uses (NULL cost: no sum).
UNUSED_COST_SQL: Final = "cost * (1 - gpu_util_mean / 100)"


def unused_cost(cost: pd.Series, util: pd.Series, judged: pd.Series) -> pd.Series:
    """:data:`UNUSED_COST_SQL` in pandas: ``cost`` (floats, missing as 0) on judged pods."""
    return (cost * (1.0 - util / 100.0)).where(judged, 0.0)


# -- stragglers -----------------------------------------------------------------------


def median_sql(sorted_list: str, count: str) -> str:
    """numpy's median of a sorted DuckDB list (1-based): the middle, or the two middles' mean."""
    return f"(({sorted_list})[({count} + 1) // 2] + ({sorted_list})[{count} // 2 + 1]) / 2"


def straggler_flag_sql(value: str, median: str, mad: str, deficit: str) -> str:
    """The straggler test in SQL; ``$min_gap`` and ``$z`` are parameters."""
    return (
        f"({deficit} >= $min_gap AND CASE WHEN {mad} > 0 "
        f"THEN {MAD_SCALE} * ({value} - {median}) / {mad} < -$z ELSE {deficit} > 0 END)"
    )


def robust_z(util: pd.Series, median: pd.Series, mad: pd.Series) -> pd.Series:
    """The robust z-score in pandas; with MAD 0, -inf below the median and 0 at or above."""
    import numpy as np
    import pandas as pd

    deficit = median - util
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(
            mad > 0, MAD_SCALE * (util - median) / mad, np.where(deficit > 0, -np.inf, 0.0)
        )
    return pd.Series(z, index=util.index)


def straggler_flags(
    deficit: pd.Series, z_score: pd.Series, *, z: float, min_gap: float
) -> pd.Series:
    """The straggler test in pandas (:func:`straggler_flag_sql`'s twin)."""
    return (deficit >= min_gap) & (z_score < -z)

"""The registry's judgements, each decided here once: a budget's tier and breach instants.

A ``"judgement"`` entry of :data:`~ccanalytics.measures.MEASURES` names its function
here by ``compute``: the rule's one home, which History's spend and the policy's
judging both call (:func:`computed` finds it by the entry).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ccanalytics.measures._measure import Measure

__all__ = ["breach_instant", "budget_tier", "computed", "forecast_breach"]


def budget_tier(value: float, limit: float, warn_at: tuple[float, ...]) -> float:
    """1.0 over the limit; else the highest ``warn_at`` share the value is at or past."""
    if value > limit:
        return 1.0
    return max((share for share in warn_at if value >= share * limit), default=0.0)


def breach_instant(
    spent: float, burn_rate: float, limit: float, now: pd.Timestamp, period_end: pd.Timestamp
) -> pd.Timestamp | None:
    """When spent + burn_rate × the hours from ``now`` reaches ``limit`` (the projection's
    own line), if that is before ``period_end`` and the spend is still under the limit.

    Before ``period_end`` exactly when ``projected > limit``: the instant a projection
    over the limit says it is crossed. None otherwise.
    """
    import pandas as pd

    if not spent < limit or not burn_rate > 0:
        return None
    hours = (limit - spent) / burn_rate
    # Compared in hours first: a crossing far beyond the period (a generous budget) is
    # past what a pandas Timedelta can hold, and is no crossing this period anyway.
    if not hours < (period_end - now) / pd.Timedelta(hours=1):
        return None
    return now + pd.Timedelta(hours=hours)


def forecast_breach(
    path: np.ndarray,
    hour_weights: np.ndarray,
    total: float,
    spent: float,
    limit: float,
    now: pd.Timestamp,
) -> pd.Timestamp | None:
    """When spent + a forecast's path, scaled to its quantile's ``total``, reaches ``limit``
    this period (or None).

    ``path`` is the P50's USD per hour ahead and ``hour_weights`` the share of each of
    those hours still ahead: the P90 crosses first, the P10 last. None when the spend is
    over already or the path never gets there.
    """
    import numpy as np
    import pandas as pd

    if not spent < limit:
        return None
    base = float((path * hour_weights).sum())
    if total <= 0 or base <= 0:
        return None
    per_hour = path * hour_weights * (total / base)
    reached = spent + np.cumsum(per_hour)
    hit = np.flatnonzero(reached >= limit)
    if hit.size == 0:
        return None
    i = int(hit[0])
    before = float(reached[i - 1]) if i else spent
    hours_in = hour_weights[i] * (limit - before) / per_hour[i] if per_hour[i] else 0.0
    start = 0.0 if i == 0 else float(hour_weights[0]) + (i - 1)
    return now + pd.Timedelta(hours=start + float(hours_in))


#: The functions a ``compute`` may name.
_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    f.__name__: f for f in (budget_tier, breach_instant, forecast_breach)
}


def computed(measure: Measure) -> Callable[..., Any]:
    """The function that decides ``measure`` (its ``compute``)."""
    if measure.compute is None or measure.compute not in _FUNCTIONS:
        raise TypeError(f"{measure.name} is not computed by a judgement function")
    return _FUNCTIONS[measure.compute]

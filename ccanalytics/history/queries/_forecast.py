"""The seasonal forecast: where a period's spend is heading, with an interval.

The method, stated once (:data:`ccanalytics.history.SPEND_COLUMNS` says it per column):

- **the series** is each cluster's spend per UTC hour, per observed hour (Σ cost·Δt in
  the hour over the hour's observed time, by the one rule of time): a gap reads as
  unknown, never as zero. Hours before the hour holding now are history;
- **the profile** is the median, hour of the week by hour of the week, of the last
  :data:`FORECAST_WEEKS` weeks of it (fewer when the store is younger: at least
  :data:`MIN_FORECAST_WEEKS`); a median, so one holiday does not drag its hour down;
- **the week's trend**: the median of the week-on-week growth ratios of those weeks'
  mean spend (bounded to :data:`TREND_BOUNDS` a week), carried from the profile's middle
  to each hour ahead;
- **the forecast** of the rest of a period is the profile, trended, summed over the
  hours from now to the period's end (the hour holding now for its part still ahead);
- **the interval** comes from the forecast's own errors on this store's past: the same
  forecast made at now's hour of the day on earlier days (each with its own profile, of
  the weeks before it), over the same horizon as now's (the hours left), against what
  was then spent. When fewer than :data:`MIN_ERROR_ORIGINS` such past forecasts fit in
  the store (a month-end weeks away), they are checked a week ahead instead (or over the
  longest horizon a young store allows) and their log-ratios widened by √(the horizon /
  theirs), as for a sum of weeks that each stray independently. P50 is the forecast;
  P10 and P90 are it times those ratios' quantiles over their median (the median of a
  few overlapping past windows is their luck, not a bias to correct);
- **too little history** (under :data:`MIN_FORECAST_WEEKS` weeks, or fewer than
  :data:`MIN_ERROR_ORIGINS` past forecasts to take errors from): the burn-rate line
  (spend so far + burn rate × hours left) for all three, and ``forecast`` says
  ``"burn_rate"`` and ``forecast_note`` why. The line stays available by name
  (``projected``) either way.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

from ccanalytics.errors import ArgumentsError
from ccanalytics.history.queries._accounting import (
    US_PER_HOUR,
    hourly_spend_ctes,
    run,
)
from ccanalytics.measures import forecast_breach

__all__ = [
    "FORECAST_WEEKS",
    "MIN_ERROR_ORIGINS",
    "MIN_FORECAST_WEEKS",
    "QUANTILES",
    "Forecast",
    "Series",
    "forecast_rest",
    "hourly_series",
]

#: Weeks the hour-of-week profile is the median of.
FORECAST_WEEKS: Final = 4
#: Fewer weeks of history than this, and the forecast is the burn-rate line.
MIN_FORECAST_WEEKS: Final = 2
#: Fewer past forecasts than this to take errors from, and so is it.
MIN_ERROR_ORIGINS: Final = 5
#: The week-on-week trend is bounded to these factors (a young store's noise is no trend).
TREND_BOUNDS: Final = (0.8, 1.25)
#: The interval's quantiles: P10, P50, P90.
QUANTILES: Final = (0.1, 0.5, 0.9)
#: Past forecasts are made this many hours apart (a day: each at now's hour of the day).
_ORIGIN_STEP: Final = 24
_WEEK: Final = 7 * 24
#: How far back the series is read: the profile's weeks, the errors' origins and horizon.
HISTORY_WEEKS: Final = 2 * FORECAST_WEEKS + 2

_SQL: Final = f"""WITH {hourly_spend_ctes()}
SELECT cluster_id, k, rate FROM hourly_spend ORDER BY cluster_id, k"""


@dataclass(frozen=True)
class Series:
    """Spend per observed hour (USD/h) of the hours ``first`` ... ``first + len(rate) - 1``
    (hour numbers since the epoch), NaN where nothing was observed."""

    first: int
    rate: np.ndarray

    def total(self, other: Series) -> Series:
        """The sum of two series (a cluster unobserved in an hour adds nothing to it)."""
        first = min(self.first, other.first)
        last = max(self.first + len(self.rate), other.first + len(other.rate))
        out = np.full(last - first, np.nan)
        for part in (self, other):
            at = part.first - first
            span = out[at : at + len(part.rate)]
            out[at : at + len(part.rate)] = np.where(
                np.isnan(span), part.rate, np.where(np.isnan(part.rate), span, span + part.rate)
            )
        return Series(first, out)


def hourly_series(con: Any, now_us: int) -> dict[str, Series]:
    """Each cluster's :class:`Series` over the :data:`HISTORY_WEEKS` weeks before the hour
    holding ``now_us``."""
    now_hour = now_us // US_PER_HOUR
    start = (now_hour - HISTORY_WEEKS * _WEEK) * US_PER_HOUR
    frame = run(
        con,
        _SQL,
        {"start_us": start, "end_us": now_hour * US_PER_HOUR, "max_gap_us": None},
    )
    series: dict[str, Series] = {}
    for cluster, part in frame.groupby(frame["cluster_id"].astype(str), sort=True):
        hours = part["k"].to_numpy(dtype="int64")
        rate = np.full(int(now_hour - hours.min()), np.nan)
        rate[hours - hours.min()] = part["rate"].to_numpy(dtype="float64")
        series[str(cluster)] = Series(int(hours.min()), rate)
    return series


@dataclass(frozen=True)
class Forecast:
    """The rest of a period: USD from now to its end at P10, P50 and P90, and how.

    ``method`` is ``"seasonal"`` or ``"burn_rate"`` (the fallback, ``note`` says why);
    ``path`` is the P50's USD per hour ahead (the cumulative line breach dates read).
    """

    method: str
    note: str | None
    p10: float
    p50: float
    p90: float
    path: np.ndarray
    hour_weights: np.ndarray

    def quantile(self, name: str) -> float:
        return {"p10": self.p10, "p50": self.p50, "p90": self.p90}[name]


def _profile(rate: np.ndarray, origin: int, weeks: int) -> tuple[np.ndarray, float]:
    """The hour-of-week profile of the ``weeks`` weeks before index ``origin`` (slot 0 is
    ``origin``'s hour of the week) and the trend factor a week."""
    blocks = np.stack(
        [rate[origin - _WEEK * j : origin - _WEEK * (j - 1)] for j in range(1, weeks + 1)]
    )
    with warnings.catch_warnings():  # an hour no week observed is NaN, filled below
        warnings.simplefilter("ignore", RuntimeWarning)
        profile = np.nanmedian(blocks, axis=0)
    fill = float(np.nanmean(profile)) if np.isfinite(profile).any() else 0.0
    profile = np.where(np.isfinite(profile), profile, fill)
    ratios = []
    for i in range(weeks):  # blocks[0] is the latest week
        for j in range(i + 1, weeks):
            # Over the hours both weeks observed: a gap in one is no change in spend.
            both = np.isfinite(blocks[i]) & np.isfinite(blocks[j])
            later, earlier = blocks[i][both].sum(), blocks[j][both].sum()
            if both.any() and earlier > 0 and later >= 0:
                ratios.append(float(later / earlier) ** (1.0 / (j - i)))
    trend = float(np.median(ratios)) if ratios else 1.0
    return profile, min(max(trend, TREND_BOUNDS[0]), TREND_BOUNDS[1])


def _ahead(rate: np.ndarray, origin: int, hours: int, weeks: int) -> np.ndarray:
    """The forecast USD/h of the ``hours`` hours from index ``origin`` on."""
    profile, trend = _profile(rate, origin, weeks)
    offsets = np.arange(hours)
    # The profile stands for its weeks' middle, weeks / 2 before the origin: the trend
    # brings it to now, and no further (a damped trend: a few weeks' noise extrapolated
    # over a month ahead was most of the error on a steady fleet).
    return np.asarray(profile[offsets % _WEEK] * trend ** (weeks / 2), dtype="float64")


def _weeks_before(rate: np.ndarray, origin: int) -> int:
    observed = np.flatnonzero(np.isfinite(rate[:origin]))
    if observed.size == 0:
        return 0
    return min(FORECAST_WEEKS, (origin - int(observed[0])) // _WEEK)


def _error_ratios(rate: np.ndarray, now: int, horizon: int) -> list[float]:
    """Actual / forecast spend over ``horizon`` hours, for forecasts made a day apart back."""
    ratios: list[float] = []
    origin = now - horizon
    while origin > 0:
        weeks = _weeks_before(rate, origin)
        if weeks < MIN_FORECAST_WEEKS:
            break
        actual = rate[origin : origin + horizon]
        predicted = _ahead(rate, origin, horizon, weeks)
        seen = np.isfinite(actual)
        if seen.mean() >= 0.9 and predicted[seen].sum() > 0:
            ratios.append(float(actual[seen].sum() / predicted[seen].sum()))
        origin -= _ORIGIN_STEP
    return ratios


def _longest_horizon(rate: np.ndarray, now: int) -> int:
    """The longest horizon (hours) that :data:`MIN_ERROR_ORIGINS` past forecasts, a day
    apart and each with :data:`MIN_FORECAST_WEEKS` weeks before it, can be checked over."""
    observed = np.flatnonzero(np.isfinite(rate[:now]))
    if observed.size == 0:
        return 0
    earliest = int(observed[0]) + MIN_FORECAST_WEEKS * _WEEK  # the first possible origin
    return max(now - earliest - (MIN_ERROR_ORIGINS - 1) * _ORIGIN_STEP, 0)


def _weights(now_us: int, end_us: int) -> np.ndarray:
    """The share of each hour from the one holding now to the period's end still ahead."""
    first, last = now_us // US_PER_HOUR, -(-end_us // US_PER_HOUR)
    weights = np.ones(max(int(last - first), 0))
    if weights.size:
        weights[0] = ((first + 1) * US_PER_HOUR - now_us) / US_PER_HOUR
        weights[-1] -= (last * US_PER_HOUR - end_us) / US_PER_HOUR if weights.size > 1 else 0.0
    return weights


def line(burn_rate: float, now_us: int, end_us: int, note: str) -> Forecast:
    """The burn-rate line as a forecast (every quantile the same), with why."""
    weights = _weights(now_us, end_us)
    rest = burn_rate * ((end_us - now_us) / US_PER_HOUR)  # hours first: no overflow
    path = np.full(weights.size, burn_rate)
    return Forecast("burn_rate", note, rest, rest, rest, path, weights)


def forecast_rest(series: Series | None, now_us: int, end_us: int, burn_rate: float) -> Forecast:
    """The spend from ``now_us`` to ``end_us`` by the module's method (or the line)."""
    if end_us < now_us:
        raise ArgumentsError("{at} is after the period's end", "at")
    if series is None or not np.isfinite(series.rate).any():
        return line(burn_rate, now_us, end_us, "no spend history before now")
    now = now_us // US_PER_HOUR - series.first
    # The hours from the series' last to now are unknown: NaN, never zero.
    rate = np.concatenate([series.rate[:now], np.full(max(now - len(series.rate), 0), np.nan)])
    weeks = _weeks_before(rate, now)
    if weeks < MIN_FORECAST_WEEKS:
        held = np.flatnonzero(np.isfinite(rate))
        days = (now - int(held[0])) / 24 if held.size else 0.0
        return line(
            burn_rate,
            now_us,
            end_us,
            f"{MIN_FORECAST_WEEKS} weeks of history needed, {days:.1f} days held",
        )
    weights = _weights(now_us, end_us)
    horizon, ratios = _checked_errors(rate, now, max(weights.size, 1))
    if len(ratios) < MIN_ERROR_ORIGINS:
        return line(
            burn_rate,
            now_us,
            end_us,
            f"{MIN_ERROR_ORIGINS} past forecasts needed for an interval, {len(ratios)} possible",
        )
    path = _ahead(rate, now, weights.size, weeks)
    rest = float((path * weights).sum())
    # Each stretch's total strays on its own (independent weeks): the log-error of the
    # whole horizon spreads as √(the horizon / the checked one). Centred on the forecast:
    # the median error of a few overlapping past windows is one week's luck, no bias.
    widen = math.sqrt(weights.size / horizon) if weights.size > horizon else 1.0
    logs = np.log(np.clip(np.asarray(ratios), 1e-9, None))
    middle = float(np.median(logs))
    p10, p50, p90 = (
        rest * math.exp((float(np.quantile(logs, q)) - middle) * widen) for q in QUANTILES
    )
    return Forecast("seasonal", None, p10, p50, p90, path, weights)


def _checked_errors(rate: np.ndarray, now: int, hours: int) -> tuple[int, list[float]]:
    """The horizon past forecasts are checked over and their actual / forecast ratios:
    ``hours`` itself if :data:`MIN_ERROR_ORIGINS` of them can be, else a week (or the
    longest a young store allows)."""
    ratios = _error_ratios(rate, now, hours)
    if len(ratios) >= MIN_ERROR_ORIGINS:
        return hours, ratios
    horizon = min(hours, _WEEK, _longest_horizon(rate, now))
    return horizon, _error_ratios(rate, now, horizon) if horizon > 0 else []


def breach(
    forecast: Forecast, quantile: str, spent: float, limit: float, now: pd.Timestamp
) -> pd.Timestamp | None:
    """When spent + the forecast's ``quantile`` path reaches ``limit`` this period (or None):
    :func:`~ccanalytics.measures.forecast_breach` of this forecast."""
    total = forecast.quantile(quantile)
    return forecast_breach(forecast.path, forecast.hour_weights, total, spent, limit, now)

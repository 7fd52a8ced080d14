"""The seasonal forecast's arithmetic on series built by hand (no store needed), and the
fallback to the burn-rate line that says why."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccanalytics.history.queries._forecast import Series, breach, forecast_rest

HOUR_US = 3_600_000_000
#: 2026-11-02, a Monday, as an hour number since the epoch.
MONDAY = int(pd.Timestamp("2026-11-02", tz="UTC").value // 1000) // HOUR_US


def _office_week() -> np.ndarray:
    """USD/h over a week from Monday 00:00: 10 in office hours (9-17) on weekdays, else 1."""
    week = np.ones(7 * 24)
    for day in range(5):
        week[day * 24 + 9 : day * 24 + 17] = 10.0
    return week


def test_a_steady_weekly_pattern_is_forecast_exactly_with_no_spread() -> None:
    weeks = 5
    series = Series(MONDAY - weeks * 168, np.tile(_office_week(), weeks))
    now_us = MONDAY * HOUR_US  # Monday 00:00, after five identical weeks
    end_us = now_us + 168 * HOUR_US
    rest = forecast_rest(series, now_us, end_us, burn_rate=1.0)
    # A week ahead: 5 days x 8 h x 10 + the other 128 h x 1 = 528 USD.
    assert rest.method == "seasonal"
    assert rest.note is None
    assert (rest.p10, rest.p50, rest.p90) == pytest.approx((528.0, 528.0, 528.0))
    # The line at Monday midnight's 1 USD/h says 168.
    # The breach date of a 300 USD budget from 0 spent: a weekday is 9 + 80 + 7 = 96 USD,
    # so 288 by Thursday 00:00, 297 by 09:00, and the last 3 USD at 10 USD/h: 09:18.
    when = breach(rest, "p50", 0.0, 300.0, pd.Timestamp(now_us, unit="us", tz="UTC"))
    assert when == pd.Timestamp("2026-11-05T09:18", tz="UTC")
    assert breach(rest, "p50", 0.0, 600.0, pd.Timestamp(now_us, unit="us", tz="UTC")) is None


def test_half_an_hour_left_of_the_current_hour_counts_half() -> None:
    series = Series(MONDAY - 5 * 168, np.tile(_office_week(), 5))
    now_us = (MONDAY + 9) * HOUR_US + HOUR_US // 2  # Monday 09:30
    rest = forecast_rest(series, now_us, (MONDAY + 11) * HOUR_US, 1.0)
    assert rest.p50 == pytest.approx(15.0)  # half of 10 + 10


def test_too_short_a_history_falls_back_to_the_line_and_says_so() -> None:
    series = Series(MONDAY - 24 * 9, np.full(24 * 9, 2.0))
    now_us = MONDAY * HOUR_US
    rest = forecast_rest(series, now_us, now_us + 10 * HOUR_US, burn_rate=3.0)
    assert rest.method == "burn_rate"
    assert rest.note == "2 weeks of history needed, 9.0 days held"
    assert (rest.p10, rest.p50, rest.p90) == (30.0, 30.0, 30.0)
    nothing = forecast_rest(None, now_us, now_us + 10 * HOUR_US, burn_rate=3.0)
    assert nothing.method == "burn_rate"
    assert nothing.note == "no spend history before now"


def test_noise_widens_the_interval_around_the_forecast() -> None:
    rng = np.random.default_rng(7)
    weeks = 6
    rate = np.tile(_office_week(), weeks) * rng.uniform(0.7, 1.3, size=weeks * 168)
    series = Series(MONDAY - weeks * 168, rate)
    now_us = MONDAY * HOUR_US
    rest = forecast_rest(series, now_us, now_us + 72 * HOUR_US, burn_rate=1.0)
    assert rest.method == "seasonal"
    assert rest.p10 < rest.p50 < rest.p90


def test_a_horizon_past_the_checked_ones_widens_a_weeks_errors_by_the_root_of_the_weeks() -> None:
    # Five noisy weeks: forecasts a week ahead can be checked on past days, four weeks
    # ahead cannot. The four weeks' interval is the week's errors, each √(4 weeks / 1
    # week) = 2 times as far (in log) from the forecast, and the P50 is the forecast.
    rng = np.random.default_rng(3)
    weeks = 5
    rate = np.tile(_office_week(), weeks) * rng.uniform(0.7, 1.3, size=weeks * 168)
    series = Series(MONDAY - weeks * 168, rate)
    now_us = MONDAY * HOUR_US
    week = forecast_rest(series, now_us, now_us + 168 * HOUR_US, burn_rate=1.0)
    month = forecast_rest(series, now_us, now_us + 4 * 168 * HOUR_US, burn_rate=1.0)
    assert week.method == month.method == "seasonal"
    assert week.p10 < week.p50 < week.p90
    assert month.p50 == pytest.approx(float(month.path.sum()))
    for q in ("p10", "p90"):
        assert np.log(month.quantile(q) / month.p50) == pytest.approx(
            2 * np.log(week.quantile(q) / week.p50)
        )

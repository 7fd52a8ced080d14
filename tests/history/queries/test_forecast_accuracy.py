"""The seasonal forecast measured against the burn-rate line on eight simulated weeks.

The store is tests/simulated_weeks.py's: the sandbox's weekly office fleet, busy on
working days, quiet at night and at weekends, one holiday in October. From 12:00 UTC of
every day of November, the month-end forecast (History.spend's ``projected_p50``) is
compared with the month's actual spend (``idle_cost``'s ``total_cost`` over November):
its mean absolute percentage error is at most half the line's (``projected``), and the
80 % interval (P10-P90) holds the actual month-end in 70 % to 90 % of the days.
"""

from __future__ import annotations

import pandas as pd
import pytest
from simulated_weeks import write_weeks

from ccanalytics import History


@pytest.fixture(scope="module")
def month_forecasts(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, float]:
    store = write_weeks(tmp_path_factory.mktemp("weeks"))
    rows = []
    with History(store) as h:
        actual = float(h.idle_cost("2026-11-01", "2026-12-01", by=None)["total_cost"].iloc[0])
        for day in range(1, 31):
            spend = h.spend(at=f"2026-11-{day:02d}T12:00", by=None)
            rows.append(spend[spend["period"] == "month"].iloc[0])
    return pd.DataFrame(rows).reset_index(drop=True), actual


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_seasonal_forecast_errs_at_most_half_as_much_as_the_line(
    month_forecasts: tuple[pd.DataFrame, float],
) -> None:
    forecasts, actual = month_forecasts
    assert (forecasts["forecast"] == "seasonal").all()
    line = ((forecasts["projected"].astype(float) - actual).abs() / actual).mean()
    seasonal = ((forecasts["projected_p50"].astype(float) - actual).abs() / actual).mean()
    assert seasonal <= line / 2, (seasonal, line)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_80_percent_interval_holds_the_month_end_70_to_90_percent_of_the_days(
    month_forecasts: tuple[pd.DataFrame, float],
) -> None:
    forecasts, actual = month_forecasts
    low, high = forecasts["projected_p10"].astype(float), forecasts["projected_p90"].astype(float)
    held = ((low <= actual) & (actual <= high)).mean()
    assert 0.7 <= held <= 0.9, held
    assert (low <= forecasts["projected_p50"]).all()
    assert (forecasts["projected_p50"] <= high).all()

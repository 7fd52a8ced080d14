"""The seasonal forecast measured against the burn-rate line on eight simulated weeks.

The stores are tests/simulated_weeks.py's: the sandbox's weekly office fleet, busy on
working days, quiet at night and at weekends, one holiday in October, under three seeds
(each its own fleet's luck: pods left running overnight, a costlier week). From 12:00
UTC of every day of November, the month-end forecast (History.spend's
``projected_p50``) is compared with the month's actual spend (``idle_cost``'s
``total_cost`` over November): on every seed its mean absolute percentage error is at
most half the line's (``projected``), and the 80 % interval (P10-P90) holds the actual
month-end on 70 % to 90 % of the days, pooled over the seeds. Pooled, because thirty
forecasts of one month-end share one outcome: one seed's thirty days are nearly one
draw, and a calibrated interval misses on some seeds and holds on others.
"""

from __future__ import annotations

import pandas as pd
import pytest
from simulated_weeks import write_weeks

from ccanalytics import History

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def month_forecasts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[int, tuple[pd.DataFrame, float]]:
    """Per seed: the 30 forecasts of November's end (one row a day) and the actual spend."""
    out = {}
    for seed in SEEDS:
        store = write_weeks(tmp_path_factory.mktemp(f"weeks{seed}"), seed=seed)
        rows = []
        with History(store) as h:
            total = h.idle_cost("2026-11-01", "2026-12-01", by=None)["total_cost"]
            for day in range(1, 31):
                spend = h.spend(at=f"2026-11-{day:02d}T12:00", by=None)
                rows.append(spend[spend["period"] == "month"].iloc[0])
        out[seed] = (pd.DataFrame(rows).reset_index(drop=True), float(total.iloc[0]))
    return out


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_seasonal_forecast_errs_at_most_half_as_much_as_the_line(
    month_forecasts: dict[int, tuple[pd.DataFrame, float]], seed: int
) -> None:
    forecasts, actual = month_forecasts[seed]
    assert (forecasts["forecast"] == "seasonal").all()
    line = ((forecasts["projected"].astype(float) - actual).abs() / actual).mean()
    seasonal = ((forecasts["projected_p50"].astype(float) - actual).abs() / actual).mean()
    assert seasonal <= line / 2, (seasonal, line)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_80_percent_interval_holds_the_month_end_70_to_90_percent_of_the_days(
    month_forecasts: dict[int, tuple[pd.DataFrame, float]],
) -> None:
    held = []
    for forecasts, actual in month_forecasts.values():
        low = forecasts["projected_p10"].astype(float)
        high = forecasts["projected_p90"].astype(float)
        held.extend((low <= actual) & (actual <= high))
        assert (low <= forecasts["projected_p50"]).all()
        assert (forecasts["projected_p50"] <= high).all()
    assert len(held) == 30 * len(SEEDS)
    assert 0.7 <= sum(held) / len(held) <= 0.9, sum(held) / len(held)

"""History.spend's seasonal forecast columns on a store with a weekly pattern, by hand.

The store is ``weekly_store`` (tests/weekly_store.py): five weeks to Monday Nov 9 00:00
of a 1 USD/h base pod and a 9 USD/h office pod on weekdays 09:00-17:00 (a weekday 96
USD, a weekend day 24, a week 528).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from history_helpers import ts
from weekly_store import write_weekly_store

from ccanalytics import History
from ccanalytics.history import SPEND_COLUMNS


@pytest.fixture(scope="module")
def weekly_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_weekly_store(tmp_path_factory.mktemp("weekly"))


def _row(frame: pd.DataFrame, period: str) -> Any:
    return frame[frame["period"] == period].iloc[0]


def test_the_seasonal_forecast_follows_the_week_where_the_line_does_not(weekly_store: Path) -> None:
    with History(weekly_store) as h:
        frame = h.spend(limit={"month": 2000.0})
        whole = h.spend(by=None)
    assert list(frame.columns) == list(SPEND_COLUMNS)
    month = _row(frame, "month")
    # Now is Monday Nov 9 00:00. Spent in November: Sun 1st 24, five weekdays 480,
    # the weekend 48: 552 USD. The rest: three weeks (3 x 528) and Monday the 30th (96).
    assert month["spent"] == pytest.approx(552.0)
    assert month["forecast"] == "seasonal"
    assert pd.isna(month["forecast_note"])
    expected = 552.0 + 3 * 528.0 + 96.0
    # Five identical weeks: the past forecasts were exact, the interval has no width.
    assert month["projected_p10"] == pytest.approx(expected)
    assert month["projected_p50"] == pytest.approx(expected)
    assert month["projected_p90"] == pytest.approx(expected)
    # The line, by name, stays what it was: 552 + 1 USD/h (midnight) x 528 h.
    assert month["projected"] == pytest.approx(552.0 + 528.0)
    assert pd.isna(month["breach_at"])  # the line never gets to 2000
    # The forecast does: 552 + 2 x 528 = 1608 by Mon 23rd, + 96 x 4 = 1992 by Fri 27th
    # 00:00, then the base pod alone at 1 USD/h: 2000 at 08:00.
    for q in ("p10", "p50", "p90"):
        assert month[f"breach_at_{q}"] == ts("2026-11-27T08:00")
    week = _row(frame, "week")
    assert week["projected_p50"] == pytest.approx(528.0)
    assert _row(whole, "week")["projected_p50"] == pytest.approx(528.0)


def test_a_young_store_falls_back_to_the_line_and_says_so(weekly_store: Path) -> None:
    with History(weekly_store) as h:
        frame = h.spend(at="2026-10-14T12:00")
    month = _row(frame, "month")
    assert month["forecast"] == "burn_rate"
    assert month["forecast_note"] == "2 weeks of history needed, 9.5 days held"
    assert month["projected_p50"] == pytest.approx(month["projected"])
    assert month["projected_p10"] == pytest.approx(month["projected"])

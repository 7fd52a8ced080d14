"""The report's outlook section: the month's seasonal forecast and two idle rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from history_helpers import pod_row, write_store
from weekly_store import write_weekly_store

from ccanalytics.report._outlook import outlook_section


@pytest.fixture(scope="module")
def weekly_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_weekly_store(tmp_path_factory.mktemp("weekly"))


def test_the_month_is_forecast_with_its_interval_beside_the_line(weekly_store: Path) -> None:
    html, sentences = outlook_section(weekly_store)
    # tests/weekly_store.py at Nov 9 00:00: 552 spent, 2232 forecast with no spread,
    # the line 1080 (1 USD/h at midnight for 528 h).
    assert sentences == [
        "This month 552.00 USD spent (since 2026-11-01); the seasonal forecast says "
        "2,232.00 USD (80 % interval 2,232.00 to 2,232.00), the burn-rate line says "
        "1,080.00 USD by 2026-12-01."
    ]
    assert '<section id="outlook">' in html
    # Its pods are busy (80 %) whenever they run: no rule stops anything; its hourly
    # snapshots are too coarse for a 30 min rule.
    assert "Idle rule 2h at 1% over the last 30 days: 0 stops would have saved 0.00 USD" in html
    assert "Idle rule 30m at 1%: not judged" in html


def test_a_young_store_says_why_there_is_no_forecast(tmp_path: Path) -> None:
    rows = [pod_row("a", f"2026-11-20T{h:02d}:00", "p", gpu_util_max=0.0) for h in range(6)]
    write_store(tmp_path, rows)
    html, sentences = outlook_section(tmp_path)
    assert "(no seasonal forecast: 2 weeks of history needed, 0.2 days held)" in sentences[0]
    # Hourly snapshots: a 30 min rule is finer than them, a 2 h one is judged.
    assert (
        "Idle rule 30m at 1%: not judged (rule &#x27;30m at 1%&#x27;: idle_for=30m is shorter"
        in html
    )
    assert "Idle rule 2h at 1% over the last 30 days: 1 stops would have saved 3.00 USD" in html

"""The report's window shows waste by class and the right-sizing hints."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "history"))

from waste_store import write_waste_store

from ccanalytics.report._actions import ranked, window_actions
from ccanalytics.report._window import window_cards, window_findings


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    store = write_waste_store(tmp_path_factory.mktemp("report-waste"))
    return window_findings(store, timedelta(hours=2))


def test_a_card_per_waste_class_with_history_s_figure(findings) -> None:  # type: ignore[no-untyped-def]
    cards = {label: value for label, value, *_ in window_cards(findings)}
    # waste_store's hand computation over the two hours.
    assert cards["idle, empty GPUs"] == "4.00 USD"
    assert cards["idle GPUs with a model loaded"] == "8.00 USD"
    assert cards["stragglers' shortfall"] == "6.40 USD"
    assert cards["straggling ranks"] == "1"  # the count card stays as it was
    assert cards["idle GPUs in busy pods"] == "9.00 USD"
    assert cards["low compute"] == "2.40 USD"


def test_the_hints_are_among_the_ranked_actions(findings) -> None:  # type: ignore[no-untyped-def]
    actions = ranked(window_actions(findings))
    texts = [a.text for a in actions]
    half = next(a for a in actions if a.text.startswith("Right-size half"))
    # 3240 USD a month (6 USD/h x 3/4 x 720 h) is 108 USD a day.
    assert half.usd_per_day == 108.00
    assert "4 x NVIDIA H100 80GB HBM3 to 1 x NVIDIA H100 80GB HBM3" in half.text
    assert "3,240.00 USD/month" in half.text
    assert texts.index(half.text) == 0  # the largest saving first


def test_the_live_report_has_a_waste_card_from_both_frames() -> None:
    from waste_store import TIMES, frames

    from ccanalytics.report import render_report
    from ccanalytics.report._findings import _findings
    from ccanalytics.report._sections import _waste_card

    pods, gpus = frames(TIMES[0])
    # Per hour at 10:00 (waste_store): 2.00 + 4.00 + 3.20 + 4.50 + 2.40 = 16.10.
    label, value, note, flagged = _waste_card(_findings(pods, 10.0, None, gpus))
    assert (label, value, flagged) == ("waste by class", "16.10 USD/h", True)
    assert "idle GPUs in busy pods 4.50 USD/h" in note
    assert "idle GPUs in busy pods 4.50 USD/h" in render_report(pods, gpus)

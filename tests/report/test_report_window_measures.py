"""The report's window reads History.measures for every figure but idle_cost's own six.

``History.idle_cost`` documents six columns (observed_hours, total_cost, idle_gpu_hours,
idle_cost, unused_cost, unobserved_hours); with it cut down to them, the window's cards,
shares and sentences still carry every registry figure, each checked by hand on a small
store: an idle pod (2 USD/h, every GPU at 5 %) and a busy one (4 USD/h at 50 %), seen
hourly for 2 hours of a 3-hour window.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from history_helpers import pod_row, write_store

from ccanalytics.history import History
from ccanalytics.report._window import window_cards, window_findings, window_sentences

SIX = ("observed_hours", "total_cost", "idle_gpu_hours", "idle_cost", "unused_cost")
KEYS = ("cluster_id", "day", "pod_id", "name", "rank")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    rows = []
    for at in ("2026-06-01 00:00", "2026-06-01 01:00", "2026-06-01 02:00"):
        rows += [
            pod_row("c", at, "idle", cost=2.0, gpu_util_mean=5.0, gpu_util_max=5.0),
            pod_row("c", at, "busy", cost=4.0, gpu_util_mean=50.0, gpu_util_max=60.0),
        ]
    write_store(tmp_path, rows)
    whole = History.idle_cost

    def six_columns(self: History, *args: Any, **kwargs: Any) -> pd.DataFrame:
        frame = whole(self, *args, **kwargs)
        kept = [c for c in frame.columns if c in (*KEYS, *SIX, "unobserved_hours")]
        return frame[kept]

    monkeypatch.setattr(History, "idle_cost", six_columns)
    return tmp_path


def test_the_window_s_figures_beyond_idle_cost_s_six_are_history_measures(store: Path) -> None:
    found = window_findings(store, timedelta(hours=3))
    t = found.totals
    assert t["total_cost"] == pytest.approx(12.0)  # (2 + 4) USD/h for 2 h
    assert t["idle_cost_share"] == pytest.approx(4.0 / 12.0)
    assert t["unused_cost_share"] == pytest.approx(7.8 / 12.0)  # 2 x 0.95 x 2 + 4 x 0.5 x 2
    assert t["idle_empty_cost"] == pytest.approx(4.0)  # a waste class
    assert t["list_cost_per_gpu_hour"] == pytest.approx(12.0 / 32.0)  # 16 GPU-hours each
    assert t["idle_and_unused_cost_share"] == pytest.approx(8.0 / 12.0)  # 4 idle + 4 unused
    assert t["stragglers"] == 0
    assert t["unobserved_hours"] == pytest.approx(1.0)
    cards = {label: (shown, note) for label, shown, note, _ in window_cards(found)}
    assert cards["idle GPU spend"] == ("4.00 USD", "idle share of spend 33%")
    assert cards["unused GPU spend"] == ("7.80 USD", "unused share of spend 65%")
    assert cards["GPU memory at risk"][0] == "0.0 h"
    assert "4.00 USD (33%) on idle GPU pods" in window_sentences(found)[0]


def test_the_window_s_waste_chart_reads_history_s_measures_per_cluster(store: Path) -> None:
    row = window_findings(store, timedelta(hours=3)).waste_by_cluster.iloc[0]
    assert row["cluster_id"] == "c"
    assert row["idle_cost"] == pytest.approx(4.0)  # the idle pod's whole cost
    assert row["busy_unused_cost"] == pytest.approx(4.0)  # 4 x (1 - 0.5) x 2 h, busy only
    assert row["idle_and_unused_cost_share"] == pytest.approx(8.0 / 12.0)

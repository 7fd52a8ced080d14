"""The proof measure: "saturated", a running GPU pod whose least busy GPU is above the
saturation line (95 %), declared once in the registry and answered on every path.

One cluster, snapshots every 5 minutes for an hour, four 8-GPU pods at 1 USD/h: p0's
least busy GPU at 97 % (saturated), p1's at 90 % (saturated below a 90 % line only),
p2 at 99 % but EXITED (never judged), p3 reporting no minimum (unknown, never
saturated). So: 1 saturated pod live, 1.0 pod-hour over the hour; 2.0 at a line of 85.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, pods_table, ts, write_store

from ccanalytics import analysis
from ccanalytics.cli import main
from ccanalytics.history import History, judge_policy, parse_policy, render_textfile
from ccanalytics.measures import Params
from ccanalytics.report._window import window_cards, window_findings

_PODS = (
    ("p0", "RUNNING", 97.0),
    ("p1", "RUNNING", 90.0),
    ("p2", "EXITED", 99.0),
    ("p3", "RUNNING", None),
)


def _rows(when: str) -> list[dict[str, object]]:
    return [
        pod_row(
            "cl-a",
            when,
            pod,
            status=status,
            gpu_util_min=low,
            gpu_util_mean=98.0,
            gpu_util_max=99.0,
        )
        for pod, status, low in _PODS
    ]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    times = [str(ts("2026-04-01 10:00") + pd.Timedelta(minutes=5 * i)) for i in range(13)]
    write_store(tmp_path / "store", [row for t in times for row in _rows(t)])
    return tmp_path / "store"


def test_the_live_summary_counts_saturated_pods() -> None:
    frame = pods_table(_rows("2026-04-01 10:00"))
    assert analysis.cluster_summary(frame)["saturated_pods"].tolist() == [1]
    at_85 = analysis.cluster_summary(frame, params=Params(saturation_threshold=85))
    assert at_85["saturated_pods"].tolist() == [2]


def test_history_the_report_a_policy_and_its_textfile(store: Path) -> None:
    with History(store) as h:
        hours = h.measures("saturated_pod_hours", timedelta(hours=1))["saturated_pod_hours"]
        assert hours.tolist() == [pytest.approx(1.0)]
        at_85 = h.measures(
            "saturated_pod_hours",
            timedelta(hours=1),
            by=None,
            params=Params(saturation_threshold=85),
        )
        assert at_85["saturated_pod_hours"].tolist() == [pytest.approx(2.0)]
        report = judge_policy(parse_policy("[[rule]]\nmax_saturated_pod_hours = 0.5\n"), h)
    (judged,) = report.judgements
    assert judged.breached and judged.value == pytest.approx(1.0)
    assert "every GPU was above the saturation line for 1.0 h of pod time" in judged.sentence
    text = render_textfile(report).decode()
    assert 'ccanalytics_saturated_pod_seconds{cluster="cl-a",window="1h"} 3600.0' in text
    cards = {
        label: shown
        for label, shown, _, _ in window_cards(window_findings(store, timedelta(hours=1)))
    }
    assert cards["saturated GPU pods"] == "1.0 h"


def test_check_has_its_flag_and_its_line(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "--store", str(store), "--max-saturated-pod-hours", "0.5"]
    assert main(argv) == 3
    assert "over the limit of 0.5 h" in capsys.readouterr().out
    assert main([*argv, "--saturation-threshold", "98"]) == 0  # p0's 97 % is below it
    assert (
        main([*argv[:-2], "--max-saturated-pod-hours", "1.5", "--saturation-threshold", "85"]) == 3
    )

"""A measure added by one registry entry: GPU memory above 95 % is at risk.

Live frame, History, a policy key, the textfile's metric and the report's card all come
from ``ccanalytics.measures.MEASURES``; numbers by hand.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from history_helpers import pod_row, pods_table, write_store

from ccanalytics import analysis
from ccanalytics.history import History, check, parse_policy, render_textfile
from ccanalytics.measures import Params
from ccanalytics.report._window import window_cards, window_findings

TIMES = ("2026-11-20 10:00", "2026-11-20 11:00", "2026-11-20 12:00")


def _pods(t: str) -> list[dict[str, object]]:
    # Fullest GPU memory at 99, 96, 95 (not above) and 40 %; one pod without a status.
    return [
        pod_row("cl-a", t, "a", gpu_mem_util_max=99.0),
        pod_row("cl-a", t, "b", gpu_mem_util_max=96.0),
        pod_row("cl-a", t, "c", gpu_mem_util_max=95.0),
        pod_row("cl-a", t, "d", gpu_mem_util_max=40.0),
        pod_row("cl-a", t, "e", gpu_mem_util_max=99.0, status=None),
    ]


def test_the_live_summary_counts_the_pods_at_risk() -> None:
    row = analysis.cluster_summary(pods_table(_pods(TIMES[0]))).iloc[0]
    assert row["memory_risk_pods"] == 2
    strict = analysis.cluster_summary(
        pods_table(_pods(TIMES[0])), params=Params(memory_threshold=90)
    )
    assert strict.iloc[0]["memory_risk_pods"] == 3


@pytest.fixture
def store(tmp_path: Path) -> Path:
    write_store(tmp_path, [row for t in TIMES for row in _pods(t)])
    return tmp_path


def test_history_a_policy_the_textfile_and_the_report_carry_it(store: Path) -> None:
    # 2 pods at risk for the 2 covered hours: 4 pod-hours.
    with History(store) as h:
        hours = h.measures("memory_risk_pod_hours", by=None).iloc[0]["memory_risk_pod_hours"]
        assert hours == pytest.approx(4.0)
    policy = parse_policy('[[rule]]\nwindow = "2h"\nmax_memory_risk_pod_hours = 1\n')
    run = check(store, policy=policy)
    assert run.policy is not None and run.breached
    (judged,) = run.policy.judgements
    assert judged.value == pytest.approx(4.0)
    assert "GPU memory was above the risk line for 4.0 h of pod time" in judged.sentence
    text = render_textfile(run.policy).decode()
    # 4 pod-hours in seconds, Prometheus' base unit of time.
    assert 'ccanalytics_memory_risk_pod_seconds{cluster="cl-a",window="2h"} 14400.0' in text
    cards = window_cards(window_findings(store, timedelta(hours=2)))
    assert ("GPU memory at risk", "4.0 h") in [(c[0], c[1]) for c in cards]

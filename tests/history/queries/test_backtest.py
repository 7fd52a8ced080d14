"""History.backtest: idle rules replayed over a small store, against a hand computation.

The store: cluster ``a`` is snapshotted every 15 minutes from 00:00 to 04:45 (20
snapshots; the last stands for no time, so the window covers [00:00, 04:45)). Its
pod ``p1`` costs 2 USD/h on 8 GPUs and is, by minute of the day:

- busy (busiest GPU 85 %) at 0 and 15,
- idle (0.5 %) at 30, 45, 60, 75,
- busy at 90,
- idle at 105 ... 240 (10 snapshots),
- busy at 255, 270, 285.

Cluster ``b`` has one pod, always busy, at 1 USD/h: no rule ever stops it.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, write_store

from ccanalytics import History
from ccanalytics.errors import ArgumentsError
from ccanalytics.history import BACKTEST_COLUMNS, IdleRule

IDLE_MINUTES = {30, 45, 60, 75, *range(105, 241, 15)}


def _stamp(minute: int) -> str:
    return f"2026-11-20T{minute // 60:02d}:{minute % 60:02d}"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = []
    for minute in range(0, 286, 15):
        util = 0.5 if minute in IDLE_MINUTES else 85.0
        rows.append(
            pod_row("a", _stamp(minute), "p1", cost=2.0, gpu_util_max=util, gpu_util_mean=util)
        )
        rows.append(pod_row("b", _stamp(minute), "q1", cost=1.0))
    path = tmp_path_factory.mktemp("backtest")
    write_store(path, rows)
    return path


RULES = [
    IdleRule("30m", 1, name="30m at 1%"),
    IdleRule("2h", 1, name="2h at 1%"),
    IdleRule("15m", 90, name="15m at 90%"),
]


def _by_rule(frame: pd.DataFrame) -> dict[str, pd.Series]:
    return {str(row["rule"]): row for _, row in frame.iterrows()}


def test_several_rules_side_by_side_match_the_hand_computation(store: Path) -> None:
    with History(store) as h:
        frame = h.backtest(RULES, by=None)
        total = float(h.idle_cost(by=None)["total_cost"].iloc[0])
    assert list(frame.columns) == [c for c in BACKTEST_COLUMNS if c not in ("cluster_id", "pod_id")]
    rows = _by_rule(frame)
    assert list(rows) == ["30m at 1%", "2h at 1%", "15m at 90%"]
    # 30m at 1 %: idle from 30, stopped at 60 (30 min idle); saved 60 and 75 (30 min at
    # 2 USD/h on 8 GPUs) until busy at 90, 30 min after the stop: a false stop, which
    # interrupts the busy stretch at 90 (15 min, 0.50 USD). Idle again from 105,
    # stopped at 135, saved 135 ... 240 (2 h: 4 USD, 16 GPU-h); busy at 255, 2 h later.
    first = rows["30m at 1%"]
    assert first["stops"] == 2
    assert first["false_stops"] == 1
    assert first["saved_usd"] == pytest.approx(5.0)
    assert first["saved_gpu_hours"] == pytest.approx(20.0)
    assert first["interrupted_usd"] == pytest.approx(0.5)
    assert first["idle_for"] == pd.Timedelta("30min")
    # 2h at 1 %: the first idle stretch (45 min from its first snapshot) never gets
    # there; the second, from 105, is stopped at 225: saved 225 and 240 (1 USD, 4 GPU-h),
    # busy again at 255, 30 min later: a false stop, interrupting 255 and 270 (1 USD;
    # the last snapshot, 285, stands for no time).
    second = rows["2h at 1%"]
    assert (second["stops"], second["false_stops"]) == (1, 1)
    assert second["saved_usd"] == pytest.approx(1.0)
    assert second["saved_gpu_hours"] == pytest.approx(4.0)
    assert second["interrupted_usd"] == pytest.approx(1.0)
    # 15m at 90 %: every snapshot of p1 is below 90 % and so is q1's 85 %: both pods
    # are stopped at 00:15 and never seen busy again: saved 4.5 h each (15 ... 270),
    # 9 + 4.5 USD and 36 + 36 GPU-h; no false stop.
    third = rows["15m at 90%"]
    assert (third["stops"], third["false_stops"]) == (2, 0)
    assert third["saved_usd"] == pytest.approx(13.5)
    assert third["saved_gpu_hours"] == pytest.approx(72.0)
    assert third["interrupted_usd"] == pytest.approx(0.0)
    # The spend the savings are a share of is idle_cost's total_cost, the one rule of time.
    assert frame["total_cost"].tolist() == pytest.approx([total] * 3)
    assert third["saved_share"] == pytest.approx(13.5 / total)


def test_by_cluster_and_by_pod_split_the_same_sums(store: Path) -> None:
    with History(store) as h:
        by_cluster = h.backtest(RULES[:1])
        by_pod = h.backtest(RULES[:1], by="pod")
    assert by_cluster["cluster_id"].tolist() == ["a", "b"]
    assert by_cluster["stops"].tolist() == [2, 0]
    assert by_cluster["saved_usd"].tolist() == pytest.approx([5.0, 0.0])
    assert by_cluster["total_cost"].tolist() == pytest.approx([9.5, 4.75])  # 4.75 h
    assert by_pod[["cluster_id", "pod_id"]].values.tolist() == [["a", "p1"], ["b", "q1"]]
    assert by_pod["saved_usd"].tolist() == pytest.approx([5.0, 0.0])


def test_regret_and_clusters_change_what_counts(store: Path) -> None:
    with History(store) as h:
        strict = h.backtest(RULES[:1], by=None, regret=timedelta(minutes=15))
        only_b = h.backtest([IdleRule("15m", 90, clusters=["b"])], by=None)
    # The stop at 60 is busy again 30 min later: beyond a 15 min regret.
    assert strict["false_stops"].iloc[0] == 0
    assert strict["interrupted_usd"].iloc[0] == pytest.approx(0.0)
    # Only b's pod is judged: stopped at 00:15, 4.5 h saved at 1 USD/h.
    assert only_b["stops"].iloc[0] == 1
    assert only_b["saved_usd"].iloc[0] == pytest.approx(4.5)
    assert only_b["rule"].iloc[0] == "15m at 90%"


def test_a_window_replays_only_its_snapshots(store: Path) -> None:
    with History(store) as h:
        frame = h.backtest(RULES[:1], since="2026-11-20T01:30", by=None)
    # From 01:30 only the second stretch: stopped at 135, 4 USD saved, not a false stop.
    assert (frame["stops"].iloc[0], frame["false_stops"].iloc[0]) == (1, 0)
    assert frame["saved_usd"].iloc[0] == pytest.approx(4.0)


def test_memory_line_keeps_a_loaded_pod_running(tmp_path: Path) -> None:
    rows = [
        pod_row("a", _stamp(m), "p", gpu_util_max=0.0, gpu_util_mean=0.0, gpu_mem_util_max=60.0)
        for m in range(0, 121, 15)
    ]
    write_store(tmp_path, rows)
    with History(tmp_path) as h:
        loose = h.backtest([IdleRule("30m", 1)], by=None)
        careful = h.backtest([IdleRule("30m", 1, memory_threshold=50)], by=None)
    assert loose["stops"].iloc[0] == 1  # stopped at 00:30: 1.5 h saved at 1 USD/h
    assert loose["saved_usd"].iloc[0] == pytest.approx(1.5)
    assert careful["stops"].iloc[0] == 0


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ([IdleRule("10m", 1)], "idle_for=10m is shorter than the snapshot spacing of cluster"),
        ([IdleRule("30m", 1, name="x"), IdleRule("2h", 0, name="x")], "rule name 'x'"),
        ([], "at least one rule"),
    ],
)
def test_bad_rules_are_one_line_typed_errors(
    store: Path, rules: list[IdleRule], message: str
) -> None:
    with History(store) as h, pytest.raises(ArgumentsError, match=message) as caught:
        h.backtest(rules)
    assert "\n" not in str(caught.value)


def test_bad_rule_values_fail_when_the_rule_is_made() -> None:
    with pytest.raises(ArgumentsError, match="idle_threshold=-1 must be at least 0"):
        IdleRule("30m", -1)
    with pytest.raises(ArgumentsError, match="idle_for="):
        IdleRule("soon", 1)
    with pytest.raises(ArgumentsError, match="memory_threshold="):
        IdleRule("30m", 1, memory_threshold=-5)


def test_an_empty_store_backtests_to_no_rows(tmp_path: Path) -> None:
    from history_helpers import write_empty_listing

    with History(write_empty_listing(tmp_path)) as h:
        frame = h.backtest([IdleRule("30m", 1)], by=None)
    assert frame.empty
    assert list(frame.columns)[:2] == ["rule", "idle_for"]

"""``ccanalytics history backtest``: every pair of --idle-for and --idle-threshold as a
rule, History.backtest's figures as JSON, bad rules one line and exit 2.

The store is tests/history/queries/test_backtest.py's: p1 in cluster a at 2 USD/h,
idle 00:30-01:30 and 01:45-04:15, busy otherwise, every 15 minutes to 04:45.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from history_helpers import pod_row, write_store

from ccanalytics.cli import main

IDLE_MINUTES = {30, 45, 60, 75, *range(105, 241, 15)}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = []
    for minute in range(0, 286, 15):
        util = 0.5 if minute in IDLE_MINUTES else 85.0
        stamp = f"2026-11-20T{minute // 60:02d}:{minute % 60:02d}"
        rows.append(pod_row("a", stamp, "p1", cost=2.0, gpu_util_max=util, gpu_util_mean=util))
    path = tmp_path_factory.mktemp("backtest-cli")
    write_store(path, rows)
    return path


def test_every_pair_of_the_lists_is_a_rule(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        ["history", "backtest", "--store", str(store), "--idle-for", "30m,2h",
         "--idle-threshold", "1,90", "--by", "none", "--format", "json"]
    )  # fmt: skip
    assert status == 0
    rows = {row["rule"]: row for row in json.loads(capsys.readouterr().out)}
    assert list(rows) == ["30m at 1%", "30m at 90%", "2h at 1%", "2h at 90%"]
    # By hand (test_backtest.py): 30m at 1 % stops twice, saves 5 USD, one false stop
    # interrupting 0.50 USD; 2h at 1 % stops once, saves 1 USD, a false stop of 1 USD.
    assert (rows["30m at 1%"]["stops"], rows["30m at 1%"]["false_stops"]) == (2, 1)
    assert rows["30m at 1%"]["saved_usd"] == pytest.approx(5.0)
    assert rows["2h at 1%"]["interrupted_usd"] == pytest.approx(1.0)
    # At 90 % every snapshot is idle: stopped at 00:30 (30 min) or 02:00 (2 h), never busy again.
    assert rows["30m at 90%"]["saved_usd"] == pytest.approx(2.0 * 4.25)
    assert rows["2h at 90%"]["saved_usd"] == pytest.approx(2.0 * 2.75)


def test_regret_is_an_option(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        ["history", "backtest", "--store", str(store), "--idle-for", "30m",
         "--idle-threshold", "1", "--regret", "15m", "--by", "none", "--format", "json"]
    )  # fmt: skip
    assert status == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["false_stops"] == 0


@pytest.mark.parametrize(
    ("idle_for", "threshold", "message"),
    [
        ("10m", "1", "--idle-for 10m is shorter than the snapshot spacing of cluster a (15m)"),
        ("30m", "-1", "--idle-threshold -1.0 must be at least 0 (percent)"),
        ("30m,30m", "1", "--idle-for/--idle-threshold: the rule name '30m at 1%' is used twice"),
    ],
)
def test_bad_rules_are_one_line_and_exit_2(
    store: Path, capsys: pytest.CaptureFixture[str], idle_for: str, threshold: str, message: str
) -> None:
    status = main(
        ["history", "backtest", "--store", str(store), "--idle-for", idle_for,
         "--idle-threshold", threshold]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    assert message in err
    assert err.count("\n") == 1

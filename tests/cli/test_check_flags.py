"""``ccanalytics check``'s flags: one per policy key and per rule threshold, judged as a
policy rule over every cluster together; a threshold flag no limit is judged at is refused.

One cluster, one running 8-GPU pod at 1 USD/h whose fullest GPU's memory is at 60 %,
snapshots every 5 minutes for an hour: over the last hour it is 1.0 pod-hour of memory
at risk when the risk line is below 60 %, and none at the default 95 %.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, ts, write_store

from ccanalytics.cli import main


@pytest.fixture
def store(tmp_path: Path) -> Path:
    rows = [
        pod_row(
            "cl-a",
            str(ts("2026-04-01 10:00") + pd.Timedelta(minutes=5 * i)),
            "p0",
            gpu_mem_util_max=60.0,
        )
        for i in range(13)
    ]
    write_store(tmp_path / "store", rows)
    return tmp_path / "store"


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["check", *argv])
    except SystemExit as exit_:  # argparse
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_memory_line_judges_the_memory_risk_limit(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--store", str(store), "--max-memory-risk-pod-hours", "0.5"]
    code, out, _ = _check(capsys, *argv, "--memory-threshold", "50")
    assert code == 3
    assert "1.0 h" in out and "over the limit of 0.5 h" in out
    assert _check(capsys, *argv)[0] == 0  # at the default 95 %, nothing is at risk
    assert _check(capsys, *argv, "--memory-threshold", "70")[0] == 0


def test_a_threshold_no_limit_reads_is_refused(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _check(
        capsys, "--store", str(store), "--max-idle-cost", "1000", "--memory-threshold", "50"
    )
    assert code == 2 and out == ""
    assert "--memory-threshold" in err and "--max-memory-risk-pod-hours" in err
    assert "Traceback" not in err


def test_a_threshold_flag_beside_a_policy_is_refused(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[[rule]]\nmax_memory_risk_pod_hours = 0.5\n")
    code, out, err = _check(
        capsys, "--store", str(store), "--policy", str(policy), "--memory-threshold", "50"
    )
    assert code == 2 and out == ""
    assert "--memory-threshold" in err and "memory_threshold" in err


def test_every_policy_key_is_a_flag_and_every_threshold_too() -> None:
    from ccanalytics.cli import build_parser
    from ccanalytics.measures import THRESHOLDS, policy_keys

    check = build_parser()._subparsers._group_actions[0].choices["check"]  # type: ignore[union-attr]
    options = {o for action in check._actions for o in action.option_strings}
    assert {"--" + key.replace("_", "-") for key in policy_keys()} <= options
    assert {t.flag for t in THRESHOLDS} <= options


def test_the_flags_judge_every_cluster_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two clusters, one idle 1 USD/h pod each, for an hour: 1.00 USD idle each, 2.00 in
    # all. The flags' limit of 1.50 is breached by the fleet, which no cluster is alone.
    rows = [
        pod_row(
            cluster,
            str(ts("2026-04-01 10:00") + pd.Timedelta(minutes=5 * i)),
            "p0",
            gpu_util_mean=1.0,
            gpu_util_max=2.0,
        )
        for i in range(13)
        for cluster in ("cl-a", "cl-b")
    ]
    write_store(tmp_path / "store", rows)
    code, out, _ = _check(capsys, "--store", str(tmp_path / "store"), "--max-idle-cost", "1.5")
    assert code == 3
    assert out.startswith(
        "all clusters: idle GPUs cost 2.00 USD in the last 1 h, over the limit of 1.50 USD"
    )
    policy = tmp_path / "policy.toml"
    policy.write_text('[[rule]]\nwindow = "1h"\nmax_idle_cost = 1.5\n')
    assert _check(capsys, "--store", str(tmp_path / "store"), "--policy", str(policy))[0] == 0


def test_a_budget_flag_is_judged_per_period(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 1 USD/h for an hour: 1.00 USD spent today.
    code, out, _ = _check(capsys, "--store", str(store), "--max-spend", "day=0.5")
    assert code == 3 and "all clusters: 1.00 USD spent today" in out
    assert _check(capsys, "--store", str(store), "--max-spend", "day=2")[0] == 0
    code, _, err = _check(capsys, "--store", str(store), "--max-spend", "fortnight=2")
    assert code == 2 and "PERIOD=USD" in err

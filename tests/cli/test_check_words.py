"""check says what it knows: a non-zero share is never 0 %, and a window longer than the
history says how much of it was observed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, ts, write_store

from ccanalytics.cli import main


def _snapshots(start: str, hours: float, *, idle_cost: float) -> list[dict[str, object]]:
    """Every 5 minutes: six busy 12 USD/h ranks, and one idle pod at ``idle_cost`` USD/h."""
    rows = []
    for i in range(int(hours * 12) + 1):
        when = str(ts(start) + pd.Timedelta(minutes=5 * i))
        rows += [pod_row("cl-train", when, f"t{r}", rank=r, cost=12.0) for r in range(6)]
        rows.append(
            pod_row(
                "cl-dev",
                when,
                "nb",
                cost=idle_cost,
                gpu_count=1,
                gpu_util_mean=1.0,
                gpu_util_max=2.0,
            )
        )
    return rows


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_small_idle_share_is_never_printed_as_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 0.25 USD/h idle of 72.25 USD/h: 0.35 %.
    write_store(tmp_path, _snapshots("2026-04-01 10:00", 1, idle_cost=0.25))
    code, out, _ = _run(capsys, "--store", str(tmp_path), "--max-idle-cost-share", "0")
    assert code == 3
    assert "idle GPUs were 0.3% of the spend" in out
    assert " 0% of" not in out


def test_a_window_longer_than_the_history_says_what_was_observed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_store(tmp_path, _snapshots("2026-04-01 10:00", 25, idle_cost=0.5))
    code, out, _ = _run(
        capsys, "--store", str(tmp_path), "--window", "7d", "--max-idle-cost", "1000", "-v"
    )
    assert code == 0
    assert "Over the last 7 days (to 2026-04-02 11:00 UTC; snapshots cover only 25 h of it)" in out


@pytest.mark.parametrize(
    "times",
    [
        ["2026-04-01 10:00"],  # a young store: one snapshot
        # After an outage longer than the window: the first snapshot since.
        [f"2026-04-01 10:{m:02d}" for m in range(0, 60, 5)] + ["2026-04-03 09:00"],
    ],
    ids=["one snapshot", "after an outage"],
)
def test_a_window_no_snapshot_covers_is_a_result_saying_no_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], times: list[str]
) -> None:
    write_store(tmp_path, [pod_row("cl-dev", str(ts(t)), "nb", gpu_util_max=1.0) for t in times])
    code, out, err = _run(capsys, "--store", str(tmp_path), "--max-idle-cost", "0", "-v")
    assert (code, err) == (0, "")  # nothing covered: nothing breached, and no failure
    assert "no data in the window" in out
    assert "0.00 USD spent, 0.00 USD on idle GPUs" in out

"""A breach whose alert could not be posted exits 1, the network failed.

The README and the docs' exit table say 1 when the network failed; a breach met by an
unreachable webhook exited 3, as if the alert had gone out. The alert reached no one:
that is the failure cron must see. The breach sentences still go to stdout and the
failed POST is named on stderr. ``check --help``, the README and the exit table say it
alike.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from ccanalytics.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "history"))
from budget_store import write_budget_store
from history_helpers import pod_row, write_store

ROOT = Path(__file__).resolve().parents[2]
POLICY = """
[[rule]]
name = "fleet"
clusters = "cl-*"
max_projected_spend = { month = 2000 }
notify_env = "CC_DEAD_HOOK"
"""


def _refusing_url() -> str:
    """A loopback URL nothing listens on (the port was just free): connection refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["check", *argv])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return write_budget_store(tmp_path / "store")


def test_a_policy_breach_whose_post_fails_exits_1(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CC_DEAD_HOOK", _refusing_url())
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    code, out, err = _run(capsys, "--store", str(store), "--policy", str(policy))
    assert code == 1, err
    assert out.startswith("cl-b: 2,184.00 USD projected for the month")  # still printed
    assert "notification failed" in err


def test_a_flag_breach_whose_post_fails_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One idle 1 USD/h pod for 2 h: 2 USD of idle cost, over a limit of 1.
    hours = ["2026-11-20T00:00Z", "2026-11-20T01:00Z", "2026-11-20T02:00Z"]
    write_store(
        tmp_path, [pod_row("a", h, "p1", gpu_util_mean=0.0, gpu_util_max=0.0) for h in hours]
    )
    argv = ["--store", str(tmp_path), "--window", "24h", "--max-idle-cost", "1"]
    code, _, err = _run(capsys, *argv, "--notify", _refusing_url())
    assert code == 1, err
    assert "notification failed" in err
    assert _run(capsys, *argv)[0] == 3  # the same breach without a webhook: 3


def test_help_readme_and_exit_table_agree_that_a_failed_notification_is_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "1 the store" in help_text and "a notification cannot be posted" in help_text
    # The README's one sentence for all commands (test_exit_statuses checks it is the
    # table's summary): its 1 is any failure that is not a finding, a notification's too.
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "1 the API, the network or the store failed, or anything else failed" in readme
    table = (ROOT / "docs" / "guide" / "alerts.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| 1 |"))
    assert "notification" in row and "cannot be posted" in row

"""Every command's exit statuses: one table, printed by its ``--help``; its summary in the
top-level ``--help`` and the README; ``ccanalytics`` alone lists the commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ccanalytics.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ["pods", "report", "collect", "audit-keys", "check", "history", "export", "sandbox"]


def _words(text: str) -> str:
    return " ".join(text.split())


def test_no_arguments_lists_every_command_and_exits_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ccanalytics"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr == ""
    assert "Traceback" not in done.stdout
    for command in COMMANDS:
        assert f"\n    {command} " in done.stdout or f"\n    {command}\n" in done.stdout
    assert "exit status" in done.stdout.lower()


def test_every_command_has_a_row_in_the_table() -> None:
    from ccanalytics.cli._exits import EXIT_STATUSES

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert sorted(EXIT_STATUSES) == sorted(sub.choices)
    for statuses in EXIT_STATUSES.values():
        codes = [code for code, _ in statuses]
        assert codes == sorted(codes) and codes[0] == 0 and 2 in codes


@pytest.mark.parametrize("command", COMMANDS)
def test_each_help_says_its_statuses(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    from ccanalytics.cli._exits import EXIT_STATUSES

    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = _words(capsys.readouterr().out)
    for code, meaning in EXIT_STATUSES[command]:
        assert f"{code} {_words(meaning)}" in help_text


def test_the_summary_names_every_status_beyond_the_shared_three(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ccanalytics.cli._exits import EXIT_STATUSES, summary

    said = _words(summary())
    for command, statuses in EXIT_STATUSES.items():
        for code, _ in statuses:
            if code > 2:
                assert f"{command}: " in said and f" {code} " in said, (command, code)
    with pytest.raises(SystemExit):
        main(["--help"])
    assert said in _words(capsys.readouterr().out)
    assert said in _words((ROOT / "README.md").read_text())


def test_a_history_query_and_export_showback_say_them_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ccanalytics.cli._exits import EXIT_STATUSES

    for words, command in (
        (["history", "idle-cost", "--help"], "history"),
        (["export", "showback", "--help"], "export"),
    ):
        with pytest.raises(SystemExit):
            main(words)
        help_text = _words(capsys.readouterr().out)
        for code, meaning in EXIT_STATUSES[command]:
            assert f"{code} {_words(meaning)}" in help_text


def test_audit_keys_has_its_own_status_for_bad_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "authorized_keys"
    keys.write_text("ssh-ed25519 not-base64!!! broken\n")
    assert main(["audit-keys", str(keys)]) == 5
    assert main(["audit-keys", str(tmp_path / "missing")]) == 2  # cannot be read: input
    capsys.readouterr()

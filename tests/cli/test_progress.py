"""Long work shows progress on stderr when stderr is a terminal, and is quiet in cron (not a
terminal) and under ``--quiet``.

The terminal is stood in for by a stderr whose ``isatty`` says so (pytest's capture);
what is checked is what the command writes there.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ccanalytics.cli import main

FIVE = ["cl-bringup", "cl-etl-cpu", "cl-finetune-7b", "cl-infer-prod", "cl-research-dev"]
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDtAy8I+5WrsFfvvRZoYXy4KTQfxboVCJoWBCvDOsGGT bob@ws\n"


def _terminal(monkeypatch: pytest.MonkeyPatch, stream: str = "stderr") -> None:
    monkeypatch.setattr(getattr(sys, stream), "isatty", lambda: True, raising=False)


def test_loading_many_clusters_shows_a_bar_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _terminal(monkeypatch)
    assert main(["pods", *FIVE, "--sandbox", "--format", "csv"]) == 0
    err = capsys.readouterr().err
    assert "clusters" in err and "5/5" in err


@pytest.mark.parametrize("words", [["--quiet"], ["-q"], ["--no-progress"]])
def test_quiet_means_nothing_on_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, words: list[str]
) -> None:
    _terminal(monkeypatch)
    assert main(["pods", *FIVE, "--sandbox", "--format", "csv", *words]) == 0
    assert capsys.readouterr().err == ""


def test_not_a_terminal_is_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pods", *FIVE, "--sandbox", "--format", "csv"]) == 0
    assert capsys.readouterr().err == ""


def test_a_large_key_file_shows_its_bytes_read_when_the_output_goes_to_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = tmp_path / "authorized_keys"
    keys.write_text(KEY * 20_000)  # 1.3 MB
    _terminal(monkeypatch)
    assert main(["audit-keys", "--format", "csv", str(keys)]) == 0
    out, err = capsys.readouterr()
    assert out.count("\n") == 20_001  # the header and every key
    assert "authorized_keys" in err and "100%" in err
    assert main(["audit-keys", "--format", "csv", "--quiet", str(keys)]) == 0
    assert capsys.readouterr().err == ""


def test_no_bar_over_a_table_on_the_same_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = tmp_path / "authorized_keys"
    keys.write_text(KEY * 20_000)
    _terminal(monkeypatch)
    _terminal(monkeypatch, "stdout")  # the rows themselves are the progress
    assert main(["audit-keys", str(keys)]) == 0
    assert capsys.readouterr().err == ""


def test_collect_under_quiet_says_only_what_went_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "store")
    assert main(["collect", "cl-infer-prod", "--store", store, "--sandbox"]) == 0
    assert "snapshot" in capsys.readouterr().err
    assert main(["collect", "cl-infer-prod", "--store", store, "--sandbox", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["collect", "cl-nope", "--store", store, "--sandbox", "--quiet"]) == 1
    assert "cl-nope" in capsys.readouterr().err

"""``ccanalytics check`` on a store it cannot read says so in one line, exit 1, never a
traceback: a store path that is a file, a store holding a file that is not a snapshot of
ours."""

from __future__ import annotations

from pathlib import Path

import pytest
from history_helpers import FOREIGN, write_foreign_store

from ccanalytics.cli import main


@pytest.mark.parametrize("kind", sorted(FOREIGN))
def test_check_on_a_store_with_a_foreign_file_is_one_line_and_exit_1(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, path = write_foreign_store(tmp_path, kind)
    code = main(["check", "--store", str(store), "--max-idle-cost", "1"])
    _, err = capsys.readouterr()
    assert code == 1
    assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err


def test_check_on_a_path_that_is_a_file_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "store"
    a_file.write_text("not a folder")
    code = main(["check", "--store", str(a_file), "--max-idle-cost", "1"])
    _, err = capsys.readouterr()
    assert code == 1
    assert err.count("\n") == 1 and "not a folder" in err and "Traceback" not in err

"""``audit-keys --format csv`` holds hostile comments and file names inert.

A key's comment is its owner's text; ``=HYPERLINK(...)`` as a comment cell would run
when the audit is opened in a spreadsheet. Run as a user runs it, in a subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from csv_cells import assert_inert, rows

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
OTHER = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMTz/QUztjDrFzndCmJlRACH8sraYQDA0M1h1JHoYgYj"
COMMENTS = ['=HYPERLINK("http://evil.invalid","x")', "@SUM(1+1)"]


def test_comments_and_file_names_are_inert(tmp_path: Path) -> None:
    keys = tmp_path / "+cmd.pub"
    # The first line is plain (the fast path), the second has options (the full path).
    keys.write_text(f"{KEY} {COMMENTS[0]}\nno-pty {OTHER} {COMMENTS[1]}\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "ccanalytics", "audit-keys", "--format", "csv", keys.name],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr  # options the API cannot store: an error
    written = rows(done.stdout)
    assert_inert([row["comment"] for row in written], COMMENTS)
    assert {row["file"] for row in written} == {"'+cmd.pub"}
    assert [row["line_no"] for row in written] == ["1", "2"]


def test_a_carriage_return_in_a_cell_stays_in_its_row(tmp_path: Path) -> None:
    keys = tmp_path / "keys\r=1+1.pub"  # a file name may hold one
    keys.write_text(f'{KEY} plain\ncommand="echo\r=1+1" {OTHER} opts\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "ccanalytics", "audit-keys", "--format", "csv", keys.name],
        capture_output=True, text=False, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    written = rows(done.stdout.decode("utf-8"))
    assert [row["line_no"] for row in written] == ["1", "2"]  # no row split at a "\r"
    assert {row["file"] for row in written} == {keys.name}
    assert written[1]["options"] == 'command="echo\r=1+1"'

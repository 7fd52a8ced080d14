"""``_files.write_atomic``'s ``replace=False``: an existing target is never replaced, with or
without hard links on the file system, and no temporary file is left behind."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import pytest

from ccanalytics._files import write_atomic


def _write(text: str) -> Callable[[BinaryIO], object]:
    return lambda sink: sink.write(text.encode())


@pytest.mark.parametrize("links", [True, False], ids=["hard links", "no hard links"])
def test_replace_false_creates_a_new_file_and_refuses_an_existing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    if not links:

        def no_link(src: object, dst: object) -> None:
            raise OSError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(os, "link", no_link)
    target = tmp_path / "out.csv"
    write_atomic(target, _write("new"), replace=False)
    assert target.read_text() == "new"
    with pytest.raises(FileExistsError):
        write_atomic(target, _write("other"), replace=False)
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # no temporary left
    write_atomic(target, _write("replaced"))  # the default replaces
    assert target.read_text() == "replaced"

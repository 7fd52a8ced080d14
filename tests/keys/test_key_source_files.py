"""audit_keys given a path reads only regular files: a named pipe never blocks it.

The CLI refused pipes and devices already; the library, given a path to a named pipe
with no writer, used to wait forever in ``open``. Standard input stays possible through
an open file object.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccanalytics import audit_keys
from ccanalytics.errors import CCAnalyticsError, KeyFileError

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@laptop"


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "authorized_keys.fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("as_type", [Path, str])
def test_a_named_pipe_is_refused_at_once_never_waited_on(fifo: Path, as_type: type) -> None:
    # In a child process, so that a regression hangs the child (killed at the timeout),
    # not the test run.
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from ccanalytics import audit_keys\n"
        "from ccanalytics.errors import KeyFileError\n"
        "try:\n"
        f"    audit_keys({as_type.__name__}({str(fifo)!r}))\n"
        "except KeyFileError as err:\n"
        "    print(err); sys.exit(3)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=20, check=False
    )
    assert done.returncode == 3, done.stderr
    assert "not a regular file" in done.stdout and "authorized_keys.fifo" in done.stdout


def test_a_directory_and_a_missing_path_object_are_key_file_errors(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match="directory"):
        audit_keys(tmp_path)
    with pytest.raises(KeyFileError, match="No such file") as caught:
        audit_keys(tmp_path / "missing")
    assert isinstance(caught.value, CCAnalyticsError) and isinstance(caught.value, OSError)


def test_an_open_file_object_still_reads_a_stream() -> None:
    frame = audit_keys(io.BufferedReader(io.BytesIO((KEY + "\n").encode())))
    assert list(frame["key_type"]) == ["ssh-ed25519"]


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "authorized_keys"
    path.write_text(KEY + "\n")
    assert len(audit_keys(path)) == 1 and len(audit_keys(str(path))) == 1

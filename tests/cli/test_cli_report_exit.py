"""``ccanalytics report`` leaves its objects frozen for the interpreter's finalization."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_RUN = textwrap.dedent(
    """
    import atexit, gc, sys
    # The interpreter's own (Python 3.12 keeps its static objects there from the start).
    before = gc.get_freeze_count()
    # Registered first, so run last: after what the command registered.
    atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > before))
    from ccanalytics.cli import main
    status = main(["report", "--sandbox", "-o", sys.argv[1]])
    print("frozen after the command:", gc.get_freeze_count() > before, "status", status)
    """
)


@pytest.mark.slow
def test_the_report_command_freezes_its_objects_only_at_exit(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert "frozen after the command: False status 0" in lines
    assert lines[-1] == "frozen at exit: True"

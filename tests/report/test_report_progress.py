"""``ccanalytics report`` shows its progress on a terminal, and only there.

The command runs in a child process whose standard error is a pseudo-terminal (as a
person's shell gives it) or a pipe (as cron does); its bytes are read back whole.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no pseudo-terminal on Windows")

#: Two clusters (a bar for the load), no rank plots: five figures, the fleet-wide ones.
COMMAND = ("report", "--sandbox", "cl-infer-prod", "cl-research-dev", "--max-rank-plots", "0")


def _run(tmp_path: Path, *extra: str, terminal: bool) -> tuple[int, str, str]:
    """The command's exit status, standard output and standard error."""
    args = [sys.executable, "-m", "ccanalytics", *COMMAND, "-o", str(tmp_path / "r.html"), *extra]
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    if not terminal:
        done = subprocess.run(
            args, capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
        )
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    # A terminal 100 columns wide (a fresh pseudo-terminal has none, and a bar needs some).
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    with subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=follower, env=env, text=True, cwd=tmp_path
    ) as child:
        os.close(follower)
        err = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed the terminal: EIO
                break
            if not chunk:
                break
            err += chunk
        out = child.stdout.read() if child.stdout else ""
        status = child.wait(timeout=300)
    os.close(leader)
    return status, out, err.decode("utf-8", "replace")


def test_a_terminal_sees_the_clusters_load_and_the_figures_drawn(tmp_path: Path) -> None:
    status, out, err = _run(tmp_path, terminal=True)
    assert status == 0
    assert "clusters: 100%" in err and "2/2" in err
    assert "figures: 100%" in err and "5/5" in err
    assert "Report written to" in out  # the summary stays on standard output


def test_quiet_prints_nothing_on_a_terminal(tmp_path: Path) -> None:
    status, out, err = _run(tmp_path, "--quiet", terminal=True)
    assert (status, out, err) == (0, "", "")
    assert (tmp_path / "r.html").stat().st_size > 0


def test_cron_gets_the_summary_and_no_bar(tmp_path: Path) -> None:
    status, out, err = _run(tmp_path, terminal=False)
    assert status == 0
    assert err == ""
    assert out.startswith("The 2 clusters")

"""mypy --strict on a user's script, as a user runs it: what the tests of the package's
typing read (a revealed type, an error for a misspelled name)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def mypy_strict(script: Path) -> str:
    """mypy's whole report on ``script`` (with the package's own cache)."""
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(ROOT / ".mypy_cache"),
         str(script)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )  # fmt: skip
    return done.stdout + done.stderr

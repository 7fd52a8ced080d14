"""mypy --strict on a user's script, as a user runs it: what the tests of the package's
typing read (a revealed type, an error for a misspelled name)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".mypy_cache"


def mypy_strict(script: Path) -> str:
    """mypy's whole report on ``script`` (with the package's own cache).

    One mypy at a time: on a fresh clone the first checks pandas-stubs and the package
    and writes the cache, and the others (xdist workers) wait and read it, rather than
    each checking everything again and writing the same cache files at once.
    """
    CACHE.mkdir(exist_ok=True)
    with FileLock(CACHE / "tests.lock"):
        done = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(CACHE), str(script)],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
        )
    return done.stdout + done.stderr

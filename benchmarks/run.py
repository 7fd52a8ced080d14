"""ccanalytics benchmarks: each figure against its natural baseline, measured in the same run.

    python benchmarks/run.py            # everything (a few minutes on 2 cores)
    python benchmarks/run.py report     # one figure (see FIGURES); each is benchmarks/<name>.py

Absolute times on a shared 2-core machine are noise; the ratios are the result.
Each timing is the median of several runs, ours and the baseline's interleaved so
that a noisy neighbour hurts both alike. Nothing here is a test: CI times nothing.
"""

from __future__ import annotations

import os
import sys
import time

import coldstart
import fleet
import keys_audit
import loader
import pandas as pd
import report

#: Figure name -> its module's ``bench``; each figure lives in ``benchmarks/<module>.py``.
FIGURES = {
    "loader": loader.bench,
    "keys": keys_audit.bench,
    "fleet": fleet.bench,
    "coldstart": coldstart.bench,
    "report": report.bench,
}


def main(argv: list[str]) -> int:
    chosen = argv or list(FIGURES)
    unknown = [a for a in chosen if a not in FIGURES]
    if unknown:
        print(f"unknown figure(s) {unknown}; choose from {list(FIGURES)}", file=sys.stderr)
        return 2
    print(
        f"ccanalytics benchmarks  (python {sys.version.split()[0]}, {os.cpu_count()} cpus, pandas {pd.__version__})"
    )
    start = time.perf_counter()
    for name in chosen:
        FIGURES[name]()
    print(f"done in {time.perf_counter() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

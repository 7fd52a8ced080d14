"""ccanalytics benchmarks: each figure against its natural baseline, measured in the same run.

    python benchmarks/run.py            # every figure but the long ones (minutes on 2 cores)
    python benchmarks/run.py report     # one figure (see FIGURES); each is benchmarks/<name>.py
    python benchmarks/run.py soak       # a long one (LONG_FIGURES): by name, or with "all"
    python benchmarks/run.py all        # every figure, the long ones included
    python benchmarks/run.py --runs 2   # each figure twice: the worse of the two is kept

A run of every figure (the default run, or ``all``) also writes
``docs/performance-results.md``, the table the docs site shows, dated and with the
machine, and the README's short table of headline ratios (at most five rows) between
its ``benchmarks`` markers when it has them (a full run adds none by itself), so every
published figure comes from one invocation. With ``--runs N`` every figure is measured
N times, the runs one after another, and each row published is the run where its ratio
was worst: a good minute on a shared machine is not the result.

Absolute times on a shared 2-core machine are noise; the ratios are the result.
Each timing is the median of several runs, ours and the baseline's interleaved so
that a noisy neighbour hurts both alike. Nothing here is a test: CI times nothing.
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
import time
from pathlib import Path

import _harness
import analysis
import coldstart
import collect
import fleet
import forecast
import history
import keys_audit
import loader
import pandas as pd
import report
import s3store
import soak
import spark

#: Figure name -> its module's ``bench``; each figure lives in ``benchmarks/<module>.py``.
FIGURES = {
    "loader": loader.bench,
    "keys": keys_audit.bench,
    "fleet": fleet.bench,
    "coldstart": coldstart.bench,
    "collect": collect.bench,
    "report": report.bench,
    "history": history.bench,
    "analysis": analysis.bench,
}
#: Figures that take a quarter of an hour or more each (a simulated month of files, a
#: 10,000-snapshot soak): run by name, not in the default run.
LONG_FIGURES = {
    "history-month": history.bench_month,
    "forecast": forecast.bench,
    "s3": s3store.bench,
    "soak": soak.bench,
    "spark": spark.bench,
}


def main(argv: list[str]) -> int:
    everything = {**FIGURES, **LONG_FIGURES}
    runs, argv = _runs(argv)
    chosen = list(everything) if argv == ["all"] else argv or list(FIGURES)
    unknown = [a for a in chosen if a not in everything]
    if unknown or runs < 1:
        print(f"unknown figure(s) {unknown}; choose from {list(everything)}", file=sys.stderr)
        return 2
    print(
        f"ccanalytics benchmarks  (python {sys.version.split()[0]}, {os.cpu_count()} cpus, pandas {pd.__version__})"
    )
    start = time.perf_counter()
    measured: list[list[_harness.Row]] = []
    for number in range(runs):
        if runs > 1:
            print(f"-- run {number + 1} of {runs}", flush=True)
        _harness.ROWS.clear()
        for name in chosen:
            everything[name]()
        measured.append(list(_harness.ROWS))
    _harness.ROWS[:] = _harness.worst_of(measured)
    elapsed = time.perf_counter() - start
    print(f"done in {elapsed:.0f}s")
    if chosen in (list(FIGURES), list(everything)):
        write_results(RESULTS, elapsed, complete=chosen == list(everything), runs=runs)
        print(f"wrote {RESULTS}")
        if write_readme_targets(README, runs):
            print(f"wrote the headline ratios in {README}")
    return 0


def _runs(argv: list[str]) -> tuple[int, list[str]]:
    """``--runs N`` (default 1) and the other arguments; 0 runs for a bad N."""
    if "--runs" not in argv:
        return 1, argv
    at = argv.index("--runs")
    try:
        runs = int(argv[at + 1])
    except (IndexError, ValueError):
        return 0, argv
    return runs, argv[:at] + argv[at + 2 :]


ROOT = Path(__file__).resolve().parents[1]
#: Where a full run leaves its table for the docs site (docs/performance.md includes it).
RESULTS = ROOT / "docs" / "performance-results.md"
#: The README, whose list of targets between these markers a full run rewrites.
README = ROOT / "README.md"
README_MARKERS = ("<!-- benchmarks:start -->", "<!-- benchmarks:end -->")


def _machine() -> str:
    model = ""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        model = next(
            line.split(":", 1)[1].strip()
            for line in cpuinfo.splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores"
        + (f" ({model})" if model else "")
        + f"; Python {platform.python_version()}, pandas {pd.__version__}"
    )


def write_results(path: Path, elapsed: float, *, complete: bool, runs: int = 1) -> None:
    """The table of one full run, as Markdown: figure, ours, baseline, ratio and verdict."""
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    command = "python benchmarks/run.py" + (" all" if complete else "")
    command += f" --runs {runs}" if runs > 1 else ""
    worst = f" (each row the worst of its {runs} runs)" if runs > 1 else ""
    lines = [
        "<!-- Written by python benchmarks/run.py (a full run); do not edit by hand. -->",
        "",
        f"One run of `{command}` on {today}{worst}: {_machine()}; {elapsed:.0f} s in all.",
        "",
        *_harness.results_table(_harness.ROWS),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_readme_targets(path: Path, runs: int = 1) -> bool:
    """The headline figures' ratios (:func:`_harness.headline_table`) between the
    README's markers (if any): nothing else of the README is touched."""
    start, end = README_MARKERS
    text = path.read_text(encoding="utf-8")
    if start not in text or end not in text:
        print(f"{path} has no {start} ... {end} block: left as it is", file=sys.stderr)
        return False
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    block = _harness.headline_table(_harness.ROWS, today, runs)
    before, rest = text.split(start, 1)
    after = rest.split(end, 1)[1]
    path.write_text(f"{before}{start}\n{block}\n{end}{after}", encoding="utf-8")
    return True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Shared helpers of the benchmarks: timing, interleaving, whole-process RSS, the table.

Absolute times on a shared 2-core machine are noise; the ratios are the result.
Each timing is the median of several runs, ours and the baseline's interleaved so
that a noisy neighbour hurts both alike. Memory is whole-process peak RSS of a fresh
child process (``ru_maxrss``), never tracemalloc, which misses what C extensions hold.
"""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import orjson

# The children run as a user's scripts do, each module's bytecode cached once: where the
# environment says not to (some sandboxes set PYTHONDONTWRITEBYTECODE), every fresh child
# compiled ccanalytics's modules again, a cost that no installed package pays.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


class Row(NamedTuple):
    """One line of the table: what was measured, ours, its baseline, the ratio as text.

    ``value`` is the ratio itself (ours over the baseline: lower is better), by which
    repeated runs are compared (the worse is published); ``headline`` names the figure
    in the README's short table, for the few figures with a headline target.
    """

    figure: str
    ours: str
    baseline: str
    ratio: str
    value: float | None = None
    headline: str | None = None


ROWS: list[Row] = []


def report(
    figure: str,
    ours: str,
    baseline: str,
    ratio: str,
    *,
    value: float | None = None,
    headline: str | None = None,
) -> None:
    ROWS.append(Row(figure, ours, baseline, ratio, value, headline))
    print(f"  {figure:<52} ours {ours:>12}   baseline {baseline:>12}   {ratio}", flush=True)


def worst_of(runs: list[list[Row]]) -> list[Row]:
    """Each figure's row from the run where its ratio was worst (highest).

    Runs give the same figures in the same order; a figure without a ratio keeps its
    first run's row. A run that gave other figures (a benchmark skipped itself) is
    left out rather than matched line by line against the others.
    """
    complete = [rows for rows in runs if len(rows) == len(runs[0])]
    worst = []
    for rows in zip(*complete, strict=True):
        measured = [r for r in rows if r.value is not None]
        worst.append(max(measured, key=lambda r: r.value or 0.0) if measured else rows[0])
    return worst


def script() -> str:
    """The installed ``ccanalytics`` console script, next to this interpreter or on PATH."""
    beside = Path(sys.executable).parent / "ccanalytics"
    return str(beside) if beside.exists() else (shutil.which("ccanalytics") or "")


def parse_without_gc(raw: bytes) -> Any:
    """orjson.loads with the cyclic GC paused, as pods_frame parses internally."""
    gc.disable()
    try:
        return orjson.loads(raw)
    finally:
        gc.enable()


def timed(fn: Callable[[], Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Median time of each function, runs interleaved round-robin."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            times[name].append(timed(fn))
    return {name: statistics.median(ts) for name, ts in times.items()}


def child_peak_rss_mb(code: str) -> float:
    """Peak RSS, in MB, of a fresh ``python -c code`` (imports included).

    Read from the child's own ``VmHWM`` in /proc: ``ru_maxrss`` survives fork and exec
    on Linux, so a child of a large benchmark process would report its parent's peak.
    """
    probe = (
        code
        + "\nimport sys"
        + "\nhwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]"
        + "\nprint(hwm.split()[1], file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1]) / 1024  # VmHWM is in kB


def verdict(holds: bool) -> str:
    return "target holds" if holds else "target MISSED"


def results_table(rows: list[Row]) -> list[str]:
    """The docs' table of every row: its figure, ours, the baseline, the ratio and verdict."""
    lines = ["| figure | ours | baseline | ratio and verdict |", "| --- | --- | --- | --- |"]
    for row in rows:
        cells = (row.figure, row.ours, row.baseline, row.ratio)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


#: Rows in the README's table: the headline ratios only (the docs have the rest).
README_ROWS = 5


def headline_table(rows: list[Row], today: str, runs: int = 1) -> str:
    """The README's short table: the first README_ROWS headline rows, their ratios
    (with ``runs`` > 1, each the worse of that many runs, as :func:`worst_of` keeps)."""
    headlines = [row for row in rows if row.headline][:README_ROWS]
    source = (
        f"one run of `benchmarks/run.py --runs {runs}` on {today}, each row the worst of {runs}"
        if runs > 1
        else f"one run of `benchmarks/run.py` on {today}"
    )
    lines = [
        f"From {source} (every figure: docs/performance.md):",
        "",
        "| figure | ratio to its baseline |",
        "| --- | --- |",
        *(f"| {_cell(row.headline or '')} | {_cell(row.ratio.strip())} |" for row in headlines),
    ]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")

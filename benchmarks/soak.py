"""Figure 8: a soak of the collector, ``collect_every`` for 10,000 snapshots in one process.

The process is a fresh child, as a collector is (``ccanalytics collect --every`` on its
own): run in ``run.py``'s process after the year figure, whose heap held 800 MB, the
peak rose by 1.59 MB per 1,000 snapshots against 0.64 in a process of its own
(2026-11-26), a figure of the harness's heap, not of the collector.

The sandbox runs in process on a simulated clock (its ``Date`` is its simulated time,
so the run trusts it) that the callback moves 5 minutes on after each snapshot: 10,000
snapshots are 35 simulated days, so the collector also compacts 34 closed days as it
goes. Every snapshot is written for real (fsync included) to a temporary store.

Two figures: the slope of the process's peak RSS over the run after the first 1,000
snapshots (warm-up: caches, DuckDB-free imports), in MB per 1,000 snapshots (target
< 1), and the open file descriptors before and after (target: no leak).

The peak is taken per window of 250 snapshots (``VmHWM``, reset after each reading),
and the slope fitted to the windows' peaks. Growth raises every window's peak; one
transient (RSS swings by 5-10 MB within a window, with the allocator and the day's
compaction) raises one window's. The running peak, fitted before, was decided by
whichever transient came last: the same code at 10,000 snapshots gave +0.06, +0.22
and +0.42 MB/1k, the code after it +0.45, +0.66 and +1.57, while their current RSS
and a tracemalloc of the run (nothing of ccanalytics grew) did not differ
(2026-11-26).

What grew, found with tracemalloc (2026-11-26): the in-process sandbox's log of every
request, about 240 bytes a snapshot, 0.6 MB of peak per 1,000 snapshots in a 10,000-run;
the sandbox now keeps its newest 1,000 (``SandboxApp.request_log_size``), and with it
bounded the peak is flat after the warm-up (211-214 MB from snapshot 400 to 10,000).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _harness import report, verdict

SNAPSHOTS = 10_000
WARMUP = 1_000
SLOPE_TARGET_MB = 1.0
#: One cluster of the sandbox fleet: what is measured is the collector, not the fleet's size.
CLUSTERS = ["cl-infer-prod"]


def _status_kb(field: str) -> int:
    line = next(
        x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith(field)
    )
    return int(line.split()[1])


def _reset_peak_rss() -> bool:
    """Start ``VmHWM`` afresh: after the imports, whose transient peak would otherwise
    sit above the collector's and hide its growth until passed, and after each window.
    Linux >= 4.0."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _slope(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of MB over snapshots, per 1,000 snapshots."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    num = sum((x - mean_x) * (y - mean_y) for x, y in points)
    den = sum((x - mean_x) ** 2 for x, _ in points)
    return 1000 * num / den if den else 0.0


def bench(snapshots: int = SNAPSHOTS) -> None:
    print(f"8. soak: collect_every, {snapshots:,} snapshots in one fresh process", flush=True)
    child = subprocess.run(
        [sys.executable, __file__, "--child", str(snapshots)],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    for row in json.loads(child.stdout.strip().splitlines()[-1]):
        report(*row)


def _measure(snapshots: int) -> list[tuple[str, str, str, str]]:
    """The figure's rows, measured in this process (the child's side of :func:`bench`)."""
    import ccanalytics
    from ccanalytics.history import CollectResult, collect_every
    from ccanalytics.sandbox import (
        EXEMPT_KEY,
        IN_PROCESS_URL,
        SandboxApp,
        SandboxTransport,
        SimulatedClock,
    )

    clock = SimulatedClock(start=datetime(2026, 11, 2, tzinfo=UTC))
    app = SandboxApp(clock=clock)
    store = Path(tempfile.mkdtemp(prefix="ccanalytics-soak-"))
    peaks: list[tuple[int, float]] = []
    failed: list[object] = []
    compactions: list[object] = []

    warmup = min(WARMUP, snapshots // 10)  # a short trial run keeps its proportions
    every = max(1, snapshots // 40)

    def after(index: int, outcome: object) -> None:
        if not isinstance(outcome, CollectResult) or outcome.errors:
            failed.append(outcome)
        clock.advance(timedelta(minutes=5))
        if index % every == 0:
            peaks.append((index, _status_kb("VmHWM:") / 1024))
            _reset_peak_rss()  # the next window's peak is its own

    client = ccanalytics.Client(EXEMPT_KEY, IN_PROCESS_URL, transport=SandboxTransport(app))
    fds_before = _open_fds()
    if not _reset_peak_rss():
        print("  (cannot reset the peak RSS here: it may include the imports)", file=sys.stderr)
    rss_before = _status_kb("VmRSS:") / 1024
    started = time.perf_counter()
    try:
        with client:
            run = collect_every(
                CLUSTERS,
                store,
                every=timedelta(milliseconds=1),
                count=snapshots,
                client=client,
                on_snapshot=after,
                on_compact=compactions.append,
                trust_service_clock=True,
                stop_on_signals=False,
            )
        elapsed = time.perf_counter() - started
        fds_after = _open_fds()
        files = sum(1 for _ in store.rglob("*.parquet"))
    finally:
        shutil.rmtree(store, ignore_errors=True)
    slope = _slope([p for p in peaks if p[0] > warmup])
    peak = max((mb for _, mb in peaks), default=float("nan"))
    return [
        (
            f"peak RSS slope, {every:,}-snapshot windows ({run.taken:,} taken)",
            f"{slope:+.3f} MB/1k",
            f"target {SLOPE_TARGET_MB:.0f} MB/1k",
            f"{verdict(abs(slope) < SLOPE_TARGET_MB)}; peak {peak:.0f} MB (from {rss_before:.0f})",
        ),
        (
            "  open file descriptors, before and after",
            f"{fds_after}",
            f"{fds_before} before",
            f"{verdict(fds_after <= fds_before)}; {run.failed} failed, "
            f"{len(compactions)} days compacted, {files} files, {elapsed:.0f} s",
        ),
    ]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(_measure(int(sys.argv[2]))))
    else:
        bench(int(sys.argv[1]) if len(sys.argv) > 1 else SNAPSHOTS)

"""Figure 5: one ``collect`` snapshot against the fleet load it is made of.

``collect`` = ``load_cluster_frames`` + writing two Parquet files (temporary name,
fsync, rename). The target: at most 50 ms more than the load alone, for the sandbox
fleet over loopback HTTP. Runs are interleaved and each side's median taken; the append
alone (the same snapshot written again and again) is timed too, as a check on the
difference of two noisy medians.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _harness import interleaved, report, verdict

import ccanalytics
from ccanalytics.history.collector._collect import append_snapshot, take_snapshot
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox

REPEAT = 15
TARGET_MS = 50.0


def bench() -> None:
    print("5. collect: one snapshot of the sandbox fleet, vs load_cluster_frames alone", flush=True)
    with tempfile.TemporaryDirectory() as tmp, Sandbox() as sb, sb.client(EXEMPT_KEY) as client:
        ids = sorted(sb.app.data.clusters)
        store = Path(tmp) / "store"
        snapshot = take_snapshot(ids, client)  # warm up: connections, imports
        append_snapshot(Path(tmp) / "warm", snapshot)
        medians = interleaved(
            {
                "load": lambda: ccanalytics.load_cluster_frames(ids, client=client, progress=False),
                "collect": lambda: ccanalytics.collect(ids, store, client=client),
                "append": lambda: append_snapshot(Path(tmp) / "append", snapshot),
            },
            REPEAT,
        )
    extra_ms = (medians["collect"] - medians["load"]) * 1000
    append_ms = medians["append"] * 1000
    print(
        f"  ({len(ids)} clusters, {len(snapshot.pods)} pod rows, {len(snapshot.gpus)} GPU rows, "
        f"medians of {REPEAT})"
    )
    report(
        "collect vs load_cluster_frames (sandbox fleet)",
        f"{medians['collect'] * 1000:.0f} ms",
        f"{medians['load'] * 1000:.0f} ms",
        f"{medians['collect'] / medians['load']:.2f}x, +{extra_ms:.0f} ms (append alone "
        f"{append_ms:.0f} ms); <= {TARGET_MS:.0f} ms: {verdict(max(extra_ms, append_ms) <= TARGET_MS)}",
        value=medians["collect"] / medians["load"],
    )

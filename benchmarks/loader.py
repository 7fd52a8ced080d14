"""Figure 1: a raw JSON listing to the pods DataFrame."""

from __future__ import annotations

import gc
import json
import tracemalloc

import orjson
import pandas as pd
from _harness import (
    interleaved,
    parse_without_gc,
    report,
)

from ccanalytics.frames._build import pods_frame
from ccanalytics.sandbox import make_cluster_pods


def listing_bytes(n: int) -> bytes:
    """A realistic listing of ``n`` pods: mostly 8-GPU training ranks, some CPU and pending pods."""
    gpu = make_cluster_pods("cl-bench", n, seed=1, straggler_ranks=(7,))
    for i, pod in enumerate(gpu):
        if i % 50 == 0:  # a CPU pod
            pod["gpu"] = None
            pod["runtime"]["gpus"] = []
        elif i % 97 == 0:  # a pending pod
            pod["runtime"] = None
            pod["startedAt"] = None
            pod["cluster"]["rank"] = None
    return orjson.dumps({"pods": gpu})


def naive(raw: bytes) -> pd.DataFrame:
    """What a user would write: json.loads and json_normalize (no per-GPU aggregates)."""
    return pd.json_normalize(json.loads(raw)["pods"])


def bench() -> None:
    print("1. loader: raw JSON listing -> pods DataFrame", flush=True)
    raw = listing_bytes(50_000)
    print(f"  (50,000 pods, {len(raw) / 1e6:.0f} MB of JSON)")
    t = interleaved(
        {
            "parse": lambda: orjson.loads(raw),
            "parse_nogc": lambda: parse_without_gc(raw),
            "ours": lambda: pods_frame(raw),
            "naive": lambda: naive(raw),
        },
        repeat=5,
    )
    report(
        "50k pods vs orjson.loads (target <= 1.5x)",
        f"{t['ours']:.3f}s",
        f"{t['parse']:.3f}s",
        f"{t['ours'] / t['parse']:.2f}x the parse",
    )
    report(
        "50k pods vs orjson.loads with GC paused (stricter floor)",
        f"{t['ours']:.3f}s",
        f"{t['parse_nogc']:.3f}s",
        f"{t['ours'] / t['parse_nogc']:.2f}x the parse",
    )
    report(
        "50k pods vs json.loads+json_normalize (target >= 2x faster)",
        f"{t['ours']:.3f}s",
        f"{t['naive']:.3f}s",
        f"{t['naive'] / t['ours']:.2f}x faster",
    )
    frame = pods_frame(raw)
    reference = pods_frame(orjson.loads(raw)["pods"][:1000])
    assert list(frame.columns) == list(reference.columns)
    assert frame.dtypes.equals(reference.dtypes)

    gc.collect()
    tracemalloc.start()
    pods_frame(raw)
    _, ours_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    gc.collect()
    tracemalloc.start()
    naive(raw)
    _, naive_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    report(
        "peak memory (tracemalloc) vs naive path",
        f"{ours_peak / 1e6:.0f} MB",
        f"{naive_peak / 1e6:.0f} MB",
        f"{ours_peak / naive_peak:.2f}x",
    )

    per_pod = []
    for n in (1_000, 10_000, 100_000):
        data = listing_bytes(n)
        t_n = interleaved(
            {"ours": lambda d=data: pods_frame(d), "parse": lambda d=data: orjson.loads(d)}, 3
        )
        per_pod.append(t_n["ours"] / n)
        report(
            f"growth: {n:>7,} pods",
            f"{t_n['ours']:.3f}s",
            f"{t_n['parse']:.3f}s",
            f"{t_n['ours'] / t_n['parse']:.2f}x the parse, {1e6 * t_n['ours'] / n:.1f} us/pod",
        )
    print(f"  per-pod time 100k / 10k: {per_pod[2] / per_pod[1]:.2f} (1.0 = linear)")

"""ccanalytics benchmarks: each figure against its natural baseline, measured in the same run.

    python benchmarks/run.py            # everything (a few minutes on 2 cores)
    python benchmarks/run.py loader     # one figure: loader, keys, fleet, coldstart

Absolute times on a shared 2-core machine are noise; the ratios are the result.
Each timing is the median of several runs, ours and the baseline's interleaved so
that a noisy neighbour hurts both alike. Nothing here is a test: CI times nothing.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pandas as pd

import ccanalytics
from ccanalytics.frames._build import pods_frame
from ccanalytics.sandbox import FULL_ACCESS_KEY, Sandbox, SandboxApp, make_cluster_pods

ROWS: list[tuple[str, str, str, str]] = []


def report(figure: str, ours: str, baseline: str, ratio: str) -> None:
    ROWS.append((figure, ours, baseline, ratio))
    print(f"  {figure:<52} ours {ours:>12}   baseline {baseline:>12}   {ratio}", flush=True)


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


# -- 1. loader --------------------------------------------------------------------


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


def bench_loader() -> None:
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


# -- 2. key audit -----------------------------------------------------------------


def make_key_file(directory: Path, lines: int = 20_000) -> Path:
    """A realistic large file: distinct keys, mostly Ed25519, some ECDSA and RSA.

    Every Ed25519 line is a distinct key (any 32 bytes is a valid Ed25519 public key
    to OpenSSH), so no cache of ours can skip work ssh-keygen does. One line in ten
    is one of 30 ECDSA/RSA keys made by ssh-keygen, with a different comment.
    """
    import base64
    import random
    import struct

    def string(b: bytes) -> bytes:
        return struct.pack(">I", len(b)) + b

    pool = []
    specs = [("ecdsa", b) for b in ("256", "384", "521") for _ in range(6)] + [("rsa", "3072")] * 12
    for i, (kind, bits) in enumerate(specs):
        path = directory / f"k{i}"
        cmd = ["ssh-keygen", "-q", "-t", kind, "-b", bits, "-N", "", "-f", str(path)]
        subprocess.run(cmd, check=True)
        pool.append(path.with_suffix(".pub").read_text().split()[:2])
    rng = random.Random(1)
    out = directory / "authorized_keys"
    with out.open("w") as fh:
        for i in range(lines):
            if i % 10 == 9:
                kind, blob = pool[i % len(pool)]
            else:
                raw = string(b"ssh-ed25519") + string(rng.randbytes(32))
                kind, blob = "ssh-ed25519", base64.b64encode(raw).decode()
            fh.write(f"{kind} {blob} user{i}@host{i % 97}\n")
    return out


def bench_keys() -> None:
    print(
        "2. key audit: ccanalytics audit-keys FILE vs ssh-keygen -lf FILE (20,000 lines)",
        flush=True,
    )
    exe = script()
    if not exe or not shutil.which("ssh-keygen"):
        print("  skipped: needs the ccanalytics script and ssh-keygen on PATH")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = make_key_file(Path(tmp))
        ours = [exe, "audit-keys", str(path)]  # the default table output
        base = ["ssh-keygen", "-lf", str(path)]

        def call(cmd: list[str]) -> Callable[[], None]:
            return lambda: subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)

        t = interleaved({"ours": call(ours), "base": call(base)}, repeat=5)
    report(
        "audit 20k lines, whole process (target <= 1.0x)",
        f"{t['ours']:.3f}s",
        f"{t['base']:.3f}s",
        f"{t['ours'] / t['base']:.2f}x ssh-keygen",
    )


# -- 3. fleet load ----------------------------------------------------------------

FLEET = 25
QUOTA, WINDOW, LATENCY = 10, 3.0, 0.02


def fleet_sandbox() -> Sandbox:
    app = SandboxApp(rate_limits={"window": (QUOTA, WINDOW)}, latency=LATENCY)
    pods = app.data.clusters["cl-finetune-7b"]
    app.data.clusters = {f"cl-{i:02d}": pods for i in range(FLEET)}
    return Sandbox(app).start()


class RetryAfterTransport(httpx.HTTPTransport):
    """The baseline: a plain transport that retries 429s after Retry-After."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        while True:
            response = super().handle_request(request)
            if response.status_code != 429:
                return response
            response.read()
            time.sleep(float(response.headers.get("Retry-After", "1")))


def optimum(start_offset: float) -> float:
    """Quota-bound optimum from the load's start: a batch of QUOTA per window."""
    batches = -(-FLEET // QUOTA)
    # Fixed windows are aligned on the sandbox's start; the load starts start_offset into one.
    return (batches - 1) * WINDOW - start_offset + LATENCY


def bench_fleet() -> None:
    print(
        f"3. fleet load: {FLEET} clusters, quota {QUOTA} per {WINDOW:g}s window, {LATENCY * 1000:.0f} ms latency",
        flush=True,
    )
    ids = [f"cl-{i:02d}" for i in range(FLEET)]

    sb = fleet_sandbox()
    try:
        offset = time.monotonic() - sb.app._epoch
        with sb.client() as c:
            t_ours = timed(lambda: ccanalytics.load_cluster_pods(ids, client=c, progress=False))
        ours_429 = sb.app.statuses[429]
    finally:
        sb.stop()
    best = optimum(offset)
    boundaries = -(-FLEET // QUOTA) - 1

    sb = fleet_sandbox()
    try:
        with httpx.Client(base_url=sb.url, transport=RetryAfterTransport()) as http:
            headers = {"Authorization": f"Bearer {FULL_ACCESS_KEY}"}

            def loop() -> None:
                frames = []
                for cid in ids:
                    r = http.get(f"/v2/clusters/{cid}/pods", headers=headers)
                    frames.append(pods_frame(r.content, cluster_id=cid))
                pd.concat(frames)

            t_base = timed(loop)
        base_429 = sb.app.statuses[429]
    finally:
        sb.stop()
    report(
        "fleet load wall time",
        f"{t_ours:.2f}s",
        f"{t_base:.2f}s",
        f"{t_ours / t_base:.2f}x the retry loop",
    )
    report(
        f"vs quota-bound optimum {best:.2f}s (target: +<= {boundaries}s)",
        f"+{t_ours - best:.2f}s",
        f"+{t_base - best:.2f}s",
        "ok" if t_ours - best <= boundaries else "MISSED",
    )
    report(
        "429 responses (target 0)",
        str(ours_429),
        str(base_429),
        "ok" if ours_429 == 0 else "MISSED",
    )


# -- 4. cold start ----------------------------------------------------------------


def bench_coldstart() -> None:
    print("4. cold start: whole process, vs python -c 'import httpx'", flush=True)
    exe = script()
    if not exe:
        print("  skipped: the ccanalytics script is not on PATH")
        return
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "k"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        pub = str(key.with_suffix(".pub"))

        def call(cmd: list[str]) -> Callable[[], None]:
            return lambda: subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)

        t = interleaved(
            {
                "base": call([sys.executable, "-c", "import httpx"]),
                "help": call([exe, "--help"]),
                "audit": call([exe, "audit-keys", pub]),
            },
            repeat=15,
        )
    for name, label in (
        ("help", "ccanalytics --help"),
        ("audit", "ccanalytics audit-keys (1 key)"),
    ):
        report(
            f"{label} (target <= 2x)",
            f"{t[name] * 1000:.0f} ms",
            f"{t['base'] * 1000:.0f} ms",
            f"{t[name] / t['base']:.2f}x",
        )


FIGURES = {
    "loader": bench_loader,
    "keys": bench_keys,
    "fleet": bench_fleet,
    "coldstart": bench_coldstart,
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

"""Figure 1: a listing's bytes on the wire to the pods frame, on the loader's real path.

What is timed is what ``load_cluster_pods`` does with each response body
(``ccanalytics.frames._build.FleetFrames``: add the body, then the frames), from the
bytes to the pods frame,
with the garbage collector as the user has it (on). Baselines, interleaved in the
same run: ``orjson.loads`` of the same bytes with the GC on (what any JSON-first
loader pays) and with the GC paused (the parse alone). Memory is the peak
whole-process RSS growth of a fresh child doing one load, over a child that only
imports and reads the bytes, as a multiple of the JSON size.

Targets (issue 16): <= 0.6x orjson.loads (GC on) and <= 1.3x orjson.loads (GC paused)
at 50k and 200k pods; RSS growth <= 4.5x the JSON size.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import orjson
from _harness import interleaved, parse_without_gc, report, verdict

from ccanalytics.frames._build import FleetFrames
from ccanalytics.sandbox import make_cluster_pods

#: Runs per figure: the machine is shared, so no more than three of the large
#: listing; the small one (about a second a run) takes five, its median steadier.
REPEAT = 3
REPEAT_SMALL = 5
#: When the service answered, for every timed load (any instant: only its cost counts).
OBSERVED = datetime(2026, 11, 25, tzinfo=UTC)
SIZES = (50_000, 200_000)


def listing_bytes(n: int) -> bytes:
    """A realistic listing of ``n`` pods: mostly 8-GPU training ranks, some CPU and pending.

    Pods are generated for at most 50,000 and the array repeated as bytes beyond
    that: generating 200,000 pod dicts would itself take gigabytes.
    """
    unit = min(n, 50_000)
    pods = make_cluster_pods("cl-bench", unit, seed=1, straggler_ranks=(7,))
    for i, pod in enumerate(pods):
        if i % 50 == 0:  # a CPU pod, as the document has them
            pod.pop("gpu", None)
            pod["cpu"] = {"id": "cpu5c", "vcpuCount": 4, "memory": 16}
            pod["runtime"].pop("gpus", None)
        elif i % 97 == 0:  # a pod being provisioned
            pod.update(status="PROVISIONING", runtime=None, startedAt=None)
            pod["cluster"]["rank"] = None
    inner = orjson.dumps(pods)[1:-1]
    del pods
    copies, rest = divmod(n, unit)
    assert rest == 0, "n must be a multiple of 50,000 above 50,000"
    return b'{"pods": [' + b",".join([inner] * copies) + b"]}"


def real_path(raw: bytes) -> None:
    """What load_cluster_pods runs on one response body (the GC as the caller has it)."""
    fleet = FleetFrames(["cl-bench"], with_gpus=False)
    fleet.add(raw, "cl-bench", OBSERVED)
    fleet.frames()


#: Runs in a fresh child: RSS before the load (imports done, bytes read) and the
#: process's peak after it, from /proc/self/status. Not ``ru_maxrss``: Linux keeps
#: that across fork+exec, so a child of this (large) process would start at our peak.
_RSS_PROBE = """
import gc, sys
from datetime import UTC, datetime
import orjson, pandas, pyarrow, msgspec
from ccanalytics.frames._build import FleetFrames

def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field)) / 1024

raw = open(sys.argv[1], "rb").read()
before = status("VmRSS:")
fleet = FleetFrames(["cl-bench"], False)
fleet.add(raw, "cl-bench", datetime.now(UTC))
fleet.frames()
print(status("VmHWM:") - before)
"""


def rss_growth_mb(path: Path) -> float:
    """Peak whole-process RSS growth, in MB, of one load of ``path`` in a fresh child.

    The lower of two runs: peak RSS only ever errs upwards (allocator and page
    effects of the neighbours).
    """
    runs = [
        subprocess.run(
            [sys.executable, "-c", _RSS_PROBE, str(path)],
            capture_output=True,
            text=True,
            check=True,
        )
        for _ in range(2)
    ]
    return min(float(run.stdout.strip().splitlines()[-1]) for run in runs)


def timings(raw: bytes, repeat: int = REPEAT) -> dict[str, float]:
    """Median seconds of ours and both baselines on ``raw``, runs interleaved, after
    one untimed run of each (the first pays imports and the decoders' first use: the
    cold start is figure 4's, here the steady cost of a listing is)."""
    fns = {
        "ours": lambda: real_path(raw),
        "parse": lambda: orjson.loads(raw),
        "parse_nogc": lambda: parse_without_gc(raw),
    }
    for fn in fns.values():
        fn()
    return interleaved(fns, repeat=repeat)


def bench() -> None:
    print("1. loader: a listing's bytes -> pods frame, the path load_cluster_pods runs", flush=True)
    for n in SIZES:
        raw = listing_bytes(n)
        mb = len(raw) / 1e6
        print(f"  ({n:,} pods, {mb:.0f} MB of JSON)", flush=True)
        t = timings(raw, REPEAT_SMALL if n <= 50_000 else REPEAT)
        on, off = t["ours"] / t["parse"], t["ours"] / t["parse_nogc"]
        report(
            f"{n // 1000}k pods vs orjson.loads, GC on (<= 0.6x)",
            f"{t['ours']:.2f}s",
            f"{t['parse']:.2f}s",
            f"{on:.2f}x  {verdict(on <= 0.6)}",
        )
        report(
            f"{n // 1000}k pods vs orjson.loads, GC paused (<= 1.3x)",
            f"{t['ours']:.2f}s",
            f"{t['parse_nogc']:.2f}s",
            f"{off:.2f}x  {verdict(off <= 1.3)}",
        )
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "listing.json"
            path.write_bytes(raw)
            del raw
            gc.collect()
            growth = rss_growth_mb(path)
        report(
            f"{n // 1000}k pods peak RSS growth (<= 4.5x the JSON)",
            f"{growth:.0f} MB",
            f"JSON {mb:.0f} MB",
            f"{growth / mb:.2f}x  {verdict(growth / mb <= 4.5)}",
        )

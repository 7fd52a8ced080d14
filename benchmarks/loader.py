"""Figure 1: a listing's bytes on the wire to the pods frame, through the client.

What is timed is ``load_cluster_pods`` as a user calls it: a real ``Client`` over
loopback HTTP to a small server (a process of its own) that answers
``GET /v2/clusters/{id}/pods`` with a listing serialized once beforehand, so the
request, the body's transfer, the decoding and the frame are all in, with the
garbage collector as the user has it (on). The listing is provider-shaped (issue
37): pods as the published document (``provider-openapi-v2.json``;
``tests/data/listing_document_full.json``) has them, every field filled, an ``env``
of a dozen entries, ports, mounts and both SSH paths. Baselines, interleaved in
the same run: ``orjson.loads`` of the same bytes with the GC on (what any JSON-first
loader pays) and with the GC paused (the parse alone). Memory is the peak
whole-process RSS growth of a fresh child doing one load, over a child that only
imports and reads the bytes, as a multiple of the JSON size.

Targets: <= 0.6x orjson.loads (GC on) and <= 1.3x orjson.loads
(GC paused) at 50k and 200k pods; RSS growth <= 4.5x the JSON size.
"""

from __future__ import annotations

import copy
import gc
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from _harness import interleaved, parse_without_gc, report, verdict

import ccanalytics

#: Runs per figure: the machine is shared, so no more than three of the large
#: listing; the small one takes five, its median steadier.
REPEAT = 3
REPEAT_SMALL = 5
#: When the service answered, for the in-process memory probe (only its cost counts).
OBSERVED = datetime(2026, 11, 25, tzinfo=UTC)
SIZES = (50_000, 200_000)
CLUSTER = "cl-bench"
API_KEY = "bench-key-0123456789abcdef"
#: One pod of each kind the published document shows: a GPU pod (running), a CPU pod,
#: a pod being provisioned and one that exited.
DOCUMENT = Path(__file__).resolve().parents[1] / "tests/data/listing_document_full.json"
#: Of every 100 pods: GPU training ranks, CPU pods, provisioning, exited.
MIX = (90, 6, 2, 2)


def _env(i: int) -> dict[str, str]:
    """A dozen variables, as a training job sets them (values are secrets: never framed)."""
    names = (
        "JUPYTER_PASSWORD", "HF_TOKEN", "WANDB_API_KEY", "MASTER_ADDR", "MASTER_PORT",
        "WORLD_SIZE", "NCCL_DEBUG", "NCCL_IB_DISABLE", "PYTHONUNBUFFERED", "HF_HOME",
        "TORCH_CUDA_ARCH_LIST", "RUN_ID",
    )  # fmt: skip
    return {name: f"{name.lower()}-{i:08x}-value" for name in names}


def provider_pods(n: int) -> list[dict[str, Any]]:
    """``n`` pods shaped as the document's, every field filled, values varied per pod."""
    templates = json.loads(DOCUMENT.read_text())["pods"]
    kinds = [k for k, count in enumerate(MIX) for _ in range(count)]
    pods = []
    for i in range(n):
        pod = copy.deepcopy(templates[kinds[i % 100]])
        pod["id"], pod["name"] = f"pod_{i:08x}", f"train-rank-{i}"
        pod["env"] = _env(i)
        pod["cluster"].update(id=CLUSTER, rank=i, ip=f"10.65.{i // 250 % 256}.{i % 250 + 2}")
        pod["cost"] = round(0.35 + (i % 7) * 0.11, 2)
        if pod.get("gpu"):
            pod["gpu"]["count"] = 8
        runtime = pod.get("runtime")
        if runtime:
            runtime["uptime"] = 3600 + i
            if "gpus" in (runtime or {}) and pod.get("gpu"):
                util = 90 - i % 40 if i % 13 else 3  # a straggler now and then
                runtime["gpus"] = [{"util": util, "memoryUtil": 70 + g} for g in range(8)]
        pods.append(pod)
    return pods


def listing_bytes(n: int) -> bytes:
    """The body of ``GET /v2/clusters/{id}/pods`` with ``n`` provider-shaped pods.

    Pods are generated for at most 50,000 and the array repeated as bytes beyond
    that: generating 200,000 pod dicts would itself take gigabytes.
    """
    unit = min(n, 50_000)
    inner = orjson.dumps(provider_pods(unit))[1:-1]
    copies, rest = divmod(n, unit)
    assert rest == 0, "n must be a multiple of 50,000 above 50,000"
    return b'{"pods": [' + b",".join([inner] * copies) + b"]}"


#: The loopback server, run as its own process (as the provider's is): it serves the
#: file named by its argument as the listing of CLUSTER, and prints its port.
_SERVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

body = open(sys.argv[1], "rb").read()
path = sys.argv[2]

class Listing(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the provider's service

    def do_GET(self):
        if self.path != path:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Listing)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@contextmanager
def loopback_server(body: bytes) -> Iterator[str]:
    """A server process on 127.0.0.1 answering the cluster's listing with ``body``; its
    base URL. Its own process: in a thread of this one it would contend for our GIL."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "listing.json"
        path.write_bytes(body)
        server = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(path), f"/v2/clusters/{CLUSTER}/pods"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline())
            yield f"http://127.0.0.1:{port}"
        finally:
            server.terminate()
            server.wait()


def real_path(client: ccanalytics.Client) -> None:
    """What a user runs: ``load_cluster_pods`` through the client (the GC as it is)."""
    ccanalytics.load_cluster_pods(CLUSTER, client=client, progress=False)


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


#: Runs in a fresh child, as a user's script: ``import ccanalytics`` and a Client, then
#: the first load (the front door's imports included: pandas, pyarrow, the decoders),
#: a second one, and ``orjson.loads`` of the same bytes with the GC paused.
_FIRST_CALL = """
import gc, json, sys, time
import orjson
import ccanalytics

raw = open(sys.argv[1], "rb").read()
with ccanalytics.Client(sys.argv[3], sys.argv[2], max_response_size=2 * len(raw)) as client:
    times = []
    for _ in range(2):
        start = time.perf_counter()
        ccanalytics.load_cluster_pods(sys.argv[4], client=client, progress=False)
        times.append(time.perf_counter() - start)
gc.collect()
gc.disable()
start = time.perf_counter()
orjson.loads(raw)
parse = time.perf_counter() - start
gc.enable()
print(json.dumps({"first": times[0], "second": times[1], "parse": parse}))
"""


def first_call(raw: bytes, repeat: int = 3) -> dict[str, float]:
    """Medians over ``repeat`` fresh processes of the first load, the second, and the
    GC-paused parse: the first minus the second is the fixed cost of a first call."""
    import statistics

    with tempfile.TemporaryDirectory() as tmp, loopback_server(raw) as url:
        path = Path(tmp) / "listing.json"
        path.write_bytes(raw)
        runs = []
        for _ in range(repeat):
            done = subprocess.run(
                [sys.executable, "-c", _FIRST_CALL, str(path), url, API_KEY, CLUSTER],
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def timings(raw: bytes, repeat: int = REPEAT) -> dict[str, float]:
    """Median seconds of ours and both baselines on ``raw``, runs interleaved, after
    one untimed run of each (the first pays imports and the decoders' first use: the
    cold start is figure 4's, here the steady cost of a listing is)."""
    with (
        loopback_server(raw) as url,
        ccanalytics.Client(API_KEY, url, max_response_size=2 * len(raw)) as client,
    ):
        fns = {
            "ours": lambda: real_path(client),
            "parse": lambda: orjson.loads(raw),
            "parse_nogc": lambda: parse_without_gc(raw),
        }
        for fn in fns.values():
            fn()
        return interleaved(fns, repeat=repeat)


def bench() -> None:
    print(
        "1. loader: load_cluster_pods through a Client over loopback HTTP -> pods frame,"
        " provider-shaped pods",
        flush=True,
    )
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
            value=on,
        )
        report(
            f"{n // 1000}k pods vs orjson.loads, GC paused (<= 1.3x)",
            f"{t['ours']:.2f}s",
            f"{t['parse_nogc']:.2f}s",
            f"{off:.2f}x  {verdict(off <= 1.3)}",
            value=off,
            headline=f"loader, {n // 1000}k pods, vs orjson.loads (GC paused)"
            if n == 50_000
            else None,
        )
        if n == SIZES[0]:
            cold = first_call(raw)
            first = cold["first"] / cold["parse"]
            report(
                f"{n // 1000}k pods, a fresh process's first load vs orjson.loads (GC paused)",
                f"{cold['first']:.2f}s",
                f"{cold['parse']:.2f}s",
                f"{first:.2f}x (fixed cost {1000 * (cold['first'] - cold['second']):.0f} ms: "
                f"the front door's imports); {verdict(first <= 1.3)} (<= 1.3x)",
                value=first,
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
            value=growth / mb,
        )

"""Figure 5c: the same month read from ``s3://`` and from a local folder.

The S3 store is served by moto's server on 127.0.0.1 (the test extra), started here;
the month is the sandbox fleet's (7 clusters, 5-minute snapshots), written once to a
local folder in the store's layout and uploaded key for key, so both backends hold the
same bytes. Each timed call (opening History, then ``idle_cost(by="day")``) runs in a
fresh process, as in figure 5b; a first call per store fills the readers' caches and is
not counted. Targets: the compacted month on S3 within 2x of the same month on disk; a
day of uncompacted small files read through the day cache on S3 as on disk (its copy
lives in the bucket, ``STORE/.day-cache``).

A local S3 server measures the store's request pattern (a few listings per table, one
dataset scan) rather than a network: against a real bucket, add the round trips.

    python benchmarks/run.py s3                   # a month of 30 days
    CCANALYTICS_BENCH_S3_DAYS=7 python benchmarks/run.py s3   # a smaller run
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _harness import report, verdict

DAYS = int(os.environ.get("CCANALYTICS_BENCH_S3_DAYS", "30"))
SNAPSHOTS_PER_DAY = 288
ROOT = Path(tempfile.gettempdir()) / f"ccanalytics-bench-s3-{DAYS}d-v1"
REPEAT = 5
RATIO_TARGET = 2.0
#: The readers' caches, relative to a store: each backend makes its own (not uploaded,
#: removed before each run); the rollups themselves go up.
READER_CACHES = (".vetted.json", ".day-cache", ".rollup/merged")

_CHILD = """
import json, sys, time
sys.path.insert(0, {repo!r})
from ccanalytics.history import History
from ccanalytics.history.store import _daycache
# The day cache copies a day quiet for 10 minutes; these files were written just now.
_daycache.QUIET_SECONDS = 0.0
start = time.perf_counter()
with History({store!r}) as h:  # a fresh History: its first listing is part of the cost
    days = h.idle_cost(by="day")
print(json.dumps({{"seconds": time.perf_counter() - start, "total": float(days["total_cost"].sum())}}))
"""


def _build(root: Path) -> tuple[Path, Path]:
    """A compacted month and one uncompacted day, locally (once)."""
    import pandas as pd
    import pyarrow.parquet as pq
    from history import _one_day, _shifted

    from ccanalytics.history.collector._collect import snapshot_rows
    from ccanalytics.history.store._layout import data_file_name, partition_dir
    from ccanalytics.history.store._schema import to_arrow
    from ccanalytics.history.store._write import COMPRESSION, append_frame

    month, day = root / "month", root / "day"
    if (root / "complete").exists():
        return _compacted(month), day
    print(f"  building a {DAYS}-day month and a loose day in {root} (once)...", flush=True)
    snapshots = _one_day()
    for d in range(DAYS):
        tables: dict[str, list[object]] = {"pods": [], "gpus": [], "snapshots": []}
        for snap in snapshots:
            pods, gpus = _shifted(snap.pods, d), _shifted(snap.gpus, d)  # type: ignore[attr-defined]
            first = pods.groupby("cluster_id")["observed_at"].min().to_dict()
            rows = {"pods": pods, "gpus": gpus, "snapshots": snapshot_rows(snap, first)}  # type: ignore[arg-type]
            for table, frame in rows.items():
                tables[table].append(frame)
                if d == 0:  # the loose day: one file per table per snapshot
                    when = frame["observed_at"].min()
                    folder = partition_dir(day, table, f"{when:%Y-%m-%d}")
                    folder.mkdir(parents=True, exist_ok=True)  # type: ignore[attr-defined]
                    name = data_file_name(when.to_pydatetime())
                    pq.write_table(to_arrow(frame), folder / name, compression=COMPRESSION)
        for table, frames in tables.items():
            append_frame(month, table, pd.concat(frames, ignore_index=True))  # type: ignore[arg-type]
    (root / "complete").write_text(f"{DAYS} days\n")
    return _compacted(month), day


def _compacted(month: Path) -> Path:
    """Each day compacted, as collect_every leaves a closed day: one file per table
    and the day's rollup (a day compacted already only gains a missing rollup)."""
    from ccanalytics.history import compact

    for folder in sorted((month / "pods").glob("date=*")):
        compact(month, folder.name.removeprefix("date="))
    return month


def _upload(folder: Path, client: object, bucket: str) -> str:
    """Every data file of ``folder`` under ``s3://bucket/<folder name>``, key for key."""
    for path in folder.rglob("*.parquet"):
        relative = path.relative_to(folder).as_posix()
        if any(relative == c or relative.startswith(f"{c}/") for c in READER_CACHES):
            continue
        key = f"{folder.name}/{relative}"
        client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())  # type: ignore[attr-defined]
    return f"s3://{bucket}/{folder.name}"


def _run(store: str) -> dict[str, float]:
    repo = str(Path(__file__).resolve().parent.parent)
    code = _CHILD.format(repo=repo, store=store)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _timed(stores: dict[str, str]) -> dict[str, dict[str, float]]:
    """The median of REPEAT fresh processes per store, interleaved; a first run each
    (the readers' caches made) not counted."""
    firsts = {name: _run(store) for name, store in stores.items()}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in stores}
    for _ in range(REPEAT):
        for name, store in stores.items():
            runs[name].append(_run(store))
    return {
        name: {
            "seconds": statistics.median(r["seconds"] for r in results),
            "first": firsts[name]["seconds"],
            "total": results[0]["total"],
        }
        for name, results in runs.items()
    }


def bench() -> None:
    print(f"5c. history on s3:// (a local moto server) against a folder: {DAYS} days")
    import logging
    import shutil

    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    month, day = _build(ROOT)
    for folder in (month, day):  # each run starts without the readers' caches
        for cache in READER_CACHES:
            if (folder / cache).is_dir():
                shutil.rmtree(folder / cache)
            else:
                (folder / cache).unlink(missing_ok=True)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = dict(os.environ)
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_REGION="us-east-1",
        AWS_EC2_METADATA_DISABLED="true",
        AWS_ENDPOINT_URL=f"http://{host}:{port}",
    )
    try:
        client = boto3.client("s3")
        client.create_bucket(Bucket="ccbench")
        s3_month, s3_day = _upload(month, client, "ccbench"), _upload(day, client, "ccbench")
        got = _timed({"disk": str(month), "s3": s3_month})
        assert abs(got["s3"]["total"] - got["disk"]["total"]) <= 1e-6 * got["disk"]["total"]
        ratio = got["s3"]["seconds"] / got["disk"]["seconds"]
        report(
            f"idle_cost(by='day'), compacted {DAYS}-day month, fresh process",
            f"{got['s3']['seconds']:.2f} s s3",
            f"{got['disk']['seconds']:.2f} s disk",
            f"{ratio:.2f}x; {verdict(ratio <= RATIO_TARGET)} (<= {RATIO_TARGET:.0f}x)",
        )
        loose = _timed({"disk": str(day), "s3": s3_day})
        assert abs(loose["s3"]["total"] - loose["disk"]["total"]) <= 1e-6 * loose["disk"]["total"]
        ratio = loose["s3"]["seconds"] / loose["disk"]["seconds"]
        report(
            f"  one day of {SNAPSHOTS_PER_DAY * 3} small files, through the day cache",
            f"{loose['s3']['seconds']:.2f} s s3",
            f"{loose['disk']['seconds']:.2f} s disk",
            f"{ratio:.2f}x (first reader, copies made: "
            f"{loose['s3']['first']:.2f} s s3, {loose['disk']['first']:.2f} s disk)",
        )
    finally:
        server.stop()
        os.environ.clear()
        os.environ.update(saved)

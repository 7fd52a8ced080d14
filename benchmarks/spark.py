"""The month question on Spark beside DuckDB: the same store, whole processes, no target.

The store is a simulated month of the sandbox's 7-cluster fleet, compacted (one file
per table per day; history.py's month, the uncompacted copy left out): one day of
288 five-minute snapshots collected in process, shifted by whole days. Each timed call
is a fresh process that opens ``History`` and asks ``idle_cost(by="day")``: DuckDB's
is the default engine; Spark's starts a ``local[2]`` session first (the JVM's start is
part of what moving to Spark costs on one machine) and asks the same History with
``engine=spark``. The answers are checked to agree to the cent. The figure is
published in docs/performance.md and docs/guide/beyond-one-machine.md; it is not a
target: Spark is for a store one machine cannot hold, not for this one.

    python benchmarks/run.py spark
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _harness import report

MONTH = Path(tempfile.gettempdir()) / "ccanalytics-bench-spark-month-v1"
REPEAT = 3

_CHILD = """
import json, sys, time
sys.path.insert(0, {repo!r})
start = time.perf_counter()
from ccanalytics.history import History
engine = "duckdb"
if {spark!r}:
    from pyspark.sql import SparkSession
    engine = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
              .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    engine.sparkContext.setLogLevel("OFF")
started = time.perf_counter()
with History({store!r}, engine=engine) as h:
    days = h.idle_cost(by="day")
    rows = int(h.sql("SELECT count(*) AS n FROM pods")["n"].iloc[0])
print(json.dumps({{"seconds": time.perf_counter() - start, "query": time.perf_counter() - started,
                  "rows": rows, "total": float(days["total_cost"].sum())}}))
"""


def build(root: Path = MONTH) -> Path:
    """The compacted month (once; ``complete`` says a previous run finished it)."""
    import history
    import pandas as pd

    from ccanalytics.history.collector._collect import snapshot_rows
    from ccanalytics.history.store._write import append_frame

    store = root / "store"
    if (root / "complete").exists():
        return store
    print(f"  building the month store in {root} (once)...", flush=True)
    day = history._one_day()
    for d in range(history.MONTH_DAYS):
        tables: dict[str, list[object]] = {"pods": [], "gpus": [], "snapshots": []}
        for snap in day:
            pods = history._shifted(snap.pods, d)  # type: ignore[attr-defined]
            gpus = history._shifted(snap.gpus, d)  # type: ignore[attr-defined]
            first = pods.groupby("cluster_id")["observed_at"].min().to_dict()  # type: ignore[attr-defined]
            tables["pods"].append(pods)
            tables["gpus"].append(gpus)
            tables["snapshots"].append(snapshot_rows(snap, first))  # type: ignore[arg-type]
        for table, frames in tables.items():
            append_frame(store, table, pd.concat(frames, ignore_index=True))  # type: ignore[arg-type]
    (root / "complete").write_text(f"{history.MONTH_DAYS} days x 288 snapshots\n")
    return store


def _run(store: Path, spark: bool) -> dict[str, float]:
    repo = str(Path(__file__).resolve().parent.parent)
    code = _CHILD.format(repo=repo, store=str(store), spark=spark)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def bench() -> None:
    print("spark: the month question on Spark local[2] beside DuckDB, same store")
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("  skipped: the engines extra (pyspark) is not installed")
        return
    store = build()
    duck, spark = [], []
    for _ in range(REPEAT):  # interleaved: a noisy neighbour hurts both alike
        duck.append(_run(store, spark=False))
        spark.append(_run(store, spark=True))
    assert abs(duck[0]["total"] - spark[0]["total"]) < 0.005, (duck[0], spark[0])
    rows = int(duck[0]["rows"])
    whole = statistics.median(r["seconds"] for r in spark)
    base = statistics.median(r["seconds"] for r in duck)
    report(
        f"idle_cost(by='day'), month compacted ({rows / 1e6:.2f}M pod rows), fresh process",
        f"{whole:.1f} s",
        f"{base:.2f} s duckdb",
        f"{whole / base:.0f}x; no target (Spark: a store one machine cannot hold)",
        value=whole / base,
    )
    query = statistics.median(r["query"] for r in spark)
    report(
        "  of which History and the query, the session started",
        f"{query:.1f} s",
        f"{statistics.median(r['query'] for r in duck):.2f} s duckdb",
        f"the session's start: {whole - query:.1f} s",
    )


if __name__ == "__main__":
    bench()

"""A Spark session and a simulated week of the sandbox, shared by the engines' tests.

The session is pyspark's ``local[2]`` (the ``engines`` extra; Java 17), one per process
and quiet: no UI, two shuffle partitions (the default 200 would be 200 tasks a query
over a few thousand rows), and its JVM compiles with C1 alone and collects with one
thread: the tests' queries are many and short, so the optimising compiler's work never
pays back. C1 alone reserves only 48 MB for compiled code, which Spark's generated
classes fill within a minute; the JVM then stops compiling and interprets the rest of
the session (each query 2-3x slower), so the cache is reserved at 256 MB. A test that
stops it leaves the next to start another (:func:`spark` asks ``getOrCreate`` each
time). Without pyspark or Java the tests skip, saying which (tests/README.md lists both
reasons).
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ccanalytics import collect
from ccanalytics.history import compact
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

#: The week: a snapshot every 2 hours from Monday 2026-11-02, a 10-hour gap on Wednesday.
WEEK_START = datetime(2026, 11, 2, tzinfo=UTC)
STEP = timedelta(hours=2)
INSTANTS = 84
GAP = range(28, 33)  # Wednesday 08:00-16:00: no collect ran
CLUSTERS = ("cl-eval-afternoon", "cl-infer-prod", "cl-llama70b-train", "cl-research-dev")
#: The day compacted (one file per table, and its rollup); the others stay as written.
COMPACTED = "2026-11-03"


#: The driver JVM's options (it runs the executors too, in local mode).
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ReservedCodeCacheSize=256m"


def _session() -> Any:
    pytest.importorskip("pyspark", reason="the engines extra (pyspark) is not installed")
    if shutil.which("java") is None:
        pytest.skip("no Java for Spark (pyspark needs Java 17)")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("ccanalytics-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.extraJavaOptions", JVM_OPTIONS)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")  # Spark's own log of a failed query is not ours
    return session


@pytest.fixture
def spark() -> Any:
    """The process's Spark session (started on first use, again after a test stopped it)."""
    return _session()


@pytest.fixture(scope="session")
def week_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A week of the sandbox collected every 2 hours: four clusters, one 404 until
    Monday 14:00 (failed listings), a 10-hour gap, Tuesday compacted, the rest not."""
    store = tmp_path_factory.mktemp("week") / "store"
    clock = SimulatedClock(WEEK_START)
    with Sandbox(SandboxApp(clock=clock)) as sandbox, sandbox.client(EXEMPT_KEY) as client:
        for number in range(INSTANTS):
            if number not in GAP:
                collect(
                    list(CLUSTERS),
                    store,
                    client=client,
                    errors="collect",
                    trust_service_clock=True,
                )
            clock.advance(STEP)
    compact(store, COMPACTED)
    return store

"""docs/guide/beyond-one-machine.md: its Spark and Dask examples run, and say what they say.

The page's engine examples are ```py blocks (the docs' ```python blocks run in every
test run; Dask is in the test extra, pyspark (which needs Java 17) in the ``engines``
extra, which .ci/run installs). Each runs here in a namespace where ``STORE`` is a
folder and ``S3_STORE`` the same snapshots in a bucket on the local S3 server
(tests/s3server.py), and its answer is checked against History's. Without pyspark the
Spark example skips, saying so (tests/README.md lists that reason for the floors run).
"""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ccanalytics import History, collect
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "beyond-one-machine.md"
ENGINE_BLOCK = re.compile(r"^```py\n(.*?)^```", re.MULTILINE | re.DOTALL)
CLUSTERS = ["cl-infer-prod", "cl-llama70b-train"]


def _block(engine: str) -> str:
    (block,) = [b for b in ENGINE_BLOCK.findall(PAGE.read_text(encoding="utf-8")) if engine in b]
    return str(block)


@pytest.fixture
def stores(tmp_path: Path, s3_store: str) -> tuple[str, str]:
    """Three snapshots of two clusters in a folder and in a bucket."""
    folder = str(tmp_path / "store")
    clock = SimulatedClock(datetime(2026, 11, 2, tzinfo=UTC))
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        for _ in range(3):
            for target in (folder, s3_store):
                collect(CLUSTERS, target, client=client, trust_service_clock=True)
            clock.advance(timedelta(minutes=5))
    return folder, s3_store


def _history_counts(store: str) -> dict[str, int]:
    with History(store) as h:
        return {str(k): int(v) for k, v in h.pods().groupby("cluster_id").size().items()}


def _add_a_later_column(folder: str) -> str:
    """A file of a later day with a column the earlier files lack (the store grows so)."""
    (first,) = sorted(Path(folder, "pods").glob("date=*/*.parquet"))[:1]
    table = pq.read_table(first)
    later = table.append_column("added_later", pa.array([1.5] * table.num_rows))
    folder_later = Path(folder, "pods", "date=2026-11-03")
    folder_later.mkdir()
    pq.write_table(later, folder_later / "20261103T000000000000Z-later.parquet")
    return "added_later"


@pytest.mark.slow
def test_the_dask_example_reads_the_bucket(stores: tuple[str, str]) -> None:
    pytest.importorskip("dask.dataframe", reason="the engines extra (dask) is not installed")
    folder, s3 = stores
    namespace: dict[str, Any] = {"STORE": folder, "S3_STORE": s3}
    exec(compile(_block("dask"), f"{PAGE.name} dask example", "exec"), namespace)
    assert namespace["per_cluster"].to_dict() == _history_counts(s3)
    # A column added later: dropped unless the full schema is passed (what the page says).
    import dask.dataframe as dd

    column = _add_a_later_column(folder)
    default = dd.read_parquet(f"{folder}/pods", dataset={"partitioning": "hive"})
    assert column not in default.columns
    files = sorted(Path(folder, "pods").rglob("*.parquet"))
    unified = pa.unify_schemas([pq.read_schema(f) for f in files])
    told = dd.from_map(lambda f: pq.read_table(f, schema=unified).to_pandas(), files)
    assert column in told.columns and told[column].sum().compute() > 0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_spark_example_reads_the_folder(
    stores: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyspark", reason="the engines extra (pyspark) is not installed")
    if shutil.which("java") is None:
        pytest.skip("pyspark needs a Java runtime (17 or later)")
    # The page's code as it is, in a JVM started for a ten-second job: no web UI, and
    # the quick compiler only (the optimizing one's threads cost more than they save
    # here): 10-11 s -> 8 s on a quiet machine.
    jvm = '"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"'
    submit = f"--conf spark.ui.enabled=false --driver-java-options {jvm} pyspark-shell"
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", submit)
    folder, _ = stores
    namespace: dict[str, Any] = {"STORE": folder}
    code = _block("pyspark").replace(".toPandas()", ".collect()")  # no pandas 3 warning
    exec(compile(code, f"{PAGE.name} spark example", "exec"), namespace)
    spark = namespace["spark"]
    try:
        got = {row["cluster_id"]: row["rows"] for row in namespace["per_cluster"]}
        assert got == _history_counts(folder)
        assert {row["snapshots"] for row in namespace["per_cluster"]} == {3}
        column = _add_a_later_column(folder)
        merged = spark.read.option("mergeSchema", "true").parquet(f"{folder}/pods")
        assert column in merged.columns
        assert merged.filter(merged[column].isNull()).count() == sum(got.values())
    finally:
        spark.stop()


def test_the_column_table_matches_duckdb_and_polars(stores: tuple[str, str]) -> None:
    import duckdb
    import polars as pl

    folder, _ = stores
    column = _add_a_later_column(folder)
    glob = f"{folder}/pods/**/*.parquet"
    first = duckdb.sql(f"SELECT * FROM read_parquet('{glob}', hive_partitioning = true)")
    assert column not in first.columns
    union = duckdb.sql(
        f"SELECT * FROM read_parquet('{glob}', hive_partitioning = true, union_by_name = true)"
    )
    assert column in union.columns
    scan = pl.scan_parquet(glob, hive_partitioning=True)
    assert column not in scan.collect_schema().names()
    with pytest.raises(pl.exceptions.SchemaError):
        scan.collect()  # the later file's extra column
    files = sorted(Path(folder, "pods").rglob("*.parquet"))
    unified = pa.unify_schemas([pq.read_schema(f) for f in files]).empty_table()
    told = pl.scan_parquet(
        glob, hive_partitioning=True, schema=pl.from_arrow(unified).schema, missing_columns="insert"
    )
    assert told.select(pl.col(column).sum()).collect().item() > 0
    with History(folder) as h:
        assert pd.notna(h.pods()[column]).sum() > 0

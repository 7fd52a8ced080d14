"""The history store: collect appends Parquet files that History, pyarrow and DuckDB read alike."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from history_helpers import write_empty_listing

import ccanalytics
from ccanalytics import History, StoreError, collect
from ccanalytics.history import SCHEMA_VERSION, verify
from ccanalytics.sandbox import Sandbox

CLUSTERS = ["cl-infer-prod", "cl-llama70b-train", "cl-bringup"]


def data_files(store: Path) -> list[Path]:
    return sorted(store.rglob("*.parquet"))


def raw_duckdb(store: Path, table: str) -> pd.DataFrame:
    """What a user's own DuckDB reads from the store, as the docs site (guide/history.md) shows it."""
    glob = f"{store}/{table}/**/*.parquet"
    return (
        duckdb.sql(
            f"SELECT * FROM read_parquet('{glob}', hive_partitioning = true, union_by_name = true)"
        )
        .to_arrow_table()
        .to_pandas()
    )


def row_keys(frame: pd.DataFrame, *extra: str) -> list[tuple[Any, ...]]:
    """Each row's identity (sorted), with observed_at as an integer of microseconds."""
    when = (
        pd.to_datetime(frame["observed_at"], utc=True).astype("datetime64[us, UTC]").astype("int64")
    )
    cols = [
        frame[c].astype(object).where(frame[c].notna(), None)
        for c in ("cluster_id", "pod_id", *extra)
    ]
    return sorted(zip(when.tolist(), *(c.tolist() for c in cols), strict=True))


# -- writing and reading back ------------------------------------------------------------


def test_collect_writes_one_file_per_table_and_day_under_hive_partitions(
    client: Any, tmp_path: Path
) -> None:
    result = collect(CLUSTERS, tmp_path, client=client)

    live = ccanalytics.load_cluster_frames(CLUSTERS, client=client)
    assert result.pod_rows == len(live.pods) > 0
    assert result.gpu_rows == len(live.gpus) > 0
    assert result.clusters == tuple(CLUSTERS) and not result.errors
    assert set(result.observed_at) == set(CLUSTERS)
    day = result.snapshot_time.strftime("%Y-%m-%d")
    assert sorted(p.relative_to(tmp_path).parent.as_posix() for p in result.files) == [
        f"gpus/date={day}",
        f"pods/date={day}",
        f"snapshots/date={day}",
    ]
    assert data_files(tmp_path) == sorted(result.files)
    # The partition value lives in the folder name only, never inside the files.
    for path in result.files:
        names = pq.read_schema(path).names
        assert "date" not in names and names[-2:] == ["observed_at", "schema_version"]


def test_history_pyarrow_and_duckdb_read_back_the_same_rows(client: Any, tmp_path: Path) -> None:
    collect(CLUSTERS, tmp_path, client=client)
    collect(CLUSTERS[:2], tmp_path, client=client)

    with History(tmp_path) as h:
        pods, gpus = h.pods(), h.gpus()
    arrow_pods = ds.dataset(tmp_path / "pods", format="parquet", partitioning="hive").to_table()
    direct_pods = raw_duckdb(tmp_path, "pods")
    direct_gpus = raw_duckdb(tmp_path, "gpus")

    assert len(pods) == arrow_pods.num_rows == len(direct_pods) > 0
    assert row_keys(pods) == row_keys(arrow_pods.to_pandas()) == row_keys(direct_pods)
    assert row_keys(gpus, "gpu_index") == row_keys(direct_gpus, "gpu_index")
    # Values, not only keys: utilization, cost and GPU count agree cell for cell.
    values = ("gpu_util_mean", "cost", "gpu_count", "rank")
    assert row_keys(pods, *values) == row_keys(direct_pods, *values)
    assert row_keys(pods, *values) == row_keys(arrow_pods.to_pandas(), *values)


def test_history_frames_have_the_live_frames_columns_and_nullable_dtypes(
    client: Any, tmp_path: Path
) -> None:
    live = ccanalytics.load_cluster_frames(CLUSTERS, client=client)
    collect(CLUSTERS, tmp_path, client=client)
    with History(tmp_path) as h:
        pods, gpus = h.pods(), h.gpus()
    for stored, fresh in ((pods, live.pods), (gpus, live.gpus)):
        assert list(stored.columns) == list(fresh.columns)
        assert stored.dtypes.to_dict() == fresh.dtypes.to_dict()
        assert str(stored["observed_at"].dtype) == "datetime64[ns, UTC]"
    # Same values as the live load (the sandbox's fleet does not move between calls).
    key = ["cluster_id", "pod_id"]
    a = pods.drop(columns="observed_at").sort_values(key).reset_index(drop=True)
    b = live.pods.drop(columns="observed_at").sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


def test_observed_at_is_the_response_date_header(client: Any, tmp_path: Path) -> None:
    before = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=1)
    result = collect(CLUSTERS, tmp_path, client=client)
    after = datetime.now(UTC) + timedelta(seconds=1)
    with History(tmp_path) as h:
        stamps = h.pods()["observed_at"]
    # The sandbox's Date header has whole seconds; the local clock would not.
    assert (stamps.dt.microsecond == 0).all()
    assert before <= stamps.min() and stamps.max() <= after
    assert {pd.Timestamp(t) for t in result.observed_at.values()} == set(stamps)


def test_rows_carry_the_schema_version(client: Any, tmp_path: Path) -> None:
    collect(CLUSTERS, tmp_path, client=client)
    table = ds.dataset(tmp_path / "pods", format="parquet", partitioning="hive").to_table()
    assert table.schema.field("schema_version").type == pa.int32()
    assert set(table.column("schema_version").to_pylist()) == {SCHEMA_VERSION}


# -- append-only ----------------------------------------------------------------------------


def test_another_collect_never_rewrites_or_removes_a_file(client: Any, tmp_path: Path) -> None:
    collect(CLUSTERS, tmp_path, client=client)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in data_files(tmp_path)}
    second = collect(CLUSTERS, tmp_path, client=client)

    after = data_files(tmp_path)
    assert set(before) <= set(after)
    assert set(after) - set(before) == set(second.files)
    for path, (content, mtime) in before.items():
        assert path.read_bytes() == content and path.stat().st_mtime_ns == mtime
    with History(tmp_path) as h:
        assert len(h.pods()) == 2 * second.pod_rows


def test_a_file_is_written_under_a_hidden_name_then_renamed(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renames: list[tuple[str, str, bool]] = []
    real_replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        # At the moment of the rename the final name must not exist yet, and the
        # source must be a complete Parquet file already.
        renames.append((Path(src).name, Path(dst).name, Path(dst).exists()))
        assert pq.read_metadata(src).num_rows > 0
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    result = collect(CLUSTERS, tmp_path, client=client)
    assert sorted(dst for _, dst, _ in renames) == sorted(p.name for p in result.files)
    for src, dst, existed in renames:
        # A hidden name of its own (readers skip ``.*.tmp``), unique per writer.
        assert src.startswith(f".{dst}.") and src.endswith(".tmp") and not existed


def test_a_failed_write_leaves_no_file_at_all(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(StoreError, match="No space left"):
        collect(CLUSTERS, tmp_path, client=client)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


# -- a crash between writing and renaming --------------------------------------------------

CRASHING_COLLECTOR = """
import os, sys
from ccanalytics.sandbox import Sandbox
from ccanalytics import collect
crashes = int(sys.argv[2])
real_replace = os.replace
def replace(src, dst):
    global crashes
    if crashes == 0:
        os._exit(9)  # killed between writing the temporary file and renaming it
    crashes -= 1
    real_replace(src, dst)
os.replace = replace
with Sandbox() as sb, sb.client() as client:
    collect(["cl-infer-prod", "cl-bringup"], sys.argv[1], client=client)
"""


def crash_collect(store: Path, renames_before_crash: int) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CRASHING_COLLECTOR, str(store), str(renames_before_crash)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 9, proc.stderr


def test_a_crash_before_the_rename_leaves_the_store_readable(client: Any, tmp_path: Path) -> None:
    first = collect(CLUSTERS, tmp_path, client=client)
    crash_collect(tmp_path, renames_before_crash=1)  # one table's file renamed, not the other's

    orphans = list(tmp_path.rglob(".*.tmp"))
    assert len(orphans) == 1
    assert pq.read_metadata(orphans[0]).num_rows > 0  # a complete file that was never renamed
    lost = orphans[0].parent.parent.name  # the table whose file was not renamed
    landed = "pods" if lost == "gpus" else "gpus"
    before = {"pods": first.pod_rows, "gpus": first.gpu_rows}
    with History(tmp_path) as h:
        counts = {"pods": len(h.pods()), "gpus": len(h.gpus())}
    assert counts[lost] == before[lost]  # the orphan is not read
    # The crashed run's other file did land, but its snapshot has no record: not read
    # either, so the run that failed is in no answer, not in half of them.
    assert len(list((tmp_path / landed).rglob("*.parquet"))) == 2
    assert counts[landed] == before[landed]
    assert raw_duckdb(tmp_path, lost).shape[0] == before[lost]
    assert ds.dataset(tmp_path / lost, partitioning="hive").count_rows() == before[lost]
    report = verify(tmp_path)
    assert report.temporary == tuple(orphans) and not report.unreadable and not report.ok
    (uncommitted,) = report.uncommitted
    assert uncommitted.parent.parent.name == landed and uncommitted.name not in {
        f.name for f in first.files
    }


def test_a_crash_before_any_rename_loses_only_that_run(client: Any, tmp_path: Path) -> None:
    first = collect(CLUSTERS, tmp_path, client=client)
    crash_collect(tmp_path, renames_before_crash=0)
    with History(tmp_path) as h:
        assert (len(h.pods()), len(h.gpus())) == (first.pod_rows, first.gpu_rows)


# -- concurrent collectors ---------------------------------------------------------------


def test_two_collectors_in_parallel_lose_nothing(tmp_path: Path) -> None:
    rounds = 5
    results: list[Any] = []
    failures: list[BaseException] = []
    start = threading.Barrier(2)

    def collector(clusters: list[str]) -> None:
        try:
            with Sandbox() as sb, sb.client() as client:
                start.wait()
                for _ in range(rounds):
                    results.append(collect(clusters, tmp_path, client=client))
        except BaseException as err:  # pragma: no cover - reported below
            failures.append(err)

    threads = [
        threading.Thread(target=collector, args=(CLUSTERS,)),
        threading.Thread(target=collector, args=(CLUSTERS[:1],)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    files = [f for r in results for f in r.files]
    assert len(results) == 2 * rounds and len(set(files)) == len(files)
    assert sorted(files) == data_files(tmp_path)
    with History(tmp_path) as h:
        assert len(h.pods()) == sum(r.pod_rows for r in results)
        assert len(h.gpus()) == sum(r.gpu_rows for r in results)


# -- schema growth ---------------------------------------------------------------------------


def test_a_newer_files_extra_column_reads_and_old_rows_read_it_as_null(
    client: Any, tmp_path: Path
) -> None:
    old = collect(CLUSTERS, tmp_path, client=client)
    # A file as a newer version would write it: one more column, a higher schema_version.
    newer = pq.read_table(next(p for p in old.files if p.parent.parent.name == "pods"))
    newer = newer.set_column(
        newer.schema.get_field_index("schema_version"),
        "schema_version",
        pa.array([SCHEMA_VERSION + 1] * newer.num_rows, type=pa.int32()),
    ).append_column("power_watts", pa.array([350.5] * newer.num_rows, type=pa.float64()))
    folder = old.files[0].parent.parent.parent / "pods" / old.files[0].parent.name
    pq.write_table(newer, folder / "29990101T000000000000Z-newer.parquet")

    with History(tmp_path) as h:
        pods = h.pods()
        versions = h.sql(
            "SELECT schema_version, count(power_watts) AS n FROM pods GROUP BY 1 ORDER BY 1"
        )
    assert len(pods) == 2 * old.pod_rows
    assert str(pods["power_watts"].dtype) == "Float64"
    assert pods["power_watts"].isna().sum() == old.pod_rows
    assert (pods["power_watts"].dropna() == 350.5).all()
    assert versions.to_dict("list") == {"schema_version": [1, 2], "n": [0, old.pod_rows]}
    assert raw_duckdb(tmp_path, "pods")["power_watts"].notna().sum() == old.pod_rows


def test_a_column_the_files_lack_still_reads_as_null(client: Any, tmp_path: Path) -> None:
    old = collect(CLUSTERS, tmp_path, client=client)
    pods_file = next(p for p in old.files if p.parent.parent.name == "pods")
    table = pq.read_table(pods_file)
    pq.write_table(table.drop_columns(["gpu_util_mean"]), pods_file)  # an older writer's file
    with History(tmp_path) as h:
        pods = h.pods()
    assert "gpu_util_mean" in pods and str(pods["gpu_util_mean"].dtype) == "Float64"
    assert pods["gpu_util_mean"].isna().all()


# -- empty, missing and corrupt stores ----------------------------------------------------


def test_a_store_without_pods_gives_empty_frames_with_the_right_columns(tmp_path: Path) -> None:
    # A missing or empty folder is no store at all: tests/history/test_no_store.py.
    store = write_empty_listing(tmp_path / "store")
    with History(store) as h:
        pods, gpus = h.pods(), h.gpus()
        n = h.sql("SELECT count(*) AS n FROM pods")["n"].tolist()
        recent = h.pods(since=timedelta(hours=1))
    live_pods, live_gpus = ccanalytics.pods_frame([]), ccanalytics.gpus_frame([])
    assert pods.empty and gpus.empty and recent.empty and n == [0]
    assert list(pods.columns) == [*live_pods.columns, "observed_at"]
    assert list(gpus.columns) == [*live_gpus.columns, "observed_at"]
    assert pods.dtypes.drop("observed_at").to_dict() == live_pods.dtypes.to_dict()
    assert str(pods["observed_at"].dtype) == "datetime64[ns, UTC]"
    assert not (store / "pods").exists() and not (store / "gpus").exists()  # nor creates


def test_a_corrupt_file_gives_an_error_naming_it(client: Any, tmp_path: Path) -> None:
    result = collect(CLUSTERS, tmp_path, client=client)
    bad = next(p for p in result.files if p.parent.parent.name == "pods")
    bad.write_bytes(bad.read_bytes()[: len(bad.read_bytes()) // 2])  # truncated by a broken disk
    with pytest.raises(StoreError) as caught, History(tmp_path) as h:
        h.pods()
    message = str(caught.value)
    assert message.startswith(f"cannot read store file {bad}:") and caught.value.path == bad
    assert "\n" not in message and "LINE 1" not in message
    assert bad in verify(tmp_path).unreadable


def test_a_query_mistake_is_duckdbs_own_error_not_a_store_error(tmp_path: Path) -> None:
    with History(write_empty_listing(tmp_path)) as h, pytest.raises(duckdb.Error) as caught:
        h.sql("SELECT no_such_column FROM pods")
    assert not isinstance(caught.value, StoreError)


def test_history_opens_no_network_connection(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    collect(CLUSTERS, tmp_path, client=client)
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("History must not open network connections")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    with History(tmp_path) as h:
        assert len(h.pods()) > 0
        # DuckDB itself is locked down: no URL, no file outside the store.
        with pytest.raises(duckdb.Error, match="disabled by configuration"):
            h.sql("SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')")
        with pytest.raises(duckdb.Error, match="disabled by configuration"):
            h.sql(f"SELECT * FROM read_text('{Path(__file__)}')")
    assert attempts == []


# -- secrets ------------------------------------------------------------------------------


def test_no_secret_reaches_any_file_of_the_store(sandbox: Sandbox, tmp_path: Path) -> None:
    from ccanalytics.sandbox import FULL_ACCESS_KEY

    secrets = [*sorted(sandbox.app.data.secrets()), FULL_ACCESS_KEY]
    assert any("env" in s for s in secrets)  # the fleet does carry env secrets
    with sandbox.client() as client:
        collect(sorted(sandbox.app.data.clusters), tmp_path, client=client)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for path in files:
        content = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in content, f"{secret!r} in {path}"
    # Compression could hide a string from a byte scan: scan every decoded cell too.
    with History(tmp_path) as h:
        cells = " ".join(
            " ".join(map(str, frame.to_numpy().ravel())) for frame in (h.pods(), h.gpus())
        )
    assert "cl-llama70b-train" in cells  # the scan does see stored strings
    assert not [s for s in secrets if s in cells]


def test_polars_reads_the_store_with_the_readmes_one_liner(client: Any, tmp_path: Path) -> None:
    polars = pytest.importorskip("polars")
    first = collect(CLUSTERS, tmp_path, client=client)
    collect(CLUSTERS, tmp_path, client=client)
    frame = polars.scan_parquet(
        f"{tmp_path}/pods/**/*.parquet",
        hive_partitioning=True,
        missing_columns="insert",
        extra_columns="ignore",
    ).collect()
    assert frame.height == 2 * first.pod_rows
    assert {"date", "observed_at", "cluster_id", "gpu_util_mean"} <= set(frame.columns)


# -- failing clusters ------------------------------------------------------------------------


def test_errors_raise_writes_the_clusters_that_loaded_then_raises(
    client: Any, tmp_path: Path
) -> None:
    with pytest.raises(ccanalytics.FleetLoadError) as caught:
        collect(["cl-infer-prod", "cl-nope"], tmp_path, client=client)
    assert set(caught.value.errors) == {"cl-nope"} and "404" in str(caught.value)
    assert set(caught.value.frame["cluster_id"]) == {"cl-infer-prod"}
    with History(tmp_path) as h:
        assert set(h.pods()["cluster_id"]) == {"cl-infer-prod"}


def test_errors_collect_records_the_failures_in_the_result(client: Any, tmp_path: Path) -> None:
    result = collect(["cl-infer-prod", "cl-nope"], tmp_path, client=client, errors="collect")
    assert result.clusters == ("cl-infer-prod",)
    assert list(result.errors) == ["cl-nope"] and "404" in str(result.errors["cl-nope"])
    assert set(result.observed_at) == {"cl-infer-prod"}


def test_a_bad_errors_argument_is_refused_before_any_request(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="errors"):
        collect(["cl-infer-prod"], tmp_path, errors="ignore")  # type: ignore[arg-type]
    assert not tmp_path.joinpath("pods").exists()


def test_history_verify_reports_a_healthy_store(client: Any, tmp_path: Path) -> None:
    result = collect(CLUSTERS, tmp_path, client=client)
    with History(tmp_path) as h:
        report = h.verify()
    assert report.ok and report.files == len(result.files) == 3


def test_a_collect_result_crosses_a_process_boundary(client: Any, tmp_path: Path) -> None:
    """``collect`` run in a ``ProcessPoolExecutor`` (one collector per region, say) hands
    its result back pickled: every field arrives, the failures as the typed errors."""
    import pickle

    result = collect(["cl-infer-prod", "cl-nope"], tmp_path, client=client, errors="collect")
    back = pickle.loads(pickle.dumps(result))
    assert dict(back.observed_at) == dict(result.observed_at) != {}
    assert (back.clusters, back.pod_rows, back.gpu_rows, back.files) == (
        result.clusters,
        result.pod_rows,
        result.gpu_rows,
        result.files,
    )
    assert type(back.errors["cl-nope"]) is type(result.errors["cl-nope"])
    assert str(back.errors["cl-nope"]) == str(result.errors["cl-nope"])
    with pytest.raises(TypeError):
        back.errors["cl-x"] = result.errors["cl-nope"]  # still read-only

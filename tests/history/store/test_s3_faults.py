"""The S3 store under faults: a fault proxy (tests/s3faults.py) between the store and
the local S3 server loses answers, refuses uploads and cuts downloads short.

"Nothing lost" is judged by reading the objects back with pyarrow, straight from the
S3 server (not through the proxy, nor through the store's own readers).
"""

from __future__ import annotations

import io
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from s3faults import FaultProxy
from s3server import new_bucket

from ccanalytics import History, collect
from ccanalytics.errors import StoreError
from ccanalytics.history import verify
from ccanalytics.history.store import _s3
from ccanalytics.history.store._fs import open_store
from ccanalytics.history.store._layout import snapshot_of
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

CLUSTERS = ["cl-infer-prod", "cl-llama70b-train"]


def collect_at(clock: SimulatedClock, store: str) -> Any:
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        return collect(CLUSTERS, store, client=client, trust_service_clock=True)


def through(proxy: FaultProxy, bucket: str) -> str:
    """The store ``s3://bucket/store`` reached through the proxy."""
    return f"s3://{bucket}/store?endpoint_url={proxy.endpoint}"


def stored(endpoint: str, bucket: str, table: str) -> dict[str, pa.Table]:
    """Every data object of ``table``, read back with pyarrow straight from S3."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint)
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=f"store/{table}/").get("Contents", [])
    return {
        o["Key"]: pq.read_table(
            io.BytesIO(s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read())
        )
        for o in listed
        if o["Key"].endswith(".parquet") and "/." not in o["Key"]
    }


def rows(tables: dict[str, pa.Table]) -> int:
    return sum(t.num_rows for t in tables.values())


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(datetime(2026, 11, 20, 10, tzinfo=UTC))


# --------------------------------------------------------------------------- lost answers


@pytest.mark.parametrize("action", ["500-after", "reset-after"])
@pytest.mark.parametrize("table", ["pods", "gpus", "snapshots"])
def test_a_lost_answer_to_an_upload_that_happened_is_no_failure(
    fault_proxy: FaultProxy, s3_endpoint: str, clock: SimulatedClock, action: Any, table: str
) -> None:
    bucket = new_bucket(s3_endpoint)
    fault_proxy.add("PUT", f"/{bucket}/store/{table}/", action, times=1)
    result = collect_at(clock, through(fault_proxy, bucket))
    # S3 stored the first PUT, its answer was lost, botocore sent it again and got 412.
    assert fault_proxy.outcomes("PUT", f"/{bucket}/store/{table}/") == [
        f"{action} (S3 answered 200)",
        "412",
    ]
    pods, gpus, snaps = (stored(s3_endpoint, bucket, t) for t in ("pods", "gpus", "snapshots"))
    assert (len(pods), len(gpus), len(snaps)) == (1, 1, 1)
    assert rows(pods) == result.pod_rows > 0 and rows(gpus) == result.gpu_rows > 0
    assert rows(snaps) == len(CLUSTERS)
    with History(through(fault_proxy, bucket)) as h:
        assert len(h.pods()) == result.pod_rows and len(h.gpus()) == result.gpu_rows
        assert list(h.snapshots()["outcome"]) == ["ok"] * len(CLUSTERS)


def test_an_object_of_other_bytes_at_the_key_is_still_a_conflict(
    fault_proxy: FaultProxy, s3_endpoint: str
) -> None:
    bucket = new_bucket(s3_endpoint)
    location = open_store(through(fault_proxy, bucket))
    path = location.root / "pods" / "x.parquet"
    location.create(path, lambda sink: sink.write(b"theirs"))
    fault_proxy.add("PUT", f"/{bucket}/store/pods/", "500-after", times=1)
    with pytest.raises(FileExistsError):
        location.create(path, lambda sink: sink.write(b"ours!!"))  # the same size, not ours
    assert location.read_bytes(path) == b"theirs"


def test_a_lock_whose_answer_was_lost_is_held(
    fault_proxy: FaultProxy, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_s3, "LOCK_WAIT_SECONDS", 1.0)  # the bug: stuck until the lock is stale
    bucket = new_bucket(s3_endpoint)
    location = open_store(through(fault_proxy, bucket))
    fault_proxy.add("PUT", f"/{bucket}/store/.compact.lock", "reset-after", times=1)
    with location.lock(".compact.lock"):
        pass
    import boto3

    listed = boto3.client("s3", endpoint_url=s3_endpoint).list_objects_v2(Bucket=bucket)
    assert "Contents" not in listed  # released: the holder removed its lock


# --------------------------------------------------------------------------- cut downloads


@pytest.mark.parametrize("action", ["truncate-body", "reset-body"])
def test_one_cut_download_of_a_data_file_is_read_again(
    fault_proxy: FaultProxy, s3_endpoint: str, clock: SimulatedClock, action: Any
) -> None:
    bucket = new_bucket(s3_endpoint)
    result = collect_at(clock, through(fault_proxy, bucket))
    fault_proxy.add("GET", f"/{bucket}/store/pods/", action, times=1)
    with History(through(fault_proxy, bucket)) as h:
        assert len(h.pods()) == result.pod_rows == rows(stored(s3_endpoint, bucket, "pods"))
    outcomes = fault_proxy.outcomes("GET", f"/{bucket}/store/pods/")
    assert outcomes[:2] == [f"{action} (S3 answered 200)", "200"]


@pytest.mark.parametrize("action", ["truncate-body", "reset-body"])
def test_a_data_file_that_never_downloads_whole_is_a_store_error_naming_it(
    fault_proxy: FaultProxy,
    s3_endpoint: str,
    clock: SimulatedClock,
    action: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_s3, "READ_PAUSE_SECONDS", 0.01)
    bucket = new_bucket(s3_endpoint)
    collect_at(clock, through(fault_proxy, bucket))
    (key,) = stored(s3_endpoint, bucket, "pods")
    fault_proxy.add("GET", f"/{bucket}/store/pods/", action)
    with pytest.raises(StoreError) as caught, History(through(fault_proxy, bucket)) as h:
        h.pods()
    assert caught.value.path == f"s3://{bucket}/{key}"
    assert f"s3://{bucket}/{key}" in str(caught.value)
    # Bounded: a few tries, not botocore's five per try nor for ever.
    assert len(fault_proxy.outcomes("GET", f"/{bucket}/{key}")) == _s3.READ_ATTEMPTS


# --------------------------------------------------------------------------- failed snapshots


def instants(h: History) -> dict[str, set[Any]]:
    """The snapshot instants each of History's tables holds."""
    return {
        "pods": set(h.pods()["observed_at"]),
        "gpus": set(h.gpus()["observed_at"]),
        "snapshots": set(h.snapshots()["observed_at"]),
    }


def assert_only_the_first(store: str, first: Any) -> None:
    with History(store) as h:
        when = {pd_ts(t) for t in first.observed_at.values()}
        assert instants(h) == {"pods": when, "gpus": when, "snapshots": when}
        assert len(h.pods()) == first.pod_rows and len(h.gpus()) == first.gpu_rows
        assert list(h.snapshots()["outcome"]) == ["ok"] * len(CLUSTERS)


def pd_ts(value: datetime) -> Any:
    import pandas as pd

    return pd.Timestamp(value)


@pytest.mark.parametrize("deletes", ["work", "fail"])
def test_an_s3_snapshot_reported_failed_is_invisible(
    fault_proxy: FaultProxy, s3_endpoint: str, clock: SimulatedClock, deletes: str
) -> None:
    bucket = new_bucket(s3_endpoint)
    store = through(fault_proxy, bucket)
    first = collect_at(clock, store)
    clock.advance(timedelta(minutes=5))
    fault_proxy.add("PUT", f"/{bucket}/store/gpus/", "503")
    if deletes == "fail":  # the writer cannot take back what it wrote: readers ignore it
        fault_proxy.add("DELETE", f"/{bucket}/store/", "503")
    with pytest.raises(StoreError, match="gpus"):
        collect_at(clock, store)
    fault_proxy.clear()
    pods = stored(s3_endpoint, bucket, "pods")
    assert len(pods) == (1 if deletes == "work" else 2)
    assert len(stored(s3_endpoint, bucket, "gpus")) == 1
    assert len(stored(s3_endpoint, bucket, "snapshots")) == 1
    # Nothing of the first snapshot lost: its objects read back whole.
    assert min(t.num_rows for t in pods.values()) == first.pod_rows
    assert rows(stored(s3_endpoint, bucket, "gpus")) == first.gpu_rows
    assert_only_the_first(store, first)


def a_failing_gpus_day(store: Path, day: str) -> None:
    """The store's gpus partition of ``day`` is a file, not a folder: no GPU file can be
    written there (as a full or broken disk would refuse it)."""
    (store / "gpus").mkdir(parents=True, exist_ok=True)
    (store / "gpus" / f"date={day}").write_bytes(b"")


@pytest.mark.parametrize("deletes", ["work", "fail"])
def test_a_folder_snapshot_reported_failed_is_invisible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deletes: str
) -> None:
    clock = SimulatedClock(datetime(2026, 11, 20, 23, 55, tzinfo=UTC))
    store = tmp_path / "store"
    first = collect_at(clock, str(store))
    clock.advance(timedelta(minutes=5))
    a_failing_gpus_day(store, "2026-11-21")
    if deletes == "fail":

        def refuse(self: Any, path: Any) -> None:
            raise PermissionError(13, "Permission denied", str(path))

        monkeypatch.setattr(type(open_store(store)), "delete", refuse)
    with pytest.raises(StoreError, match="gpus"):
        collect_at(clock, str(store))
    monkeypatch.undo()
    left = sorted((store / "pods").rglob("*.parquet"))
    assert len(left) == (1 if deletes == "work" else 2)
    assert pq.read_table(left[0]).num_rows == first.pod_rows  # the first's, whole
    assert_only_the_first(str(store), first)
    report = verify(store)
    assert report.uncommitted == (() if deletes == "work" else (left[1],))
    assert report.ok == (deletes == "work")


def test_compaction_keeps_what_was_committed_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ccanalytics.history import compact

    clock = SimulatedClock(datetime(2026, 11, 20, 10, tzinfo=UTC))
    store = tmp_path / "store"
    first = collect_at(clock, str(store))
    clock.advance(timedelta(minutes=5))
    kind = type(open_store(store))
    real_create = kind.create

    def refuse_gpus(self: Any, path: Any, write: Any) -> None:
        if "gpus" in path.parts:
            raise OSError(28, "No space left on device", str(path))
        real_create(self, path, write)

    monkeypatch.setattr(kind, "create", refuse_gpus)
    monkeypatch.setattr(kind, "delete", lambda self, path: None)  # nothing taken back
    with pytest.raises(StoreError, match="No space left"):
        collect_at(clock, str(store))
    monkeypatch.undo()
    clock.advance(timedelta(minutes=5))
    third = collect_at(clock, str(store))
    compact(store, "2026-11-20")
    day = store / "pods" / "date=2026-11-20"
    # The failed snapshot's file is left out, and left alone while it might be a write
    # in progress; the merged file has a name of no snapshot.
    (failed,) = [p for p in day.glob("*.parquet") if snapshot_of(p.name) is not None]
    (merged,) = [p for p in day.glob("*.parquet") if snapshot_of(p.name) is None]
    kept = pq.read_table(merged)
    assert kept.num_rows == first.pod_rows + third.pod_rows
    assert set(kept.column("observed_at").to_pylist()) == {
        *first.observed_at.values(),
        *third.observed_at.values(),
    }
    with History(store) as h:
        assert len(h.pods()) == kept.num_rows
        assert len(h.gpus()) == first.gpu_rows + third.gpu_rows
    hour_ago = failed.stat().st_mtime - 3600
    os.utime(failed, (hour_ago, hour_ago))
    assert failed in compact(store, "2026-11-20").removed_temporary
    assert sorted(day.glob("*.parquet")) == [merged]


def test_a_data_file_s3_refuses_to_serve_is_a_store_error_naming_it(
    fault_proxy: FaultProxy, s3_endpoint: str, clock: SimulatedClock
) -> None:
    bucket = new_bucket(s3_endpoint)
    collect_at(clock, through(fault_proxy, bucket))
    (key,) = stored(s3_endpoint, bucket, "pods")
    fault_proxy.add("GET", f"/{bucket}/store/pods/", "503")
    with (
        pytest.raises(StoreError, match="SlowDown") as caught,
        History(through(fault_proxy, bucket)) as h,
    ):
        h.pods()
    assert caught.value.path == f"s3://{bucket}/{key}"
    # botocore's own tries only (the request and its 5 retries), none on top of them.
    assert fault_proxy.outcomes("GET", f"/{bucket}/{key}") == ["503"] * 6

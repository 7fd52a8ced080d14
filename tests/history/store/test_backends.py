"""The store's guarantees on both backends: a folder and ``s3://`` on a local S3 server.

The S3 server is moto's, on 127.0.0.1, started by the tests (tests/s3server.py); every
test named ``[s3]`` talks to it over HTTP, never to a mock object and never to AWS. The
guarantees are the local store's (store/test_compact.py, store/test_append_and_read.py),
observed through the one seam both backends share (history.store._location.Location): a
reader at every step of a compaction, a crash at each step, a process killed at any
moment, collectors, a compaction and readers at once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePath, PurePosixPath
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from s3server import new_bucket, upload_folder
from simulated_day import SimulatedDay

from ccanalytics import History, collect
from ccanalytics.errors import StoreError
from ccanalytics.history import compact, verify
from ccanalytics.history.store._fs import open_store
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

CLUSTERS = ["cl-infer-prod", "cl-llama70b-train", "cl-bringup"]
DAY = "2026-11-20"


# The S3 variants are slow (moto answers each request in ~10 ms of Python): the other
# interpreters' fast subset runs them through the S3-only tests below that are not slow.
@pytest.fixture(params=["folder", pytest.param("s3", marks=pytest.mark.slow)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty store: a folder, or ``s3://<fresh bucket>/store`` on the local server."""
    if request.param == "folder":
        return str(tmp_path / "store")
    return str(request.getfixturevalue("s3_store"))


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(datetime(2026, 11, 20, 10, tzinfo=UTC))


def collect_at(clock: SimulatedClock, store: str, clusters: list[str] = CLUSTERS) -> Any:
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        return collect(clusters, store, client=client, trust_service_clock=True)


def fill(store: str, clock: SimulatedClock, snapshots: int = 4) -> str:
    for _ in range(snapshots):
        collect_at(clock, store)
        clock.advance(timedelta(minutes=5))
    return store


def objects(store: str, table: str = "pods") -> list[str]:
    """The table's data files as the backend itself lists them (not through the seam)."""
    if store.startswith("s3://"):
        import boto3

        bucket, prefix = store.removeprefix("s3://").split("/", 1)
        pages = boto3.client("s3").get_paginator("list_objects_v2")
        keys = [
            o["Key"]
            for page in pages.paginate(Bucket=bucket, Prefix=f"{prefix}/{table}/")
            for o in page.get("Contents", ())
        ]
        return sorted(k for k in keys if k.endswith(".parquet") and "/." not in k)
    return sorted(str(p) for p in (Path(store) / table).rglob("*.parquet"))


def hidden(store: str) -> list[str]:
    """Every dot-named file or object in the store (markers, locks, caches, leftovers)."""
    if store.startswith("s3://"):
        import boto3

        bucket, prefix = store.removeprefix("s3://").split("/", 1)
        listed = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/")
        names = [o["Key"].rsplit("/", 1)[-1] for o in listed.get("Contents", ())]
    else:
        names = [p.name for p in Path(store).rglob("*") if p.is_file()]
    return sorted(n for n in names if n.startswith("."))


def history_rows(store: str) -> int:
    with History(store) as h:
        return len(h.pods())


def watch_steps(
    monkeypatch: pytest.MonkeyPatch, store: str, check: Callable[[str, PurePath], None]
) -> None:
    """Call ``check(step, path)`` after each step compaction takes in the store: the
    marker's creation, the merged file's publication, each deletion."""
    kind = type(open_store(store))
    busy = threading.local()  # a check's own reads are not compaction steps
    for name, step in (("create_durably", "marker"), ("publish", "publish"), ("delete", "delete")):
        real = getattr(kind, name)

        def wrapped(
            self: Any, target: Any, *args: Any, _real: Any = real, _step: str = step
        ) -> Any:
            result = _real(self, target, *args)
            path = target.final if _step == "publish" else target
            if not getattr(busy, "on", False):
                busy.on = True
                try:
                    check(_step, path)
                finally:
                    busy.on = False
            return result

        monkeypatch.setattr(kind, name, wrapped)


class Crash(BaseException):
    """A process dying here (BaseException: nothing may catch it as an error)."""


# --------------------------------------------------------------------------- round trip


def test_collect_history_compact_verify_on_each_backend(store: str, clock: SimulatedClock) -> None:
    fill(store, clock)
    before = history_rows(store)
    assert before > 0 and len(objects(store)) == 4
    result = compact(store, DAY)
    assert dict(result.files_after) == {"pods": 1, "gpus": 1, "snapshots": 1}
    assert result.rows["pods"] == before == history_rows(store)
    assert len(objects(store)) == 1 and verify(store).ok
    # No marker or staged file left behind: only the lock (a folder keeps its lock
    # file; an S3 lock object is removed) and the readers' cache.
    expected = (
        [".compact.lock", ".vetted.json"] if not store.startswith("s3://") else [".vetted.json"]
    )
    assert hidden(store) == expected


def test_a_set_of_rollups_is_read_from_one_merged_copy(
    store: str, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.parquet as pq

    from ccanalytics.history.store import _rollup

    for _ in range(3):  # two days compacted (each with its rollup), then today's files
        fill(store, clock, snapshots=2)
        clock.advance(timedelta(days=1))
    for day in ("2026-11-20", "2026-11-21"):
        compact(store, day)
    with History(store) as h:
        first = h.idle_cost(by="day")
    location = open_store(store)
    folder = location.root / _rollup.ROLLUP_DIR
    merged = [n for n, _ in location.entries(folder / _rollup.MERGED_DIR)]
    assert len(merged) == 1  # made by the first reader
    rollups = sorted(_rollup.list_rollups(location))
    rows = sum(pq.read_metadata(location.source(folder / n)).num_rows for n in rollups)
    copy = pq.read_table(location.source(folder / _rollup.MERGED_DIR / merged[0]))
    assert len(rollups) == 2 and copy.num_rows == rows > 0
    made: list[object] = []
    monkeypatch.setattr(_rollup, "_write_merged", lambda *a: made.append(a))
    with History(store) as h:
        assert h.idle_cost(by="day").equals(first)
        assert h.connection.sql("SELECT count(*) FROM _rollup").fetchall() == [(rows,)]
    assert made == []  # the copy was read, not made again


def test_an_s3_file_is_created_only_if_absent(s3_store: str) -> None:
    location = open_store(s3_store)
    path = location.root / "pods" / "x.parquet"
    location.create(path, lambda sink: sink.write(b"first"))
    with pytest.raises(FileExistsError):
        location.create(path, lambda sink: sink.write(b"second"))
    assert location.read_bytes(path) == b"first"


# --------------------------------------------------------------------------- compaction


def test_a_reader_at_every_step_of_a_compaction_sees_each_row_once(
    store: str, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(store, clock)
    expected = history_rows(store)
    seen: list[tuple[str, int, int]] = []
    watch_steps(
        monkeypatch,
        store,
        lambda step, _: seen.append((step, history_rows(store), len(objects(store)))),
    )
    compact(store, DAY)
    steps = [step for step, _, _ in seen]
    assert "marker" in steps and "publish" in steps and "delete" in steps, steps
    assert all(rows == expected for _, rows, _ in seen), seen
    # The dangerous moment was exercised: the merged file and the small ones at once.
    assert any(files == 5 for _, _, files in seen), seen


@pytest.mark.parametrize("at", ["marker", "publish", "delete"])
def test_a_crash_at_each_step_of_a_compaction_loses_nothing_and_counts_nothing_twice(
    store: str, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch, at: str
) -> None:
    fill(store, clock)
    expected = history_rows(store)

    def crash(step: str, path: PurePath) -> None:
        if step == at and (at != "delete" or path.suffix == ".parquet"):
            raise Crash

    with monkeypatch.context() as patch:
        watch_steps(patch, store, crash)
        with pytest.raises(Crash):
            compact(store, DAY)
    assert history_rows(store) == expected
    assert not verify(store).ok  # an unfinished compaction: its marker says so
    compact(store, DAY)
    assert history_rows(store) == expected and len(objects(store)) == 1
    assert verify(store).ok


def test_collectors_a_compaction_and_readers_at_once_lose_nothing(
    store: str, clock: SimulatedClock
) -> None:
    fill(store, clock, snapshots=3)
    base = history_rows(store)
    added: list[int] = []
    counts: list[int] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def collector(start: datetime) -> None:
        own = SimulatedClock(start)
        try:
            for _ in range(3):
                added.append(collect_at(own, store, CLUSTERS[:1]).pod_rows)
                own.advance(timedelta(minutes=5))
        except BaseException as err:
            errors.append(err)

    reading = threading.Event()

    def reader() -> None:
        try:
            with History(store) as h:
                while True:  # once at least, and once more after the last write
                    counts.append(len(h.pods()))
                    reading.set()
                    if done.is_set():
                        break
        except BaseException as err:
            errors.append(err)
        finally:
            reading.set()

    threads = [
        threading.Thread(target=collector, args=(datetime(2026, 11, 20, 12, m, tzinfo=UTC),))
        for m in (1, 2)
    ]
    polling = threading.Thread(target=reader)
    polling.start()
    # The writers start once the reader reads: on a busy machine they finished before
    # its History had opened, and it never read (CI, python3.13, 2026-11-29).
    reading.wait(timeout=60)
    for thread in threads:
        thread.start()
    compact(store, DAY)
    for thread in threads:
        thread.join()
    compact(store, DAY)
    done.set()
    polling.join()
    assert errors == [], "".join(traceback.format_exception(errors[0]))
    assert history_rows(store) == base + sum(added)
    assert len(added) == 6 and counts and min(counts) >= base
    assert len(objects(store)) == 1


def test_two_compactions_at_once_take_turns(store: str, clock: SimulatedClock) -> None:
    fill(store, clock)
    expected = history_rows(store)
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda: results.append(compact(store, DAY))) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.files_before["pods"] for r in results) == [1, 4]
    assert history_rows(store) == expected and len(objects(store)) == 1


_KILLED = textwrap.dedent(
    """
    import sys
    from datetime import UTC, datetime, timedelta
    from history_helpers import pod_row, pods_table
    from ccanalytics.history import compact
    from ccanalytics.history.store._write import append_frame
    store, what = sys.argv[1], sys.argv[2]
    print("ready", flush=True)
    if what == "compact":
        compact(store, "2026-11-20")
    else:
        n = 0
        while True:  # one row a file, until killed
            when = datetime(2026, 11, 21, tzinfo=UTC) + timedelta(seconds=n)
            rows = pods_table([pod_row("cl-x", str(when), "p1")])
            append_frame(store, "pods", rows.drop(columns="schema_version"))
            n += 1
            print(n, flush=True)
    """
)


def _killed(store: str, what: str, after: float) -> None:
    """Run ``what`` in a child process and SIGKILL it ``after`` seconds into the work."""
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED, store, what],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert child.stdout is not None
    child.stdout.readline()  # imports done: the work starts now
    if what == "append":
        child.stdout.readline()  # the first file is in: kill it amid the next ones
    time.sleep(after)
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()


# The fast subset kills at one moment; every run of the README's suite at all three.
@pytest.mark.parametrize(
    "after",
    [pytest.param(0.05, marks=pytest.mark.slow), 0.2, pytest.param(0.5, marks=pytest.mark.slow)],
)
def test_a_process_killed_at_any_moment_loses_nothing(
    store: str, clock: SimulatedClock, after: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ccanalytics.history.store import _s3

    # A killed compaction's S3 lock object is taken over once stale (10 minutes; 1 s here).
    monkeypatch.setattr(_s3, "LOCK_STALE_SECONDS", 1.0)
    fill(store, clock, snapshots=6)
    expected = history_rows(store)
    _killed(store, "compact", after)  # killed somewhere in the compaction (or after it)
    assert history_rows(store) == expected
    _killed(store, "append", after)  # killed while appending, one file a row
    appended = [name for name in objects(store) if "date=2026-11-21" in name]
    with History(store) as h:  # every file it lists is whole: vetted and read
        assert len(h.pods(since="2026-11-21")) == len(appended) > 0
        assert len(h.pods(until="2026-11-21")) == expected
    compact(store, DAY)
    assert history_rows(store) == expected + len(appended)


# --------------------------------------------------------------------------- S3 only


def test_the_vetting_cache_keys_an_object_by_etag_and_size(
    s3_store: str, clock: SimulatedClock
) -> None:
    import json

    fill(s3_store, clock, snapshots=2)
    history_rows(s3_store)
    location = open_store(s3_store)
    cached = json.loads(location.read_bytes(location.root / ".vetted.json"))["files"]
    assert len(cached) == 6
    size, _, etag, *_ = next(iter(cached.values()))
    assert isinstance(size, int) and isinstance(etag, str) and etag.startswith('"')
    # The same key, other bytes: not the file that was vetted, so it is vetted again.
    victim = next(name for name in cached if name.startswith("pods/"))
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"x": [1]}), sink)
    location.replace(location.root / victim, lambda out: out.write(sink.getvalue().to_pybytes()))
    with pytest.raises(StoreError, match="not a snapshot file") as caught:
        History(s3_store)
    assert str(caught.value.path).startswith("s3://") and victim in str(caught.value.path)


def test_s3_times_read_as_botocore_reads_them_and_keys_stay_the_same(
    s3_store: str, clock: SimulatedClock
) -> None:
    """A listing's times are read without dateutil (``_s3_replies.s3_timestamp``), to the same
    instant botocore's own parser gives: a key vetted before reads the same after, so
    no cached verdict is lost. A HEAD's HTTP date goes to botocore's parser."""
    from botocore.utils import parse_timestamp

    from ccanalytics.history.store import _s3_replies

    for text in ("2026-11-20T10:05:00.000Z", "2026-11-20T10:05:00.123456Z",
                 "2026-11-20T10:05:00+01:00", "Fri, 20 Nov 2026 10:05:00 GMT",
                 "2026-11-20T10:05:00", "1795687500"):  # fmt: skip
        ours, theirs = _s3_replies.s3_timestamp(text), parse_timestamp(text)
        assert ours == theirs and ours.utcoffset() == theirs.utcoffset(), text
    fill(s3_store, clock, snapshots=1)
    location = open_store(s3_store)
    listed, _ = location._request_listing(location.root, delimiter=False)
    # fromisoformat's UTC, not dateutil's tzutc(): the client reads times with _timestamp.
    assert listed and all(obj["LastModified"].tzinfo is UTC for obj in listed)
    path = PurePosixPath(location.bucket, listed[0]["Key"])
    head = location.client.head_object(Bucket=location.bucket, Key=listed[0]["Key"])
    by_dateutil = parse_timestamp(head["ResponseMetadata"]["HTTPHeaders"]["last-modified"])
    assert head["LastModified"] == by_dateutil == listed[0]["LastModified"].replace(microsecond=0)
    assert location._keys[path] == _s3_replies.s3_key(
        listed[0]["Size"], parse_timestamp(listed[0]["LastModified"].isoformat()), listed[0]["ETag"]
    )


def test_each_s3_store_reads_the_credentials_of_its_time(
    s3_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stores opened one after another (a scheduled job's, a notebook's) share what
    botocore parses once, S3's service model, but never credentials: a key rotated in
    the environment between two opens is the one the second store uses."""
    first = open_store(s3_store)
    assert first.exists()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "rotated-key-id")
    second = open_store(s3_store)
    keys = [store.client._request_signer._credentials.access_key for store in (first, second)]
    assert keys == ["testing-key-id", "rotated-key-id"]
    assert second.exists()  # moto takes any key: the new client still reaches the bucket
    models = [store.client._loader for store in (first, second)]
    assert models[0] is models[1]


@pytest.mark.slow
def test_a_refresh_lists_an_s3_store_at_most_twice_whatever_its_tables_and_days(
    s3_store: str, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Data files first, markers second (the compaction argument), each pass one
    listing of the store's prefix: not one per table, per day, or for the rollups."""
    from ccanalytics.history.store._fs import S3Location

    fill(s3_store, clock, snapshots=2)
    clock.advance(timedelta(days=1))
    fill(s3_store, clock, snapshots=2)
    compact(s3_store, DAY)  # a compacted day has a rollup: its folder is listed too
    listed: list[str] = []
    for name in ("_request_listing", "_pyarrow_names"):  # botocore's listing, pyarrow's
        real = getattr(S3Location, name)

        def counted(self: Any, folder: PurePath, *args: Any, _real: Any = real, **kw: Any) -> Any:
            listed.append(str(folder))
            return _real(self, folder, *args, **kw)

        monkeypatch.setattr(S3Location, name, counted)
    with History(s3_store) as h:
        listed.clear()
        h.refresh()
        assert listed == [s3_store.removeprefix("s3://")] * 2
        rows = len(h.pods())
        assert rows > 0
        # Every day compacted: one file a day, which no marker could hide, so no
        # markers' pass at all.
        compact(s3_store, "2026-11-21")
        listed.clear()
        h.refresh()
        assert listed == [s3_store.removeprefix("s3://")]
        assert len(h.pods()) == rows


def test_duckdb_reads_s3_without_touching_any_file(
    s3_store: str, clock: SimulatedClock, tmp_path: Path
) -> None:
    fill(s3_store, clock, snapshots=1)
    outside = tmp_path / "outside.parquet"
    pq.write_table(pa.table({"x": [1]}), outside)
    with History(s3_store) as h:
        assert len(h.pods()) > 0
        with pytest.raises(Exception, match=r"[Pp]ermission|disabled"):
            h.connection.sql(f"SELECT * FROM read_parquet('{outside}')").fetchall()
        allowed = h.connection.sql("SELECT current_setting('allowed_directories')").fetchall()
        assert [str(d) for d in allowed[0][0]] == [f"{h._catalog.spill}/"]  # no store folder at all


def test_no_python_runs_on_arrows_threads_while_duckdb_scans_an_s3_store(
    s3_store: str, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB starts a pyarrow scan holding the GIL (``Scanner.to_reader``) and waits on
    a lock of arrow's while it does; an arrow I/O thread holding that lock and calling
    Python (a filesystem written in Python) waits for the GIL: the process hangs for
    ever, with ``History`` on an S3 store about once in a few hundred queries (seen in
    CI). So every byte a query needs that Python fetches is fetched before the scan, on
    the querying thread; what arrow reads itself it reads in C++."""
    from ccanalytics.history.store._fs import S3Location

    fill(s3_store, clock, snapshots=3)
    calls: list[str] = []
    on_foreign_threads: list[str] = []
    for name in ("read_bytes", "key", "source", "filesystem"):
        real = getattr(S3Location, name)

        def watched(self: Any, *args: Any, _real: Any = real, _name: str = name) -> Any:
            calls.append(_name)
            # A thread Python did not start (arrow's, DuckDB's) shows as a dummy.
            if isinstance(threading.current_thread(), threading._DummyThread):
                on_foreign_threads.append(_name)
            return _real(self, *args)

        monkeypatch.setattr(S3Location, name, watched)
    with History(s3_store) as h:
        for _ in range(3):  # a first query, and queries over the views it made
            assert len(h.pods()) > 0 and len(h.gpus()) > 0
            assert h.connection.sql("SELECT count(*) FROM snapshots").fetchall()[0][0] > 0
    assert "read_bytes" in calls and on_foreign_threads == []


def test_a_dataset_of_s3_objects_reads_the_store_only_and_small_objects_in_one_get(
    s3_store: str, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each small object is fetched by one GET, once while it is unchanged (an object
    is never overwritten: its ETag names its bytes); only the store's objects are in
    the datasets DuckDB reads."""
    from ccanalytics.history.store._fs import S3Location

    fill(s3_store, clock, snapshots=2)
    gets: list[PurePath] = []
    real = S3Location.read_bytes

    def counted(self: Any, path: PurePath) -> bytes:
        gets.append(path)
        return real(self, path)

    monkeypatch.setattr(S3Location, "read_bytes", counted)
    with History(s3_store) as h:
        rows = h.connection.sql("SELECT count(*) FROM pods").fetchall()[0][0]
        again = h.connection.sql("SELECT count(*) FROM pods").fetchall()[0][0]
        fill(s3_store, clock, snapshots=1)  # new objects: fetched, the others are not
        more = len(h.pods())
    files = [
        PurePath(p) for table in ("pods", "gpus", "snapshots") for p in objects(s3_store, table)
    ]
    assert rows == again > 0 and more > rows
    parquet = [p.name for p in gets if p.suffix == ".parquet"]  # not .vetted.json
    assert sorted(parquet) == sorted(p.name for p in files)  # its footer vetted, then read
    prefix = s3_store.removeprefix("s3://")
    assert all(str(p).startswith(prefix + "/") for p in gets)


@pytest.mark.slow
def test_small_objects_held_past_their_bound_are_read_by_pyarrow_instead(
    s3_store: str, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory of held objects is bounded: past it the least recently used are let
    go and the rest read through pyarrow's S3 filesystem, with the same answers."""
    from ccanalytics.history.store import _s3_held

    fill(s3_store, clock, snapshots=3)
    with History(s3_store) as h:
        unbounded = h.pods()
    location = open_store(s3_store)
    location.walk(location.root, "*/date=*/*")  # the listing that gives every object's size
    sizes = sorted(key[0] for key in location._keys.values())
    bound = sizes[len(sizes) // 2] * 3  # room for about three of the nine
    monkeypatch.setattr(_s3_held, "HELD_BYTES", bound)
    location.delete(location.root / ".vetted.json")  # vetted (read whole) again below
    with History(s3_store) as h:
        for _ in range(2):
            pd.testing.assert_frame_equal(h.pods(), unbounded)
            held = h._catalog.location._held.buffers
            assert 0 < len(held) < len(sizes)
            assert sum(buffer.size for _, buffer in held.values()) <= bound


@pytest.mark.slow
def test_a_quiet_day_of_many_small_s3_files_is_read_from_one_cached_copy(
    s3_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ccanalytics.history.store import _daycache

    clock = SimulatedClock(datetime(2026, 11, 20, tzinfo=UTC))
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        for _ in range(_daycache.CACHE_FROM_FILES):
            collect(CLUSTERS[:1], s3_store, client=client, trust_service_clock=True)
            clock.advance(timedelta(minutes=5))
    monkeypatch.setattr(_daycache, "QUIET_SECONDS", 0.0)
    monkeypatch.setattr(_daycache, "CACHE_FROM_FILES", 32)
    with History(s3_store) as h:
        first = h.idle_cost(by=None)
        rows = len(h.pods())
    location = open_store(s3_store)
    copies = location.walk(location.root / _daycache.CACHE_DIR, "**/*.parquet")
    assert len(copies) == 3  # one per table
    made: list[object] = []
    monkeypatch.setattr(_daycache.DayCache, "_make", lambda *a: made.append(a))
    with History(s3_store) as h:
        assert len(h.pods()) == rows
        assert h.idle_cost(by=None).equals(first)
        assert h.connection.sql("SELECT count(*) FROM _data_pods").fetchall() == [(rows,)]
    assert made == []  # the copies were read, not made again


def test_an_explicit_endpoint_needs_no_environment(
    s3_endpoint: str, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = new_bucket(s3_endpoint)
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    uri = f"s3://{bucket}/store?endpoint_url={s3_endpoint}"
    fill(uri, clock, snapshots=2)
    assert history_rows(uri) > 0 and verify(uri).ok


def test_no_credential_reaches_a_repr_an_error_or_an_object(
    s3_store: str, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from s3server import FAKE_AWS

    secrets = (FAKE_AWS["AWS_ACCESS_KEY_ID"], FAKE_AWS["AWS_SECRET_ACCESS_KEY"])
    fill(s3_store, clock, snapshots=1)
    with History(s3_store) as h:
        shown = [repr(h), repr(open_store(s3_store)), str(h.store), str(h.verify())]
    bucket = s3_store.removeprefix("s3://").split("/")[0]
    with pytest.raises(StoreError, match="NoSuchBucket") as missing:
        History(f"s3://{bucket}-none/store").close()
    shown.append(str(missing.value))
    location = open_store(s3_store)
    blobs = [location.read_bytes(p) for p in location.walk(location.root, "**/*")]
    for secret in secrets:
        assert not any(secret in text for text in shown), shown
        assert not any(secret.encode() in blob for blob in blobs)
    with pytest.raises(StoreError, match="no credentials"):
        open_store("s3://user:pass@bucket/store")


def test_without_the_s3_extra_an_s3_store_is_a_typed_error(
    s3_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)
    monkeypatch.setitem(sys.modules, "botocore.session", None)  # what the store imports
    with pytest.raises(StoreError, match=r"ccanalytics\[s3\]"):
        History(s3_store)


# --------------------------------------------------------------------------- one day


@pytest.mark.slow
def test_the_same_simulated_hours_answer_to_the_cent_on_s3_and_on_a_folder(
    s3_store: str, tmp_path: Path
) -> None:
    folder = str(tmp_path / "store")
    clock = SimulatedClock(datetime(2026, 11, 2, 6, tzinfo=UTC))
    clusters = ["cl-infer-prod", "cl-llama70b-train"]
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        for _ in range(24):  # 06:00 .. 07:55 every 5 minutes: the night's idle pods included
            for target in (folder, s3_store):
                collect(clusters, target, client=client, trust_service_clock=True)
            clock.advance(timedelta(minutes=5))
    compact(s3_store, "2026-11-02")  # compacted on one side only: the same answers
    _assert_same_answers(folder, s3_store)


def _assert_same_answers(folder: str, s3: str) -> None:
    answers = []
    for target in (folder, s3):
        with History(target) as h:
            answers.append(
                {
                    "idle": h.idle_cost(by="pod"),
                    "day": h.idle_cost(by="day"),
                    "util": h.utilization(freq="30min"),
                    "stragglers": h.stragglers(min_share=0.0),
                    "coverage": h.coverage(),
                    "pods": h.pods(),
                }
            )
    local, remote = answers
    assert float(local["day"]["idle_cost"].sum()) > 0  # the night's idle pods: money at stake
    for name in local:
        pd.testing.assert_frame_equal(local[name], remote[name], check_exact=False, atol=0.005)


@pytest.mark.slow
def test_the_same_simulated_day_answers_to_the_cent_on_s3_and_on_a_folder(
    s3_store: str, simulated_day: SimulatedDay, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole day (288 snapshots of five clusters, 864 small files) put on S3 key for
    key. The folder's day is read from its day cache (its files carry the day's times);
    the bucket's objects are new, so S3 is read object by object (not in blocks, as a day
    still being written is: tests/history/store/test_daycache.py): the two readings of a full
    day agree to the cent. The writer's path to S3 is the hours' test above and the
    guarantees' tests; this one is the reader's over a full day of files."""
    from ccanalytics.history.store import _daycache

    monkeypatch.setattr(_daycache, "BLOCK_FILES", 10**9)
    upload_folder(simulated_day.store, s3_store)
    _assert_same_answers(str(simulated_day.store), s3_store)


def test_a_survey_of_many_pages_lists_the_records_first(
    s3_store: str, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing of many pages comes in key order, the records (``snapshots/``) last: a
    compaction between its pages would leave a reader with the old data files and only
    the merged record, which no longer names them. So the records get a request first."""
    from ccanalytics.history.store import _s3

    for _ in range(3):
        collect_at(clock, s3_store, ["cl-infer-prod"])
        clock.advance(timedelta(minutes=5))
    with History(s3_store) as h:
        want = h.idle_cost(by="cluster")
    monkeypatch.setattr(_s3, "LIST_PAGE_SIZE", 2)  # 9 objects: five pages
    prefixes: list[str] = []
    with History(s3_store) as h:
        client = h._catalog.location.client
        client.meta.events.register(
            "provide-client-params.s3.ListObjectsV2",
            lambda params, **_: prefixes.append(params.get("Prefix", "")),
        )
        prefixes.clear()
        h.refresh()
        got = h.idle_cost(by="cluster")
    pd.testing.assert_frame_equal(got, want)
    records = next(i for i, p in enumerate(prefixes) if p.endswith("snapshots/"))
    root = min(prefixes, key=len)  # the whole store's prefix
    whole = [i for i, p in enumerate(prefixes) if p == root]
    assert records < whole[-1], prefixes

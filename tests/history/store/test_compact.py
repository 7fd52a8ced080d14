"""compact(): a day's files become one, and no reader ever sees a row twice or misses one."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from ccanalytics import History, collect
from ccanalytics.errors import StoreError
from ccanalytics.history import compact, verify
from ccanalytics.history.store._write import DICTIONARY_FROM_ROWS
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

CLUSTERS = ["cl-infer-prod", "cl-llama70b-train", "cl-bringup"]


START = datetime(2026, 11, 20, 10, tzinfo=UTC)
SNAPSHOTS, STEP = 4, timedelta(minutes=5)


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(START)


def collect_at(clock: SimulatedClock, store: Path, clusters: list[str]) -> Any:
    """One collect on the simulated clock: distinct instants, unlike four collects
    within one wall-clock second (which compact() merges into one instant each)."""
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        return collect(clusters, store, client=client, trust_service_clock=True)


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with four snapshots of three clusters, five minutes apart, all on one day.

    Collected once per module (four collects, each through a sandbox on loopback HTTP)
    and never changed: each test compacts, crashes or adds to a copy of it (``store``).
    """
    folder, clock = tmp_path_factory.mktemp("collected"), SimulatedClock(START)
    for _ in range(SNAPSHOTS):
        collect_at(clock, folder, CLUSTERS)
        clock.advance(STEP)
    return folder


@pytest.fixture
def store(collected: Path, tmp_path: Path, clock: SimulatedClock) -> Path:
    """A copy of the collected store (its files' times kept), and the test's ``clock``
    where the collects left theirs: a collect the test makes comes five minutes later."""
    clock.advance(SNAPSHOTS * STEP)
    return Path(shutil.copytree(collected, tmp_path, dirs_exist_ok=True))


def the_day(store: Path) -> str:
    (folder,) = (store / "pods").iterdir()
    return folder.name.removeprefix("date=")


def data_files(store: Path, table: str = "pods") -> list[Path]:
    return sorted((store / table).rglob("*.parquet"))


def all_rows(store: Path, table: str = "pods") -> list[tuple[Any, ...]]:
    """Every row of every data file as a sorted list of tuples (a multiset)."""
    rows: list[tuple[Any, ...]] = []
    for path in data_files(store, table):
        t = pq.read_table(path)
        rows.extend(zip(*(t.column(n).to_pylist() for n in sorted(t.column_names)), strict=True))
    return sorted(rows, key=repr)


def history_rows(store: Path) -> int:
    with History(store) as h:
        return len(h.pods())


def raw_glob_rows(store: Path) -> int:
    """A reader that does not honour compaction markers: DuckDB's own glob."""
    glob = f"{store}/pods/**/*.parquet"
    rows = duckdb.sql(f"SELECT count(*) FROM read_parquet('{glob}', union_by_name = true)")
    return int(rows.fetchall()[0][0])


def watch_steps(
    monkeypatch: pytest.MonkeyPatch, store: Path, check: Callable[[str, Path], None]
) -> None:
    """Call ``check(step, path)`` after each rename and delete compaction does in the store."""
    busy = threading.local()  # a check's own file operations are not compaction steps
    for name in ("replace", "unlink"):
        real = getattr(os, name)

        def wrapped(*args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            result = _real(*args, **kw)
            path = Path(args[-1] if _name == "replace" else args[0])
            if not getattr(busy, "on", False) and store in path.parents:
                busy.on = True
                try:
                    check(_name, path)
                finally:
                    busy.on = False
            return result

        monkeypatch.setattr(os, name, wrapped)


def test_compact_keeps_every_row_exactly_once(store: Path) -> None:
    before = {t: all_rows(store, t) for t in ("pods", "gpus")}
    assert len(data_files(store)) == 4

    result = compact(store, the_day(store))

    assert dict(result.files_before) == {"pods": 4, "gpus": 4, "snapshots": 4}
    assert dict(result.files_after) == {"pods": 1, "gpus": 1, "snapshots": 1}
    for table in ("pods", "gpus"):
        assert len(data_files(store, table)) == 1
        assert all_rows(store, table) == before[table]
        assert result.rows[table] == len(before[table])
    assert history_rows(store) == raw_glob_rows(store) == len(before["pods"])
    assert verify(store).ok
    # No temporary file or marker left: only the lock and the readers' cache of vetted
    # files (history.store._vetted), both at the top, outside the tables.
    hidden = sorted(p for p in store.rglob("*") if p.name.startswith(".") and p.is_file())
    assert hidden == [store / ".compact.lock", store / ".vetted.json"]


def test_compact_reads_each_file_once(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Vetting a file and reading its rows share one open of it (its footer read once):
    most of compacting a day of small files was opening each twice."""
    opened: list[Path] = []
    real_file, real_read = pq.ParquetFile, pq.read_table

    class Counted(real_file):  # type: ignore[misc,valid-type]
        def __init__(self, source: Any, *args: Any, **kw: Any) -> None:
            opened.append(Path(source))
            super().__init__(source, *args, **kw)

    def counted_read(source: Any, *args: Any, **kw: Any) -> Any:
        opened.append(Path(source))
        return real_read(source, *args, **kw)

    monkeypatch.setattr(pq, "ParquetFile", Counted)
    monkeypatch.setattr(pq, "read_table", counted_read)
    files = [path for table in ("pods", "gpus", "snapshots") for path in data_files(store, table)]
    assert len(files) == 12

    compact(store, the_day(store))

    assert sorted(p for p in opened if p in files) == sorted(files)


def test_compacting_twice_changes_nothing_more(store: Path) -> None:
    compact(store, the_day(store))
    (merged,) = data_files(store)
    content, mtime = merged.read_bytes(), merged.stat().st_mtime_ns
    again = compact(store, the_day(store))
    assert (
        dict(again.files_before)
        == dict(again.files_after)
        == {"pods": 1, "gpus": 1, "snapshots": 1}
    )
    assert data_files(store) == [merged]
    assert merged.read_bytes() == content and merged.stat().st_mtime_ns == mtime


def test_a_reader_at_every_step_of_a_compaction_sees_each_row_once(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = history_rows(store)
    seen: list[tuple[str, int, int]] = []

    def check(step: str, path: Path) -> None:
        seen.append((step, history_rows(store), raw_glob_rows(store)))

    watch_steps(monkeypatch, store, check)
    compact(store, the_day(store))

    assert seen, "the compaction made no step in the store"
    assert all(ours == expected for _, ours, _ in seen), seen
    # The test does exercise the dangerous moment: a reader that ignores the marker
    # sees the merged file and the small ones together, i.e. rows twice.
    assert any(raw > expected for _, _, raw in seen), seen


@pytest.mark.slow
def test_a_reader_polling_during_a_slow_compaction_never_sees_a_wrong_count(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = history_rows(store)
    watch_steps(monkeypatch, store, lambda step, path: time.sleep(0.05))
    counts: list[int] = []
    done, reading = threading.Event(), threading.Event()

    def poll() -> None:
        try:
            with History(store) as h:
                while not done.is_set():
                    counts.append(len(h.pods()))
                    reading.set()
        finally:
            reading.set()

    reader = threading.Thread(target=poll)
    reader.start()
    # Compacting once the reader reads: on a busy machine opening its History can
    # take most of the compaction's half second (as in test_backends' readers).
    reading.wait(timeout=60)
    try:
        compact(store, the_day(store))
    finally:
        done.set()
        reader.join()
    assert len(counts) > 3
    assert set(counts) == {expected}


def test_a_crash_after_the_merged_file_appears_is_finished_by_the_next_compact(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = history_rows(store)
    day = the_day(store)

    class Crash(BaseException):
        pass

    def crash_on_first_delete(step: str, path: Path) -> None:
        if step == "unlink" and path.suffix == ".parquet":
            raise Crash

    with monkeypatch.context() as patch:
        watch_steps(patch, store, crash_on_first_delete)
        with pytest.raises(Crash):
            compact(store, day)

    # Merged file, three small files and the marker are all there: History honours
    # the marker, a plain glob would count rows twice, verify() says what to do.
    assert len(data_files(store)) == 4
    assert history_rows(store) == expected < raw_glob_rows(store)
    report = verify(store)
    assert len(report.markers) == 1 and "run compact" in str(report)

    compact(store, day)
    assert len(data_files(store)) == 1
    assert history_rows(store) == raw_glob_rows(store) == expected
    assert verify(store).ok


def test_a_crash_before_the_merged_file_appears_loses_nothing(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = history_rows(store)

    class Crash(BaseException):
        pass

    real_replace = os.replace

    def crash_at_the_merge(src: Any, dst: Any) -> None:
        if Path(dst).suffix == ".parquet":
            raise Crash
        real_replace(src, dst)

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", crash_at_the_merge)
        with pytest.raises(Crash):
            compact(store, the_day(store))
    assert len(data_files(store)) == 4
    assert history_rows(store) == raw_glob_rows(store) == expected
    compact(store, the_day(store))
    assert history_rows(store) == expected and len(data_files(store)) == 1


def test_files_collected_during_a_compaction_are_kept(
    store: Path, clock: SimulatedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = history_rows(store)
    with History(store) as h:
        expected_gpus = len(h.gpus())
    late: list[Any] = []

    started = threading.Event()  # the collect's own renames (on its threads) call back here

    def collect_once(step: str, path: Path) -> None:
        if not started.is_set() and step == "replace" and path.suffix == ".parquet":
            started.set()
            late.append(collect_at(clock, store, CLUSTERS[:1]))

    watch_steps(monkeypatch, store, collect_once)
    compact(store, the_day(store))
    (result,) = late
    # Its record came after the compaction began, so its files are none of the ones
    # merged (its gpus file, listed before the gpus were merged, too): kept as they
    # are. Every row is there once.
    late_pods = next(f for f in result.files if f.parent.parent.name == "pods")
    late_gpus = next(f for f in result.files if f.parent.parent.name == "gpus")
    assert late_pods in data_files(store, "pods") and len(data_files(store, "pods")) == 2
    assert late_gpus in data_files(store, "gpus") and len(data_files(store, "gpus")) == 2
    assert history_rows(store) == expected + result.pod_rows
    with History(store) as h:
        assert len(h.gpus()) == expected_gpus + result.gpu_rows


def test_compact_keeps_a_newer_schemas_column(store: Path) -> None:
    first = data_files(store)[0]
    table = pq.read_table(first)
    later = pc.add(table.column("observed_at"), pa.scalar(timedelta(minutes=1)))
    table = table.set_column(table.schema.get_field_index("observed_at"), "observed_at", later)
    extra = table.append_column("power_watts", pa.array([300.0] * table.num_rows))
    pq.write_table(extra, first.with_name("29990101T000000000000Z-newer.parquet"))
    compact(store, the_day(store))
    (merged,) = data_files(store)
    column = pq.read_table(merged).column("power_watts").to_pylist()
    assert column.count(300.0) == table.num_rows and column.count(None) == 4 * table.num_rows


def test_compact_removes_only_old_leftover_temporary_files(store: Path) -> None:
    folder = data_files(store)[0].parent
    old, young = folder / ".crashed.parquet.tmp", folder / ".writing.parquet.tmp"
    old.write_bytes(b"partial")
    young.write_bytes(b"partial")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    result = compact(store, the_day(store))
    assert result.removed_temporary == (old,)
    assert not old.exists() and young.exists()  # a collector may still be writing it


@pytest.mark.parametrize("day", ["yesterday", "2026-13-01", "", 20261120])
def test_a_bad_day_is_a_value_error(tmp_path: Path, day: Any) -> None:
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        compact(tmp_path, day)


def test_a_day_without_files_is_nothing_to_do(store: Path) -> None:
    result = compact(store, "2026-11-01")
    assert dict(result.files_before) == {"pods": 0, "gpus": 0, "snapshots": 0}
    assert not (store / "pods" / "date=2026-11-01").exists()


@pytest.mark.parametrize("where", ["typo", "folder"])
def test_a_path_that_holds_no_store_is_a_store_error_and_nothing_is_created(
    tmp_path: Path, where: str
) -> None:
    """A mistyped path, or a folder of something else (``/etc``): compacting it would
    report nothing to do and leave its lock file behind."""
    path = tmp_path / where
    if where == "folder":
        path.mkdir()
        (path / "notes.txt").write_text("not a store")
    with pytest.raises(StoreError, match="holds no snapshot") as caught:
        compact(path, "2026-11-20")
    assert str(path) in str(caught.value)
    assert not path.exists() if where == "typo" else sorted(os.listdir(path)) == ["notes.txt"]


@pytest.mark.parametrize("where", ["typo", "folder"])
def test_verify_of_a_path_that_holds_no_store_is_a_store_error(tmp_path: Path, where: str) -> None:
    path = tmp_path / where
    if where == "folder":
        path.mkdir()
    with pytest.raises(StoreError, match="holds no snapshot"):
        verify(path)
    assert path.exists() == (where == "folder")


def _dictionary_encoded(path: Path) -> bool:
    meta = pq.ParquetFile(path).metadata
    chunks = (
        meta.row_group(g).column(c)
        for g in range(meta.num_row_groups)
        for c in range(meta.num_columns)
    )
    return any(chunk.has_dictionary_page for chunk in chunks)


def test_small_files_are_written_plain_and_big_ones_with_dictionaries(store: Path) -> None:
    """A snapshot's file is stored without dictionary pages (smaller and faster to write
    at these sizes); a compacted day of 500 rows or more has them; no value changes."""
    appended = data_files(store, "pods") + data_files(store, "gpus")
    assert all(pq.ParquetFile(p).metadata.num_rows < DICTIONARY_FROM_ROWS for p in appended)
    assert not any(_dictionary_encoded(p) for p in appended)
    before = {table: all_rows(store, table) for table in ("pods", "gpus")}
    compact(store, the_day(store))
    (gpus,) = data_files(store, "gpus")
    assert pq.ParquetFile(gpus).metadata.num_rows >= DICTIONARY_FROM_ROWS
    assert _dictionary_encoded(gpus)
    assert {table: all_rows(store, table) for table in ("pods", "gpus")} == before


def test_a_lone_snapshot_file_stays_counted_when_the_records_are_merged(
    tmp_path: Path, clock: SimulatedClock
) -> None:
    """One snapshot's pods and gpus files alone on their day, two records: merging the
    records must not take away the id that makes the lone files count (nor let a later
    compaction delete them as a failed snapshot's)."""
    collect_at(clock, tmp_path, ["cl-infer-prod"])
    (record,) = data_files(tmp_path, "snapshots")
    # A second snapshot of that day that listed no pods: a record and nothing else.
    other = record.with_name(record.name[: -len("s" + "0" * 32 + ".parquet")] + "s" + "e" * 32)
    shutil.copy2(record, other.with_suffix(".parquet"))
    with History(tmp_path) as h:
        before = len(h.pods())
    assert before > 0
    compact(tmp_path, the_day(tmp_path))
    with History(tmp_path) as h:
        assert len(h.pods()) == before
    for path in data_files(tmp_path, "pods") + data_files(tmp_path, "gpus"):
        old = time.time() - 2 * 3600
        os.utime(path, (old, old))
    again = compact(tmp_path, the_day(tmp_path))
    assert again.removed_temporary == ()
    with History(tmp_path) as h:
        assert len(h.pods()) == before

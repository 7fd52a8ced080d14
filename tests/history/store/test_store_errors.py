"""Every failure to read or write a store is a StoreError naming the path: a store path
that is a file, a read-only or full disk, a day folder symlinked out of the store, a
query that keeps finding its files gone (and the CLI says it in one line, exit 1:
tests/cli/test_check_store_failures.py)."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from history_helpers import pod_row, pods_table, write_store

from ccanalytics import History, StoreError
from ccanalytics.history import compact, verify
from ccanalytics.history.queries import _catalog
from ccanalytics.history.store._write import append_frame

DAY = "2026-11-20"


def _rows() -> list[dict[str, Any]]:
    return [pod_row("cl-a", f"{DAY}T0{h}:00:00Z", "p1") for h in (0, 1, 2)]


def _frame(rows: list[dict[str, Any]]) -> Any:
    """Rows as the frame collect appends (the writer adds schema_version itself)."""
    return pods_table(rows).drop(columns="schema_version")


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    path.write_text("not a folder")
    return path


def test_history_on_a_path_that_is_a_file_is_a_store_error(a_file: Path) -> None:
    with pytest.raises(StoreError, match="not a folder") as caught:
        History(a_file)
    assert caught.value.path == a_file


def test_verify_on_a_path_that_is_a_file_is_a_store_error(a_file: Path) -> None:
    with pytest.raises(StoreError, match="not a folder") as caught:
        verify(a_file)
    assert caught.value.path == a_file


def test_compact_on_a_path_that_is_a_file_is_a_store_error(a_file: Path) -> None:
    with pytest.raises(StoreError, match="not a folder") as caught:
        compact(a_file, DAY)
    assert caught.value.path == a_file


def test_appending_to_a_path_that_is_a_file_is_a_store_error(a_file: Path) -> None:
    with pytest.raises(StoreError) as caught:
        append_frame(a_file, "pods", _frame(_rows()))
    assert caught.value.path is not None and str(a_file) in str(caught.value)
    assert a_file.read_text() == "not a folder"


def test_a_read_only_store_is_a_store_error_for_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def read_only(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(StoreError, match="Read-only file system") as caught:
        append_frame(tmp_path, "pods", _frame(_rows()))
    assert caught.value.path is not None and tmp_path in Path(caught.value.path).parents


def test_a_read_only_store_is_a_store_error_for_compact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_store(tmp_path, _rows())
    write_store(tmp_path, [pod_row("cl-a", f"{DAY}T03:00:00Z", "p1")])  # two files a day
    real_open = os.open

    def read_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_CREAT | os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(StoreError, match="Read-only file system") as caught:
        compact(tmp_path, DAY)
    assert caught.value.path is not None


def test_a_full_disk_during_compaction_is_a_store_error_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_store(tmp_path, _rows())
    write_store(tmp_path, [pod_row("cl-a", f"{DAY}T03:00:00Z", "p1")])
    before = sorted(tmp_path.rglob("*.parquet"))
    from ccanalytics.history.store import _local

    def disk_full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_local, "write_new", disk_full)  # the merged file's staging write
    with pytest.raises(StoreError, match="No space left") as caught:
        compact(tmp_path, DAY)
    assert caught.value.path is not None
    assert sorted(tmp_path.rglob("*.parquet")) == before


@pytest.fixture
def symlinked_day(tmp_path: Path) -> tuple[Path, Path]:
    """A store whose one pods day folder is a symlink to a folder outside the store."""
    store = tmp_path / "store"
    write_store(store, _rows())
    day = store / "pods" / f"date={DAY}"
    elsewhere = tmp_path / "elsewhere"
    day.rename(elsewhere)
    day.symlink_to(elsewhere, target_is_directory=True)
    return store, day


def test_a_day_folder_symlinked_out_of_the_store_is_a_store_error(
    symlinked_day: tuple[Path, Path],
) -> None:
    store, day = symlinked_day
    with pytest.raises(StoreError, match="outside the store") as caught, History(store) as h:
        h.pods()
    assert caught.value.path == day
    assert "\n" not in str(caught.value)


def test_verify_names_a_day_folder_symlinked_out_of_the_store(
    symlinked_day: tuple[Path, Path],
) -> None:
    store, day = symlinked_day
    report = verify(store)
    assert not report.ok
    assert any(day in path.parents or path == day for path in report.unreadable)
    assert "outside the store" in str(report)


def test_a_query_whose_files_keep_vanishing_is_a_store_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_store(tmp_path, _rows())
    ghost = tmp_path / "pods" / f"date={DAY}" / "ghost.parquet"  # listed, never there
    real = _catalog.list_tables

    def listing_with_a_ghost(store: Path, tables: list[str], **options: Any) -> Any:
        found = real(store, tables, **options)
        pods = found["pods"]
        return {**found, "pods": type(pods)((*pods.files, ghost), pods.temporary, pods.markers)}

    monkeypatch.setattr(_catalog, "RETRY_PAUSE_SECONDS", 0.0)
    with History(tmp_path) as h:
        monkeypatch.setattr(_catalog, "list_tables", listing_with_a_ghost)
        with pytest.raises(StoreError, match="kept changing") as caught:
            h.idle_cost(by=None)
    assert caught.value.path == tmp_path.resolve()


def test_a_day_compacted_over_and_over_never_gives_a_raw_duckdb_error(tmp_path: Path) -> None:
    # A collector appends to one day and a compaction merges it again and again while a
    # reader queries: each answer is right, or the failure is a StoreError.
    import threading

    write_store(tmp_path, _rows())
    stop = threading.Event()

    failures: list[BaseException] = []

    def churn() -> None:
        minute = 0
        try:
            while not stop.is_set():
                minute += 1
                when = f"{DAY}T03:{minute % 60:02d}:{minute // 60:02d}Z"
                append_frame(tmp_path, "pods", _frame([pod_row("cl-a", when, "p1")]))
                compact(tmp_path, DAY)
        except BaseException as err:  # reported by the assertion below
            failures.append(err)

    worker = threading.Thread(target=churn, daemon=True)
    worker.start()
    outcomes: list[str] = []
    try:
        with History(tmp_path) as h:
            for _ in range(10):
                try:
                    hours = h.idle_cost(
                        since=f"{DAY}T00:00", until=f"{DAY}T02:00", by=None, max_gap="2h"
                    )
                except StoreError:
                    outcomes.append("store error")
                else:
                    assert hours["observed_hours"].iloc[0] == pytest.approx(2.0)
                    outcomes.append("answer")
    finally:
        stop.set()
        worker.join(30)
    assert failures == [] and "answer" in outcomes, outcomes


@pytest.mark.parametrize(
    "content",
    [b"not json", b'{"merged": 1, "replaces": []}', b'{"replaces": ["a.parquet"]}'],
    ids=["not-json", "not-a-name", "no-merged"],
)
def test_an_unreadable_compaction_marker_is_a_store_error_naming_it(
    tmp_path: Path, content: bytes
) -> None:
    """A marker History cannot read (not JSON, a name that is not a string, a key
    missing) could hide or double a day's files: refused, never guessed around."""
    for hour in (1, 2):  # two files in the day: its markers are read
        append_frame(
            tmp_path,
            "pods",
            pods_table([pod_row("cl-a", f"2026-11-20T0{hour}:00:00Z", "p1")]).drop(
                columns="schema_version"
            ),
        )
    marker = tmp_path / "pods" / "date=2026-11-20" / ".compaction-broken.json"
    marker.write_bytes(content)
    with pytest.raises(StoreError, match="unreadable compaction marker") as caught:
        History(tmp_path)
    assert caught.value.path == marker

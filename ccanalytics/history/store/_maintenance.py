"""Keeping a store healthy: :func:`compact` a day's files into one, :func:`verify` it.

Why compaction is safe for a concurrent reader
----------------------------------------------
A day of 5-minute snapshots is 288 small files per table; reading is faster from one.
No file system can swap many files for one atomically, so a plain reader that lists
the folder during the swap could see both the small files and the merged one (rows
twice) or neither (rows missing). A marker that readers honour closes that gap:

1. read the day's files F, write their rows to a hidden temporary file and check
   its row count;
2. write the marker ``.compaction-<uuid>.json`` = {merged: M, replaces: F} (atomically);
3. rename the temporary file to M (now M and F are both visible);
4. delete each file of F;
5. delete the marker.

A reader (:func:`~ccanalytics.history.store._layout.list_store`) lists the data files
*first* and the markers *second*, and leaves out F when the marker's M was listed.
If its listing holds M and some f of F, then either the marker still existed when the
markers were listed (it is removed only after every f is gone), so F is left out; or
it did not, so f was already deleted and opening it fails, and the query runs again
on a fresh listing. A listing without M reads F, whose rows are exactly M's. So a
reader never sees a row twice or misses one, during a compaction or after a crash in
one (the marker stays until the next compaction finishes the job).

Engines that do not honour the marker (DuckDB's glob, Spark, ...) see the same rows
exactly once whenever no compaction is running; do not run them during one, or read
through :class:`~ccanalytics.history.History`. Compactions of one store take turns
(a lock file, ``STORE/.compact.lock``); collectors never wait: their new files are not
in F and stay.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from os import PathLike
from pathlib import Path
from types import MappingProxyType

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from ccanalytics._files import fsync_dir, write_atomic
from ccanalytics.errors import StoreError
from ccanalytics.history.store._layout import (
    DATA_SUFFIX,
    MARKER_PREFIX,
    TEMP_SUFFIX,
    data_file_name,
    list_store,
    partition_dir,
    read_marker,
    store_folder,
    temp_path,
)
from ccanalytics.history.store._merge import merge_files
from ccanalytics.history.store._schema import TABLES, file_problem
from ccanalytics.history.store._write import write_synced

__all__ = ["CompactResult", "StoreReport", "compact", "verify"]

#: A temporary file older than this is a crash's leftover, not a collector's write in progress.
ORPHAN_AGE_SECONDS = 3600.0
_LOCK_NAME = ".compact.lock"


@dataclass(frozen=True)
class CompactResult:
    """What :func:`compact` did to one day: files per table before and after, rows kept."""

    day: str
    files_before: Mapping[str, int]
    files_after: Mapping[str, int]
    rows: Mapping[str, int]
    removed_temporary: tuple[Path, ...] = ()


@dataclass(frozen=True)
class StoreReport:
    """What :func:`verify` found. ``ok`` when nothing needs attention."""

    files: int
    temporary: tuple[Path, ...] = ()
    markers: tuple[Path, ...] = ()
    unreadable: Mapping[Path, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def ok(self) -> bool:
        return not (self.temporary or self.markers or self.unreadable)

    def __str__(self) -> str:
        lines = [f"{self.files} data files"]
        lines += [f"unreadable: {path}: {why}" for path, why in self.unreadable.items()]
        lines += [f"left by a crash or being written: {path}" for path in self.temporary]
        lines += [f"unfinished compaction (run compact): {path}" for path in self.markers]
        return "\n".join(lines)


def _day(value: str | date | datetime) -> str:
    """``YYYY-MM-DD`` from a date, a datetime (its UTC date; naive means UTC) or such a string."""
    if isinstance(value, datetime):
        return (value if value.tzinfo is None else value.astimezone(UTC)).strftime("%Y-%m-%d")
    if isinstance(value, date):
        return value.isoformat()
    try:
        return date.fromisoformat(value).isoformat()
    except (TypeError, ValueError):
        raise ValueError(f"day must be a date or 'YYYY-MM-DD', got {value!r}") from None


class _StoreLock:
    """An exclusive advisory lock on ``STORE/.compact.lock`` (POSIX ``flock``)."""

    def __init__(self, store: Path) -> None:
        self._fd = os.open(store / _LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)

    def __enter__(self) -> _StoreLock:
        import fcntl

        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # closing releases the lock


def _finish_leftovers(folder: Path) -> None:
    """Complete (or drop) compactions a crash interrupted, as step 4-5 would have."""
    for marker in sorted(folder.glob(f"{MARKER_PREFIX}*.json")):
        merged, replaces = read_marker(marker)
        if (folder / merged).exists():
            for name in replaces:
                (folder / name).unlink(missing_ok=True)
            fsync_dir(folder)
        marker.unlink()


def _remove_orphans(folder: Path, now: float) -> list[Path]:
    removed = []
    for temp in folder.glob(f".*{TEMP_SUFFIX}"):
        try:
            if now - temp.stat().st_mtime >= ORPHAN_AGE_SECONDS:
                temp.unlink()
                removed.append(temp)
        except FileNotFoundError:
            continue
    return removed


def _write_marker(folder: Path, merged: str, replaces: list[str]) -> Path:
    marker = folder / f"{MARKER_PREFIX}{uuid.uuid4().hex}.json"
    content = json.dumps({"merged": merged, "replaces": replaces}).encode()
    # Synced, and the rename too: step 3 must never be on disk without the marker.
    return write_atomic(marker, lambda sink: sink.write(content), durable_rename=True)


def _compact_folder(folder: Path, table_name: str) -> tuple[int, int, int]:
    """Merge one partition folder's files: (files before, files after, rows)."""
    files = sorted(
        folder / n for n in os.listdir(folder) if n.endswith(DATA_SUFFIX) and not n.startswith(".")
    )
    if len(files) <= 1:
        rows = pq.read_metadata(files[0]).num_rows if files else 0
        return len(files), len(files), rows
    table = merge_files(files, table_name)  # 1. (each instant once: _merge)
    final = folder / data_file_name(_first_time(table))
    temp = temp_path(final)
    try:
        write_synced(table, temp)
        if pq.read_metadata(temp).num_rows != table.num_rows:
            raise StoreError(f"compaction wrote a short file {temp}; nothing was changed", temp)
        marker = _write_marker(folder, final.name, [f.name for f in files])  # 2.
        os.replace(temp, final)  # 3.
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_dir(folder)
    for path in files:  # 4.
        path.unlink()
    fsync_dir(folder)
    marker.unlink()  # 5.
    return len(files), 1, table.num_rows


def _first_time(table: pa.Table) -> datetime:
    if "observed_at" in table.column_names and table.num_rows:
        first = table.column("observed_at")[0].as_py()
        if isinstance(first, datetime):
            return first
    return datetime.now(UTC)


def compact(store: str | PathLike[str], day: str | date | datetime) -> CompactResult:
    """Merge one UTC day's files into one file per table, keeping every row exactly once.

    An instant two files hold (two collects within one second) is kept from the first
    file only, the copy every reader counts (:mod:`._merge`).

    ``day``: a date, a datetime (its UTC date) or ``"YYYY-MM-DD"``. Safe while
    collectors write (their new files are kept) and while :class:`History` reads (see
    the module docstring for the argument); other engines should not read during it.
    Also finishes a compaction a crash interrupted, and removes temporary files left
    by crashed writers (older than an hour). Every failure (a store path that is not a
    folder, a read-only or full disk) is a :class:`StoreError` naming the path; a
    failed compaction leaves the day's files as they were.
    """
    root, name = Path(store), _day(day)
    store_folder(root)
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    rows: dict[str, int] = {}
    removed: list[Path] = []
    if not root.is_dir():  # a mistyped path: nothing to compact, and nothing created
        empty = MappingProxyType(dict.fromkeys(TABLES, 0))
        return CompactResult(name, empty, empty, empty)
    try:
        with _StoreLock(root):
            for table in TABLES:
                folder = partition_dir(root, table, name)
                if not folder.is_dir():
                    before[table] = after[table] = rows[table] = 0
                    continue
                _finish_leftovers(folder)
                removed += _remove_orphans(folder, time.time())
                before[table], after[table], rows[table] = _compact_folder(folder, table)
    except OSError as err:
        where = Path(err.filename) if err.filename else root
        raise StoreError(f"cannot compact {where}: {err.strerror or err}", where) from None
    return CompactResult(
        name,
        MappingProxyType(before),
        MappingProxyType(after),
        MappingProxyType(rows),
        tuple(removed),
    )


def verify(store: str | PathLike[str]) -> StoreReport:
    """Read every file's Parquet footer; report unreadable files, leftovers and markers.

    A folder or file that is a symbolic link out of the store is reported unreadable
    (:class:`History` refuses it). A store path that is not a folder is a
    :class:`StoreError`; a missing one is an empty store.
    """
    root = store_folder(Path(store))
    count = 0
    temporary: list[Path] = []
    markers: list[Path] = []
    unreadable: dict[Path, str] = {}
    for table in TABLES:
        listing = list_store(root, table)
        count += len(listing.files)
        temporary += listing.temporary
        markers += listing.markers
        for path in listing.outside:
            unreadable[path] = (
                f"lies outside the store (a symbolic link to {os.path.realpath(path)})"
            )
        for path in listing.files:
            try:
                problem = file_problem(path, table)
            except FileNotFoundError:
                continue  # a compaction finished meanwhile
            if problem is not None:
                unreadable[path] = problem
    return StoreReport(count, tuple(temporary), tuple(markers), MappingProxyType(unreadable))

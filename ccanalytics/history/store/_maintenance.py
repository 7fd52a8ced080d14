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

Only what readers count is merged: the files of snapshots whose record was committed
when the compaction began (and files of no snapshot). The ids are read once, before
the first table is merged (the snapshots table, whose names carry them, is merged
last), so a snapshot committed meanwhile keeps its own files, and a failed snapshot's
files are left out, then removed once they are an hour old
(:data:`ORPHAN_AGE_SECONDS`; the rule that they count for nothing is :mod:`._layout`'s).
A record whose id a surviving data file's name still carries is not merged.

Engines that do not honour the marker (DuckDB's glob, Spark, ...) see the same rows
exactly once whenever no compaction is running; do not run them during one, or read
through :class:`~ccanalytics.history.History`. Compactions of one store take turns
(a lock file, ``STORE/.compact.lock``); collectors never wait: their new files are not
in F and stay.

On S3 (:mod:`._fs`) the steps are the same through the same code: step 1 keeps the
merged file in memory (no rename exists), the marker and M are each one upload made
only if the key is free, and the lock is an object taken over once stale.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from os import PathLike
from pathlib import Path, PurePath
from types import MappingProxyType

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from ccanalytics.errors import StoreError
from ccanalytics.history.store._fs import TEMP_SUFFIX, Location, open_store
from ccanalytics.history.store._layout import (
    DATA_SUFFIX,
    MARKER_PREFIX,
    committed_snapshots,
    data_file_name,
    holds_store,
    is_committed,
    list_tables,
    no_store_error,
    partition_dir,
    read_marker,
    snapshot_of,
    store_folder,
)
from ccanalytics.history.store._merge import merge_files
from ccanalytics.history.store._rollup import write_rollup
from ccanalytics.history.store._schema import TABLES, file_problem
from ccanalytics.history.store._write import write_parquet

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
    removed_temporary: tuple[PurePath, ...] = ()


@dataclass(frozen=True)
class StoreReport:
    """What :func:`verify` found. ``ok`` when nothing needs attention."""

    files: int
    temporary: tuple[PurePath, ...] = ()
    markers: tuple[PurePath, ...] = ()
    unreadable: Mapping[PurePath, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Files of snapshots without a record: failed, or being written (never read).
    uncommitted: tuple[PurePath, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.temporary or self.markers or self.unreadable or self.uncommitted)

    def __str__(self) -> str:
        lines = [f"{self.files} data files"]
        lines += [f"unreadable: {path}: {why}" for path, why in self.unreadable.items()]
        lines += [f"left by a crash or being written: {path}" for path in self.temporary]
        lines += [
            f"of a snapshot that failed or is being written (never read): {path}"
            for path in self.uncommitted
        ]
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


def _finish_leftovers(store: Location, folder: PurePath) -> None:
    """Complete (or drop) compactions a crash interrupted, as step 4-5 would have."""
    names = [name for name, _ in store.entries(folder)]
    for name in names:
        if not (name.startswith(MARKER_PREFIX) and name.endswith(".json")):
            continue
        marker = folder / name
        merged, replaces = read_marker(store, marker)
        if merged in names:
            for replaced in replaces:
                store.delete(folder / replaced)
            store.sync_folder(folder)
        store.delete(marker)


def _remove_orphans(store: Location, folder: PurePath, now: float) -> list[PurePath]:
    """Delete the temporary files crashed writers left, once no writer can still be at work."""
    return _remove_old(
        store, folder, now, lambda name: name.startswith(".") and name.endswith(TEMP_SUFFIX)
    )


def _remove_old(
    store: Location, folder: PurePath, now: float, chosen: Callable[[str], bool]
) -> list[PurePath]:
    """Delete the ``chosen`` files of ``folder`` older than :data:`ORPHAN_AGE_SECONDS`."""
    removed = []
    for name, _ in store.entries(folder):
        if not chosen(name):
            continue
        path = folder / name
        try:
            if now - store.key(path)[1] / 1e9 >= ORPHAN_AGE_SECONDS:
                store.delete(path)
                removed.append(path)
        except FileNotFoundError:
            continue
    return removed


def _write_marker(store: Location, folder: PurePath, merged: str, replaces: list[str]) -> PurePath:
    marker = folder / f"{MARKER_PREFIX}{uuid.uuid4().hex}.json"
    content = json.dumps({"merged": merged, "replaces": replaces}).encode()
    # Synced, and the rename too: step 3 must never be on disk without the marker.
    store.create_durably(marker, lambda sink: sink.write(content))
    return marker


#: The tables whose files a snapshot's record commits (the records themselves are merged last).
_DATA_TABLES = ("pods", "gpus")


def _remove_uncommitted(
    store: Location, folder: PurePath, committed: frozenset[str], now: float
) -> list[PurePath]:
    """Delete the files of snapshots never committed, once a collect still writing
    them is out of the question (:data:`ORPHAN_AGE_SECONDS`)."""
    return _remove_old(
        store,
        folder,
        now,
        lambda name: name.endswith(DATA_SUFFIX) and not is_committed(name, committed),
    )


def _mergeable(
    store: Location, folder: PurePath, committed: frozenset[str], named: frozenset[str]
) -> list[PurePath]:
    """The data files of a partition that a compaction merges: those of no snapshot and
    those of the snapshots committed when it began (records included), but not a record
    whose id a data file still carries (``named``)."""
    return [
        folder / n
        for n, _ in store.entries(folder)
        if n.endswith(DATA_SUFFIX)
        and not n.startswith(".")
        and (
            snapshot_of(n) is None or (snapshot_of(n) in committed and snapshot_of(n) not in named)
        )
    ]


def _ids_on_data_files(store: Location) -> frozenset[str]:
    """The snapshot ids that pods and gpus files anywhere in the store still carry in their
    names: a file left alone on its day (nothing to merge it with) keeps its id, and it
    counts only while a record named with that id exists, so that record is not merged."""
    listings = list_tables(store, list(_DATA_TABLES), every_marker=False)
    names = [path.name for listing in listings.values() for path in listing.files]
    return committed_snapshots(names)


def _compact_folder(
    store: Location,
    folder: PurePath,
    table_name: str,
    committed: frozenset[str],
    named: frozenset[str] = frozenset(),
) -> tuple[int, int, int]:
    """Merge one partition folder's files: (files before, files after, rows)."""
    files = _mergeable(store, folder, committed, named)
    if len(files) <= 1:
        rows = pq.read_metadata(store.source(files[0])).num_rows if files else 0
        return len(files), len(files), rows
    table = merge_files(store, files, table_name)  # 1. (each instant once: _merge)
    final = folder / data_file_name(_first_time(table))
    staged = store.stage(final, lambda sink: write_parquet(table, sink))
    try:
        if staged.metadata().num_rows != table.num_rows:
            where = store.at(final)
            raise StoreError(f"compaction wrote a short file {where}; nothing was changed", where)
        marker = _write_marker(store, folder, final.name, [f.name for f in files])  # 2.
        store.publish(staged)  # 3.
    except BaseException:
        store.discard(staged)
        raise
    for path in files:  # 4.
        store.delete(path)
    store.sync_folder(folder)
    store.delete(marker)  # 5.
    return len(files), 1, table.num_rows


def _first_time(table: pa.Table) -> datetime:
    if "observed_at" in table.column_names and table.num_rows:
        first = table.column("observed_at")[0].as_py()
        if isinstance(first, datetime):
            return first
    return datetime.now(UTC)


def _roll_up(store: Location, day: str, committed: frozenset[str]) -> None:
    """Write the day's rollup (:mod:`._rollup`) when it is one pods file and at most one
    snapshots file, as compaction leaves it (a collector's newer file: no rollup yet)."""
    files = {}
    for table in ("pods", "snapshots"):
        folder = partition_dir(store.root, table, day)
        names = [n for n, _ in store.entries(folder) if n.endswith(DATA_SUFFIX)]
        files[table] = [folder / n for n in names if not n.startswith(".")]
    uncommitted = [f for f in files["pods"] if not is_committed(f.name, committed)]
    if len(files["pods"]) == 1 and len(files["snapshots"]) <= 1 and not uncommitted:
        write_rollup(store, day, files["pods"][0], next(iter(files["snapshots"]), None))


def _committed_now(store: Location) -> frozenset[str]:
    """The ids of the snapshots whose record the store holds now."""
    records = list_tables(store, ["snapshots"])["snapshots"].files
    return committed_snapshots([path.name for path in records])


def compact(store: str | PathLike[str] | Location, day: str | date | datetime) -> CompactResult:
    """Merge one UTC day's files into one file per table, keeping every row exactly once.

    An instant two files hold (two collects within one second) is kept from the first
    file only, the copy every reader counts (:mod:`._merge`).

    ``day``: a date, a datetime (its UTC date) or ``"YYYY-MM-DD"``. Safe while
    collectors write (their new files are kept) and while :class:`History` reads (see
    the module docstring for the argument); other engines should not read during it.
    Then writes the day's rollup (:mod:`._rollup`: its measures per cluster and
    instant, which long windows of :meth:`History.idle_cost` read in place of its pod
    rows). Also finishes a compaction a crash interrupted, and removes temporary files left
    by crashed writers (older than an hour). Every failure (a store path that is not a
    folder or holds no store, a read-only or full disk) is a :class:`StoreError` naming
    the path; a failed compaction leaves the day's files as they were.
    """
    root, name = open_store(store), _day(day)
    store_folder(root)
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    rows: dict[str, int] = {}
    removed: list[PurePath] = []
    # Before the lock, which would leave its file in a folder that is not a store.
    if not root.exists() or not holds_store(list_tables(root, list(TABLES), every_marker=False)):
        raise no_store_error(root, TABLES)
    try:
        with root.lock(_LOCK_NAME):
            committed = _committed_now(root)
            for table in TABLES:  # the records (snapshots) last
                folder = partition_dir(root.root, table, name)
                if not root.entries(folder):
                    before[table] = after[table] = rows[table] = 0
                    continue
                _finish_leftovers(root, folder)
                removed += _remove_orphans(root, folder, time.time())
                removed += _remove_uncommitted(root, folder, committed, time.time())
                # The records keep each id a surviving data file's name still needs.
                named = _ids_on_data_files(root) if table not in _DATA_TABLES else frozenset()
                before[table], after[table], rows[table] = _compact_folder(
                    root, folder, table, committed, named
                )
            _roll_up(root, name, committed)
    except OSError as err:
        where: PurePath | str = root.at(root.root)
        if err.filename:
            where = Path(err.filename) if root.local else str(err.filename)
        raise StoreError(f"cannot compact {where}: {err.strerror or err}", where) from None
    return CompactResult(
        name,
        MappingProxyType(before),
        MappingProxyType(after),
        MappingProxyType(rows),
        tuple(removed),
    )


def verify(store: str | PathLike[str] | Location) -> StoreReport:
    """Read every file's Parquet footer; report unreadable files, leftovers and markers.

    A folder or file that is a symbolic link out of the store is reported unreadable
    (:class:`History` refuses it). A store path that is not a folder, and one that holds
    no store (missing, or no file in its tables' folders: a typo), is a
    :class:`StoreError` naming it.
    """
    root = store_folder(open_store(store))
    count = 0
    temporary: list[PurePath] = []
    markers: list[PurePath] = []
    unreadable: dict[PurePath, str] = {}
    uncommitted: list[PurePath] = []
    listings = list_tables(root, list(TABLES))
    if not holds_store(listings):
        raise no_store_error(root, TABLES)
    for table in TABLES:
        listing = listings[table]
        count += len(listing.files)
        temporary += listing.temporary
        markers += listing.markers
        uncommitted += listing.uncommitted
        for path in listing.outside:
            unreadable[path] = (
                f"lies outside the store (a symbolic link to {os.path.realpath(path)})"
            )
        for path in listing.files:
            try:
                problem = file_problem(root.source(path), table)
            except FileNotFoundError:
                continue  # a compaction finished meanwhile
            if problem is not None:
                unreadable[path] = problem
    return StoreReport(
        count,
        tuple(temporary),
        tuple(markers),
        MappingProxyType(unreadable),
        tuple(uncommitted),
    )

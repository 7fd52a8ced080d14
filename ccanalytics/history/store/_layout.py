"""Where things are in a store, and which files a reader should read.

::

    STORE/pods/date=YYYY-MM-DD/<observed_at>-<uuid4 hex>.parquet
    STORE/gpus/date=YYYY-MM-DD/<observed_at>-<uuid4 hex>.parquet
    STORE/snapshots/date=YYYY-MM-DD/<observed_at>-<uuid4 hex>.parquet

``date`` is the UTC date of the rows' ``observed_at`` (Hive partitioning: the value
lives in the folder name, not inside the files). The files one ``collect`` writes share
its snapshot's id: ``<observed_at>-s<snapshot id>.parquet`` in each table.

A snapshot counts once its record is committed: its ``snapshots`` file is written last,
so a pods or gpus file named with a snapshot id that no ``snapshots`` file carries is a
snapshot that failed, or one still being written, and no reader reads it
(:attr:`Listing.uncommitted`). The snapshots table is listed before the others (on S3
too, where one listing of many pages would bring it last: :func:`survey`), so a reader
that finds the record finds every file it commits. A compaction never merges away a
record whose id a data file's name still carries (a file alone on its day keeps its
name). Files named without an id (written by hand, by :func:`~._write.append_frame`
alone, merged by a compaction) are read as they are. Names that start with a dot are
never data: ``.<name>.tmp`` is a file being written (or left by a crash), and
``.compaction-<uuid>.json`` is a compaction in progress (see :mod:`._compact`).
DuckDB, Polars, pyarrow and Spark skip them (they do not end in ``.parquet``, and
pyarrow and Spark skip dot files anyway).

:func:`list_store` is how every reader of this package lists files: data files
first, markers second, and files a finished merge superseded left out. That order is
what keeps a reader from ever seeing a day's rows twice during a compaction; the
argument is written out in :mod:`._compact`.

Everything a reader reads lies inside the store's folder: a table or day folder, or a
data file, that is a symbolic link to somewhere else is listed apart
(:attr:`Listing.outside`), because :class:`~ccanalytics.history.History` may read the
store's folder and nothing else (its DuckDB is locked to it) and :func:`verify` must
say so rather than call the store fine. A file system error while listing (a folder
that cannot be read, a store path that is a file) is a
:class:`~ccanalytics.errors.StoreError` naming the folder.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath

from ccanalytics.errors import StoreError
from ccanalytics.history.store._fs import TEMP_SUFFIX, Location, temp_path

__all__ = [
    "DATA_SUFFIX",
    "MARKER_PREFIX",
    "TEMP_SUFFIX",
    "Listing",
    "committed_snapshots",
    "data_file_name",
    "holds_store",
    "list_store",
    "list_tables",
    "new_snapshot_id",
    "no_store_error",
    "partition_dir",
    "read_marker",
    "snapshot_of",
    "store_folder",
    "survey",
    "temp_path",
]

DATA_SUFFIX = ".parquet"
MARKER_PREFIX = ".compaction-"
_PARTITION_PREFIX = "date="


def partition_dir(store: PurePath, table: str, day: str) -> PurePath:
    """``STORE/<table>/date=<day>``, ``day`` as ``YYYY-MM-DD``."""
    return store / table / f"{_PARTITION_PREFIX}{day}"


def partition_day(path: PurePath) -> str | None:
    """The ``YYYY-MM-DD`` of a data file's ``date=`` folder (``partition_dir``'s day);
    ``None`` for a path outside a partition."""
    name = path.parent.name
    return name.removeprefix(_PARTITION_PREFIX) if name.startswith(_PARTITION_PREFIX) else None


def new_snapshot_id() -> str:
    """An id no other snapshot has (a uuid4), shared by the files of one snapshot."""
    return uuid.uuid4().hex


def data_file_name(first_observed: datetime, snapshot: str | None = None) -> str:
    """A name no other writer can pick: the first row's time (for people) and a uuid4,
    or, for a file of a snapshot, its id (:func:`snapshot_of` reads it back)."""
    unique = uuid.uuid4().hex if snapshot is None else f"{_SNAPSHOT_MARK}{snapshot}"
    return f"{first_observed:%Y%m%dT%H%M%S%fZ}-{unique}{DATA_SUFFIX}"


def snapshot_of(name: str) -> str | None:
    """The snapshot id in a data file's name; None for a file of no snapshot."""
    # By slicing, not a split: a refresh asks this of every data file listed.
    end = len(name) - len(DATA_SUFFIX)
    start = end - _ID_LENGTH
    if start < 2 or name[start - 2 : start] != _ID_BEFORE or not name.endswith(DATA_SUFFIX):
        return None
    snapshot = name[start:end]
    return snapshot if _HEX.issuperset(snapshot) else None


#: The tables whose files count only once their snapshot's record is committed.
_COMMITTED_BY_RECORD = ("pods", "gpus")
#: The table whose files are the records.
_RECORDS = "snapshots"
#: Before a snapshot id in a name (a uuid4's hex never holds an "s").
_SNAPSHOT_MARK = "s"
_ID_BEFORE = f"-{_SNAPSHOT_MARK}"
_ID_LENGTH = 32
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Listing:
    """One table's files as a reader should see them, and what else lies around."""

    #: Data files to read: every complete file, minus those a finished merge replaced.
    files: tuple[PurePath, ...]
    #: Hidden ``*.tmp`` files: being written now, or left by a crash (never read).
    temporary: tuple[PurePath, ...]
    #: Compaction markers present (a compaction running, or one that crashed).
    markers: tuple[PurePath, ...]
    #: Folders and data files that are symbolic links out of the store (never read).
    outside: tuple[PurePath, ...] = ()
    #: Files of a snapshot whose record was never committed: failed, or being written
    #: now (never read; see the module docstring).
    uncommitted: tuple[PurePath, ...] = ()


def store_folder(store: Location) -> Location:
    """``store``, or :class:`StoreError` when it exists and is not a folder.

    A missing store is not an error here: it is an empty store to a reader, and a
    writer creates it.
    """
    store.check()
    return store


def read_marker(store: Location, path: PurePath) -> tuple[str, frozenset[str]]:
    """A compaction marker's merged file name and the names it replaces."""
    try:
        content = json.loads(store.read_bytes(path))
        merged, replaces = content["merged"], content["replaces"]
        if not isinstance(merged, str) or not all(isinstance(n, str) for n in replaces):
            raise TypeError("names must be strings")
    except FileNotFoundError:
        raise
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise StoreError(f"unreadable compaction marker {path}: {err}", path) from None
    return merged, frozenset(replaces)


def list_store(store: Location, table: str) -> Listing:
    """The files of ``store/table`` a reader should read (see the module docstring)."""
    return list_tables(store, [table])[table]


def survey(store: Location) -> AbstractContextManager[None]:
    """The store listed once for a reader's pass (:meth:`Location.surveyed`), the records
    before the files they commit (see the module docstring)."""
    return store.surveyed(first=store.root / _RECORDS)


def holds_store(listings: Mapping[str, Listing]) -> bool:
    """Whether a listing of the store's tables found any file a writer left: data, one
    being written or left by a crash, a compaction's marker, a failed snapshot's file.

    A path with none holds no store (a typo, another folder), and every reader and
    maintainer refuses it with :func:`no_store_error`: only ``collect`` creates a store.
    """
    return any(
        listing.files or listing.temporary or listing.markers or listing.uncommitted
        for listing in listings.values()
    )


def no_store_error(store: Location, tables: Sequence[str]) -> StoreError:
    """The error of a path that holds no store (:func:`holds_store`), naming it: a typo
    would otherwise answer every question with nothing."""
    where = store.show(store.root)
    folders = [f"{table}/" for table in tables]
    why = (
        f"no file in its {', '.join(folders[:-1])} or {folders[-1]}"
        if store.exists()
        else "it does not exist"
    )
    return StoreError(
        f"the store {where} holds no snapshot: {why} (is the path right? collect creates a store)",
        store.at(store.root),
    )


def list_tables(
    store: Location, tables: list[str], *, every_marker: bool = True
) -> dict[str, Listing]:
    """:func:`list_store` of each of ``tables``: every table's data files first, then
    every table's markers (on S3 in :meth:`~Location.surveyed`: one listing each).

    ``every_marker=False`` (a reader's listing) looks for markers only in partitions
    that listed two data files or more: a marker hides files only when its merged file
    and some it replaces were listed together, so a partition of one file (a compacted
    day) reads the same either way, and a store of compacted days needs no second
    listing. :attr:`Listing.markers` then names only the markers of those partitions.
    """
    listed: dict[str, tuple[list[PurePath], dict[PurePath, list[tuple[str, bool]]]]] = {}
    # The records first (see the module docstring), and always with a table they commit.
    needed = list(dict.fromkeys(tables))
    if _RECORDS not in needed and any(t in _COMMITTED_BY_RECORD for t in needed):
        needed.append(_RECORDS)
    needed.sort(key=lambda table: table != _RECORDS)
    outside: dict[str, list[PurePath]] = {table: [] for table in needed}
    for table in needed:
        table_dir = store.root / table
        if store.outside(table_dir):
            outside[table].append(table_dir)
            continue
        found, listed_entries = store.table_listing(table_dir)
        outside[table] += [part for part, out in found if out]
        listed[table] = ([part for part, out in found if not out], listed_entries)
    # 1. Data files, every partition.
    data: dict[str, dict[PurePath, list[str]]] = {}
    temporary: dict[str, list[PurePath]] = {}
    for table, (_, listed_entries) in listed.items():
        data[table], temporary[table] = _data_files(listed_entries, outside[table])
    uncommitted = _uncommitted(data)
    # 2. Then the markers: a merge whose file was listed hides the files it replaced.
    partitions = [
        part
        for table, (table_partitions, _) in listed.items()
        for part in table_partitions
        if every_marker or len(data[table].get(part, ())) > 1
    ]
    all_markers = store.entries_of(partitions) if partitions else {}
    listings = {}
    for table in dict.fromkeys(tables):
        if table not in listed:
            listings[table] = Listing((), (), (), tuple(outside[table]))
            continue
        markers: list[PurePath] = []
        hidden: set[PurePath] = set()
        for part in listed[table][0]:
            for name, _ in all_markers.get(part, ()):
                if not (name.startswith(MARKER_PREFIX) and name.endswith(".json")):
                    continue
                try:
                    merged, replaces = read_marker(store, part / name)
                except FileNotFoundError:
                    continue  # the compaction finished between the listing and now
                markers.append(part / name)
                if merged in data[table][part]:
                    hidden.update(part / n for n in replaces)
        # One path per file, and no hashing of 26,000 of them when no merge hides any
        # (the usual case: a month of 5-minute snapshots is that many files).
        listed_files = (part / n for part, names in data[table].items() for n in names)
        files = tuple(p for p in listed_files if p not in hidden) if hidden else tuple(listed_files)
        listings[table] = Listing(
            files,
            tuple(temporary[table]),
            tuple(markers),
            tuple(outside[table]),
            tuple(uncommitted.get(table, ())),
        )
    return listings


def committed_snapshots(names: list[str]) -> frozenset[str]:
    """The snapshot ids whose record is committed, from the ``snapshots`` table's data
    file names."""
    return frozenset(filter(None, map(snapshot_of, names)))


def is_committed(name: str, committed: frozenset[str]) -> bool:
    """Whether the data file ``name`` of a pods or gpus table may be read: a file of no
    snapshot, or of one whose record is in ``committed``."""
    # The usual file first, by one slice (a refresh asks this of every file listed).
    if name[-_ID_LENGTH - len(DATA_SUFFIX) : -len(DATA_SUFFIX)] in committed:
        return True
    return snapshot_of(name) is None


def _uncommitted(data: dict[str, dict[PurePath, list[str]]]) -> dict[str, list[PurePath]]:
    """Take the files of uncommitted snapshots out of ``data``'s pods and gpus tables
    (in place); those files, per table."""
    records = data.get(_RECORDS)
    if records is None:
        return {}
    committed = committed_snapshots([n for names in records.values() for n in names])
    found: dict[str, list[PurePath]] = {}
    for table in _COMMITTED_BY_RECORD:
        for part, names in data.get(table, {}).items():
            kept = [name for name in names if is_committed(name, committed)]
            if len(kept) < len(names):
                found.setdefault(table, []).extend(part / n for n in names if n not in kept)
                names[:] = kept
    return found


def _data_files(
    listed_entries: dict[PurePath, list[tuple[str, bool]]], outside: list[PurePath]
) -> tuple[dict[PurePath, list[str]], list[PurePath]]:
    """Per partition, the data files' names; and the hidden temporary files (links out
    of the store are added to ``outside``)."""
    data: dict[PurePath, list[str]] = {}
    temporary: list[PurePath] = []
    for part, entries in listed_entries.items():
        data[part] = []
        for name, out in entries:
            if name.startswith("."):
                if name.endswith(TEMP_SUFFIX):
                    temporary.append(part / name)
            elif name.endswith(DATA_SUFFIX):
                if out:
                    outside.append(part / name)
                else:
                    data[part].append(name)
    return data, temporary

"""The readers' day cache: a quiet day of many small files is read from one file, a day
still being written from one file per block of its files.

A collector that does not compact (``compact_closed_days=False``, ``--no-compact``)
leaves 288 small files per table per day of 5-minute snapshots. DuckDB pays a fixed
cost per file it opens (its footer, whatever the settings), so a month of them takes
seconds per query where the compacted month takes a fraction of one. A reader that finds such a day keeps a merged copy of it here::

    STORE/.day-cache/v1/<table>/date=YYYY-MM-DD/<digest>.parquet

and the views read that one file in place of the day's files. The copy is
exactly those files' rows, read by the History's DuckDB (several times faster than
pyarrow a file) and merged by :func:`~ccanalytics.history.store._merge.first_copies`, the rule
:func:`compact` merges by, so every answer is the same as from the files
themselves. ``digest`` names the exact files it was made from (each one's name, size,
times and inode, or an object's ETag: :meth:`~ccanalytics.history.store._fs.Location.key`), so a file added,
removed, replaced or rewritten makes a new digest, and the old copy is simply not
used again. Nothing in the store's tables is ever changed: this is a cache, built by
the first reader that needs it and removable at any time (``rm -r STORE/.day-cache``).

Which days: at least :data:`CACHE_FROM_FILES` files (fewer read as fast as one) whose
newest was written :data:`QUIET_SECONDS` ago or more get one copy of the whole day. A
day a collector is still writing to (with its own compaction, the default, that is
today: 288 files by midnight at five-minute snapshots) is read in blocks: each run of
:data:`BLOCK_FILES` consecutive files from the day's first is read from a copy of its
own, made once when the run is complete, and the newest files (fewer than a block)
from themselves. A block's copy holds its files' rows merged by the same rule and sits
where its files were in the listing, so an instant a later file holds again still
counts from the earlier file; a file that lands inside a finished block (a late
collector's) changes that block's digest and those after it, which are copied again
(what a late ``check`` saves so: docs/performance.md). A store
the reader may not write (read-only, another user's, a full disk) simply has no
copies: its files are read as they are. A copy that cannot be read, or names other
files than its digest says, is made again. Copies no view has used for
:data:`KEEP_SECONDS` (their day compacted, or its files changed, or the day's blocks
once its whole copy is made) are removed by the next reader.

Like ``.vetted.json``, the cache lies at the store's top level, outside every table's
folder: no listing, ``verify`` or ``compact`` sees it, and other engines' globs
(``STORE/pods/**/*.parquet``) skip it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from itertools import groupby
from pathlib import PurePath
from typing import TYPE_CHECKING

from ccanalytics.errors import StoreError
from ccanalytics.history.store._fs import FileKey, Location
from ccanalytics.history.store._layout import DATA_SUFFIX, partition_day, partition_dir

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pyarrow as pa  # type: ignore[import-untyped]


__all__ = ["BLOCK_FILES", "CACHE_DIR", "CACHE_FROM_FILES", "QUIET_SECONDS", "DayCache"]

#: The cache's folder in the store's top folder (a version inside: a change of the
#: copies' meaning moves them, and the old ones are swept like any unused copy).
CACHE_DIR = ".day-cache"
_VERSION = "v1"
#: A day with fewer files than this is read from its files.
CACHE_FROM_FILES = 32
#: A day whose newest file is younger than this may still grow: read in blocks.
QUIET_SECONDS = 600.0
#: The files of one block of a day still being written (a copy made once per block).
BLOCK_FILES = 32
#: A copy no reader used for this long is removed (a reader mid-query may still read
#: one that a newer listing no longer uses).
KEEP_SECONDS = 3600.0
#: The copy's key-value metadata that names the files it holds.
_DIGEST_KEY = b"ccanalytics.day_cache.digest"

#: What a view reads: a file and its schema key (``""``: unknown, read on its own).
Source = tuple[PurePath, str]
#: Reads files' rows with :data:`~ccanalytics.history.store._merge.FILE_ORDER` (matching
#: columns by name when the flag says their schemas differ); None when it cannot.
Reader = Callable[[list[PurePath], bool], "pa.Table | None"]


class DayCache:
    """One History's use of its store's day cache."""

    def __init__(self, store: Location, read: Reader) -> None:
        self._store = store
        self._root = store.root / CACHE_DIR / _VERSION
        self._read = read
        #: The copies this History's views have used (never swept by it).
        self._used: set[PurePath] = set()
        #: Copies found readable, with the file's key then: each is checked once.
        self._checked: dict[PurePath, tuple[FileKey, str]] = {}
        #: False once a copy could not be written: the store takes none (read-only,
        #: full), and reading a day's files twice a query to learn that again would
        #: cost more than the copies save.
        self._writable = True
        self._swept = False

    def substitute(
        self, table: str, sources: Sequence[Source], keys: dict[PurePath, FileKey]
    ) -> tuple[Source, ...]:
        """``sources`` with each quiet day of many files replaced by its copy, and each
        complete block of a day still being written by the block's copy.

        ``sources`` are in listing order (by day folder, then name), each vetted;
        ``keys`` holds each one's :data:`FileKey`. A run whose copy cannot be had is
        left as its files.
        """
        runs = [
            run
            for _, group in groupby(sources, key=lambda s: s[0].parent)
            for run in self._runs(list(group), keys)
        ]
        wanted = [(index, run) for index, (run, copied) in enumerate(runs) if copied]
        copies = self._copies(table, wanted, keys)
        out: list[Source] = []
        for index, (run, _) in enumerate(runs):
            copy = copies.get(index)
            if copy is None:
                out.extend(run)
            else:
                self._used.add(copy[0])
                out.append(copy)
        return tuple(out)

    def sweep(self) -> None:
        """Remove copies this History's views do not use, written :data:`KEEP_SECONDS`
        ago or more, and crashed writes' leftovers (once per History)."""
        if self._swept:
            return
        self._swept = True
        cutoff = time.time() - KEEP_SECONDS
        store = self._store
        try:
            found = store.walk(self._root, "*/date=*/*")
        except (OSError, StoreError):
            return  # no cache, or one this reader may not list: nothing to sweep
        for path in found:
            try:
                if path not in self._used and store.key(path)[1] / 1e9 < cutoff:
                    store.delete(path)
                    store.delete_folder(path.parent)  # fails while it holds another copy
            except OSError:
                continue  # gone already, in use, or not ours to remove: harmless

    # -- steps ----------------------------------------------------------------------

    @staticmethod
    def _runs(
        group: list[Source], keys: dict[PurePath, FileKey]
    ) -> list[tuple[list[Source], bool]]:
        """One day's files as runs to read, each with whether to read it from a copy:
        the whole quiet day, else its complete blocks and then its newest files."""
        if partition_day(group[0][0]) is None or any(
            not schema or path not in keys for path, schema in group
        ):
            return [(group, False)]  # not vetted as ours (never happens for a listed file)
        newest_ns = max(keys[path][1] for path, _ in group)
        if time.time() - newest_ns / 1e9 >= QUIET_SECONDS:
            return [(group, len(group) >= CACHE_FROM_FILES)]
        whole = len(group) - len(group) % BLOCK_FILES
        blocks = [(group[at : at + BLOCK_FILES], True) for at in range(0, whole, BLOCK_FILES)]
        return [*blocks, (group[whole:], False)] if whole < len(group) else blocks

    def _copies(
        self,
        table: str,
        wanted: list[tuple[int, list[Source]]],
        keys: dict[PurePath, FileKey],
    ) -> dict[int, Source]:
        """The copy of each wanted run of files (index -> source), made where missing."""
        found: dict[int, Source] = {}
        missing: list[tuple[int, list[Source], str]] = []
        for index, group in wanted:
            digest = _digest(table, group[0][0].parent, group, keys)
            path = self._path(table, group, digest)
            schema = self._checked_copy(path, table, digest)
            if schema is not None:
                found[index] = (path, schema)
            else:
                missing.append((index, group, digest))
        for index, group, digest in missing:  # the reader uses every core itself
            source = self._make(table, group, digest) if self._writable else None
            if source is not None:
                found[index] = source
        return found

    def _checked_copy(self, path: PurePath, table: str, digest: str) -> str | None:
        """:func:`_valid_copy`, once per version of the file in this History."""
        try:
            key = self._store.key(path)
        except OSError:
            return None  # not made yet (or removed)
        known = self._checked.get(path)
        if known is not None and known[0] == key:
            return known[1]
        schema = _valid_copy(self._store, path, table, digest)
        if schema is not None:
            self._checked[path] = (key, schema)
        return schema

    def _path(self, table: str, group: list[Source], digest: str) -> PurePath:
        day = partition_day(group[0][0])
        assert day is not None  # _runs checked it
        return partition_dir(self._root, table, day) / f"{digest}{DATA_SUFFIX}"

    def _make(self, table: str, group: list[Source], digest: str) -> Source | None:
        """Write the run's copy; None when it cannot be (its files are read instead)."""
        from ccanalytics.history.store._merge import first_copies
        from ccanalytics.history.store._write import write_parquet

        path = self._path(table, group, digest)
        try:  # before reading anything: a store that cannot take the copy says so here
            self._store.make_dirs(path.parent)
        except OSError:
            self._writable = False
            return None
        rows = self._read([p for p, _ in group], len({schema for _, schema in group}) > 1)
        if rows is None:
            return None  # a file gone (compacted meanwhile): the query lists again
        merged = first_copies(rows, table)
        metadata = dict(merged.schema.metadata or {})
        metadata[_DIGEST_KEY] = digest.encode()
        copy = merged.replace_schema_metadata(metadata)
        try:
            self._store.create(path, lambda sink: write_parquet(copy, sink))
        except FileExistsError:
            pass  # another reader made the same copy (S3: create-if-absent): check it
        except OSError:
            self._writable = False  # a read-only or full store: no copies, nothing wrong
            return None
        schema = self._checked_copy(path, table, digest)
        return None if schema is None else (path, schema)


def _digest(
    table: str, folder: PurePath, group: list[Source], keys: dict[PurePath, FileKey]
) -> str:
    """What names the exact files of one day (see the module docstring)."""
    h = hashlib.sha256(f"{_VERSION}\0{table}\0{folder.name}".encode())
    for path, _ in group:
        h.update(f"\0{path.name}\0{keys[path]}".encode())
    return h.hexdigest()[:32]


def _valid_copy(store: Location, path: PurePath, table: str, digest: str) -> str | None:
    """The copy's schema key when ``path`` is a readable copy of ``digest``; else None."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from ccanalytics.history.store._schema import vet_file

    try:
        source = store.source(path)
        problem, schema, _ = vet_file(source, table)
        if problem is not None:
            return None
        metadata = pq.read_schema(source).metadata or {}
    except Exception:  # missing, truncated, not Parquet: made again
        return None
    return schema if metadata.get(_DIGEST_KEY) == digest.encode() else None

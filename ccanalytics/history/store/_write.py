"""Appending rows to a store: new files only, each complete before anyone can see it.

Each file is written under a hidden temporary name in its partition folder, flushed to
disk, then renamed to its final name (``os.replace`` is atomic within a folder); on S3
it is one upload to its final key, made only if the key is free (:mod:`._fs`): a
reader sees the whole file or nothing. Names are unique per write (a uuid4), so two
collectors never touch each other's files and nothing existing is ever rewritten.

pyarrow's ``write_dataset`` would write the same layout, but straight to the final
names, where a reader could find a half-written file; hence one ``write_table`` per
partition here.

Every file the store writes (appended, compacted, a rollup, a cache copy) is written
by :func:`write_parquet`: zstd-compressed (:data:`COMPRESSION`), a third smaller than
pyarrow's default snappy on these rows, and every Parquet reader this store promises
(DuckDB, Polars, pyarrow, Spark 3) reads it.
"""

from __future__ import annotations

import threading
from os import PathLike
from pathlib import PurePath
from typing import TYPE_CHECKING, BinaryIO

import pyarrow.parquet as pq  # type: ignore[import-untyped]

from ccanalytics.errors import StoreError
from ccanalytics.history.store._fs import Location, open_store
from ccanalytics.history.store._layout import (
    data_file_name,
    partition_dir,
    snapshot_of,
    store_folder,
)
from ccanalytics.history.store._schema import TABLES, to_arrow

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "COMPRESSION",
    "DICTIONARY_FROM_ROWS",
    "append_frame",
    "take_back",
    "write_file",
    "write_parquet",
]

#: The codec of every file the store writes, appended or compacted.
COMPRESSION = "zstd"
#: A file of fewer rows stores its values plainly, without dictionary pages. A
#: snapshot's pods file (54 rows, 50 columns) took 2.13 ms to write with dictionaries
#: and 1.43 ms without, and came out smaller (19.4 -> 17.8 KB); from about 500 rows on
#: the dictionaries pay (500 rows: 23.5 KB against 24.1; 10,544: 88 KB against 156).
DICTIONARY_FROM_ROWS = 500


def write_parquet(table: pa.Table, sink: BinaryIO) -> None:
    """Write ``table`` to ``sink`` as every file of the store is written."""
    pq.write_table(
        table,
        sink,
        compression=COMPRESSION,
        use_dictionary=table.num_rows >= DICTIONARY_FROM_ROWS,
    )


#: One frame converted to Arrow at a time: with the oldest pandas and pyarrow this
#: package supports (2.2 and 15), two conversions in two threads fail now and then
#: ("Could not convert <NA> ... NAType", 1 in 200 here). The conversion holds the GIL
#: anyway; the writes and their fsyncs, the slow part, still overlap.
_CONVERTING = threading.Lock()


def write_file(store: Location, table: pa.Table, final: PurePath) -> PurePath:
    """Write ``table`` as Parquet to the new file ``final``, visible whole or not at all
    (:meth:`~ccanalytics.history.store._fs.Location.create`).

    A file system error (a full disk, a read-only store, an S3 refusal) is a
    :class:`StoreError` naming ``final``.
    """
    try:
        store.create(final, lambda sink: write_parquet(table, sink))
    except OSError as err:
        raise StoreError(
            f"cannot write {store.show(final)}: {err.strerror or err}", store.at(final)
        ) from None
    return final


def append_frame(
    store: str | PathLike[str] | Location,
    table: str,
    frame: pd.DataFrame,
    *,
    snapshot: str | None = None,
) -> list[PurePath]:
    """Append ``frame``'s rows (with ``observed_at``) to ``store/table``; the files written.

    One new file per UTC date present in ``observed_at``; an empty frame writes nothing.
    ``snapshot``: the id of the snapshot the rows belong to, in each file's name (a
    pods or gpus file of a snapshot is read once the snapshot's record is written:
    :mod:`._layout`). Raises :class:`StoreError` when ``store`` is not a folder or
    cannot be written.
    """
    if frame.empty:
        return []
    where = store_folder(open_store(store))
    stamps = frame["observed_at"]
    first, last = stamps.min(), stamps.max()
    if first.date() == last.date():  # the usual snapshot: one day, no need to split
        parts = [(f"{first:%Y-%m-%d}", frame)]
    else:
        days = stamps.dt.strftime("%Y-%m-%d")
        parts = [(str(day), rows) for day, rows in frame.groupby(days, sort=True)]
    written = []
    for day, rows in parts:
        name = data_file_name(rows["observed_at"].min().to_pydatetime(), snapshot)
        with _CONVERTING:
            arrow = to_arrow(rows)
        written.append(write_file(where, arrow, partition_dir(where.root, table, day) / name))
    return written


def take_back(store: Location, snapshot: str, days: set[str]) -> list[PurePath]:
    """Delete every file of ``snapshot`` (in each table's partitions of ``days``): a
    snapshot that failed to be written whole; the files deleted.

    Best effort: a file that cannot be deleted stays, and readers ignore it anyway
    while the snapshot has no record (:mod:`._layout`).
    """
    removed = []
    for table in TABLES:
        for day in sorted(days):
            folder = partition_dir(store.root, table, day)
            try:
                names = [name for name, _ in store.entries(folder)]
            except (OSError, StoreError):
                continue
            for name in names:
                if snapshot_of(name) != snapshot:
                    continue
                try:
                    store.delete(folder / name)
                except OSError:
                    continue
                removed.append(folder / name)
    return removed

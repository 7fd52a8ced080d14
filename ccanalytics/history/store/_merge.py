"""A day's files as one table: what :func:`compact` writes and the readers' day cache holds.

One rule, used by both: every row of the files, in the files' order (by name, as
:func:`~ccanalytics.history.store._layout.list_store` lists them), columns a file lacks null
(schemas only grow), except the copies of a snapshot instant. Two collects within the
``Date`` header's second write the same cluster instant to two files, and a reader
counts it from the first file only (``file_index``: :mod:`._accounting`); once merged,
the file can no longer tell the copies apart, so the merge keeps the pod and GPU rows
of each ``(cluster_id, observed_at)`` from the first file that holds it, which are the
rows a reader counted before. The ``snapshots`` table keeps every row: a reader
combines an instant's listings (``ok`` if any copy is), and a copy is one small row.

A file that is not a snapshot file of ours is never merged: its rows would be in the
day's file for good.
"""

from __future__ import annotations

from pathlib import PurePath

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]

from ccanalytics.errors import StoreError
from ccanalytics.history.store._fs import Location
from ccanalytics.history.store._schema import open_vetted

__all__ = ["FILE_ORDER", "INSTANT_KEY", "first_copies", "merge_files"]

#: The columns that name one snapshot instant of one cluster.
INSTANT_KEY = ("cluster_id", "observed_at")
#: The tables whose copies of an instant are left out (see the module docstring).
_ONE_COPY_TABLES = frozenset({"pods", "gpus"})
#: The column that says which file a row came from, in the files' order (DuckDB's
#: virtual column is named so too): only while merging, never written.
FILE_ORDER = "file_index"


def merge_files(store: Location, files: list[PurePath], table: str) -> pa.Table:
    """The rows of ``files`` (sorted by name) as one table, each instant from one file.

    Raises :class:`StoreError` naming a file that is foreign or unreadable, or the
    folder when the files' types cannot be combined.
    """
    tables = []
    for number, path in enumerate(files):
        rows = _read(store, path, table)
        order = pa.array(np.full(rows.num_rows, number, dtype=np.uint64))
        tables.append(rows.append_column(FILE_ORDER, order))
    try:
        merged = pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:  # widths the footers allowed
        folder = store.at(files[0].parent)
        raise StoreError(f"cannot merge {folder}: {' '.join(str(err).split())}", folder) from None
    return first_copies(merged, table)


def first_copies(rows: pa.Table, table: str) -> pa.Table:
    """``rows`` (with :data:`FILE_ORDER`) without the copies of an instant, sorted by
    ``observed_at`` (stable: a file's own order is kept), :data:`FILE_ORDER` dropped."""
    if table in _ONE_COPY_TABLES and all(name in rows.column_names for name in INSTANT_KEY):
        rows = _without_copies(rows)
    rows = rows.drop_columns([FILE_ORDER])
    if "observed_at" in rows.column_names:
        rows = rows.sort_by([("observed_at", "ascending")])
    return rows


def _without_copies(rows: pa.Table) -> pa.Table:
    keys = list(INSTANT_KEY)
    spans = rows.group_by(keys).aggregate([(FILE_ORDER, "min"), (FILE_ORDER, "max")])
    low, high = spans.column(f"{FILE_ORDER}_min"), spans.column(f"{FILE_ORDER}_max")
    if low.equals(high):
        return rows  # the usual case: every instant in one file
    # Rare (two collects within one second): each instant's first file, row by row.
    first = {}
    names = (spans.column(n).to_pylist() for n in keys)
    for *key, order in zip(*names, low.to_pylist(), strict=True):
        if None not in key:  # an instant with a null part names nothing: never a copy
            first[tuple(key)] = order
    columns = [rows.column(n).to_pylist() for n in (*keys, FILE_ORDER)]
    keep = [first.get((c, t), f) == f for c, t, f in zip(*columns, strict=True)]
    return rows.filter(pa.array(keep, type=pa.bool_()))


def _read(store: Location, path: PurePath, table: str) -> pa.Table:
    where = store.at(path)
    # One footer read vets the file and reads it (pq.read_table would read it again, and
    # build a dataset for one file): most of compacting a day of small files.
    parquet, problem = open_vetted(store.source(path), table)
    if parquet is None:
        raise StoreError(f"cannot merge store file {where}: {problem}", where)
    try:
        with parquet:
            return parquet.read()
    except FileNotFoundError:
        raise
    except Exception as err:  # never merge around a file we could not read
        raise StoreError(f"cannot merge unreadable store file {where}: {err}", where) from None

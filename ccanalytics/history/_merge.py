"""A day's files as one table: what :func:`compact` writes and the readers' day cache holds.

One rule, used by both: every row of the files, in the files' order (by name, as
:func:`~ccanalytics.history._layout.list_store` lists them), columns a file lacks null
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

from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from ccanalytics.errors import StoreError
from ccanalytics.history._schema import file_problem

__all__ = ["INSTANT_KEY", "merge_files"]

#: The columns that name one snapshot instant of one cluster.
INSTANT_KEY = ("cluster_id", "observed_at")
#: The tables whose copies of an instant are left out (see the module docstring).
_ONE_COPY_TABLES = frozenset({"pods", "gpus"})


def merge_files(files: list[Path], table: str, *, vetted: bool = False) -> pa.Table:
    """The rows of ``files`` (sorted by name) as one table, each instant from one file.

    ``vetted``: the caller has already found every file to be ours (History's verdicts),
    so their footers are not read twice. Raises :class:`StoreError` naming a file that
    is foreign or unreadable, or the folder when the files' types cannot be combined.
    """
    tables = [_read(path, table, vetted=vetted) for path in files]
    if table in _ONE_COPY_TABLES:
        tables = _first_copies(tables)
    try:
        merged = pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:  # widths the footers allowed
        folder = files[0].parent
        raise StoreError(f"cannot merge {folder}: {' '.join(str(err).split())}", folder) from None
    return (
        merged.sort_by([("observed_at", "ascending")])  # stable: a file's order is kept
        if "observed_at" in merged.column_names
        else merged
    )


def _read(path: Path, table: str, *, vetted: bool) -> pa.Table:
    if not vetted:
        problem = file_problem(path, table)
        if problem is not None:
            raise StoreError(f"cannot merge store file {path}: {problem}", path)
    try:
        return pq.read_table(path)
    except FileNotFoundError:
        raise
    except Exception as err:  # never merge around a file we could not read
        raise StoreError(f"cannot merge unreadable store file {path}: {err}", path) from None


def _first_copies(tables: list[pa.Table]) -> list[pa.Table]:
    """Each table without the rows of instants an earlier table already holds."""
    seen: set[tuple[object, object]] = set()
    kept = []
    for table in tables:
        if not all(name in table.column_names for name in INSTANT_KEY):
            kept.append(table)  # no instant to tell apart (never in a file of ours)
            continue
        # The distinct instants first (about one per cluster a file): cheap, where
        # every row's key in Python would cost seconds for a large fleet's day.
        distinct = table.select(list(INSTANT_KEY)).group_by(list(INSTANT_KEY)).aggregate([])
        instants = set(zip(*(distinct.column(n).to_pylist() for n in INSTANT_KEY), strict=True))
        if instants & seen:  # rare: two collects within one second
            keys = zip(*(table.column(n).to_pylist() for n in INSTANT_KEY), strict=True)
            table = table.filter(pa.array([k not in seen for k in keys], type=pa.bool_()))
        # An instant with a null part names nothing, so it is never taken for a copy.
        seen |= {k for k in instants if None not in k}
        kept.append(table)
    return kept

"""The SQL of the catalog's views: each table's files read as one relation, times as stored.

A local store's files are read in runs of consecutive files with one schema
(:func:`schema_runs`), each without matching columns by name; every read casts its time
columns to the store's own type (:func:`times_cast`, :func:`times_as_stored`). The
bounds view and the one-file-per-instant flag are answered from the files' footers when
they can be (:func:`bounds_sql`, :func:`spans_disjoint`).
"""

from __future__ import annotations

import functools
from itertools import pairwise
from typing import TYPE_CHECKING

from ccanalytics.history.queries._window import BOUNDS_SQL
from ccanalytics.history.store import TimeSpan, empty_table

if TYPE_CHECKING:
    from pathlib import PurePath

    import pyarrow as pa  # type: ignore[import-untyped]

    from ccanalytics.history.store import Location

__all__ = [
    "MAX_SCHEMA_RUNS",
    "bounds_sql",
    "empty_sql",
    "pq_schema",
    "schema_runs",
    "spans_disjoint",
    "times_as_stored",
    "times_cast",
]

#: More runs of differently-typed files than this and a view reads them all in one
#: read that matches columns by name (slower, but one read, not hundreds).
MAX_SCHEMA_RUNS = 16

#: A table's files, in listing order, each with its schema key ("": unknown).
Files = tuple[tuple["PurePath", str], ...]


def empty_sql(table: str) -> str:
    """The empty relation every view of ``table`` starts from: its columns and types."""
    return (
        f"SELECT *, CAST(NULL AS DATE) AS date, CAST(NULL AS UBIGINT) AS file_index "
        f"FROM _empty_{table}"
    )


def schema_runs(files: Files) -> tuple[list[tuple[int, list[str]]], str]:
    """Runs of consecutive files with one schema (each with its offset), and the read's options.

    union_by_name reads every file's footer when the view is bound, and again for each
    query (seconds for a month of 5-minute files), so a run is read without it.
    ``file_index`` (DuckDB's virtual column) counts within a read, so each run adds its
    offset to keep the listing's order across runs.
    """
    runs: list[tuple[int, list[str]]] = []
    previous = None
    for index, (path, key) in enumerate(files):
        if not runs or not key or key != previous:
            runs.append((index, []))
        runs[-1][1].append(str(path))
        previous = key
    if len(runs) > MAX_SCHEMA_RUNS:  # schemas interleaved: one read that matches names
        return [
            (0, [str(path) for path, _ in files])
        ], "hive_partitioning = true, union_by_name = true"
    return runs, "hive_partitioning = true"


def times_as_stored(table: str, union: str) -> str:
    """``union`` with every time column as the store's own type (TIMESTAMPTZ, µs).

    The vetting accepts a time column of any width and zone (``DataFrame.to_parquet``
    writes nanoseconds), and DuckDB reads each as it is stored: one such file made the
    whole column TIMESTAMP_NS, which ``epoch_us`` and the comparisons with the queries'
    TIMESTAMPTZ bounds refuse. Cast once here, every query reads one type. A naive
    column is taken as UTC (the connection's zone), as ``to_pandas`` does; for
    a store of only its own files the cast is to the type it has, which DuckDB drops.
    """
    times = _time_columns(table)
    casts = ", ".join(f'CAST("{name}" AS TIMESTAMPTZ) AS "{name}"' for name in times)
    return f"SELECT * REPLACE ({casts}) FROM ({union})" if times else union


def times_cast(table: str) -> str:
    """A read's select list with its time columns cast to TIMESTAMPTZ, those it has.

    Each read of a folder's files is cast before the reads are unioned: DuckDB before
    2.0 unions a TIMESTAMPTZ with a TIMESTAMP_NS as TIMESTAMP_NS and cannot cast the
    first to it (a ConversionException on the declared floor, 1.3). ``COLUMNS`` with a
    lambda matches only the columns a read has; every file has ``observed_at`` (the
    vetting's identity columns), so the match is never empty.
    """
    names = _time_columns(table)
    if not names:
        return "*"
    listed = "[" + ", ".join(f"'{name}'" for name in names) + "]"
    return (
        f"COLUMNS(lambda c: NOT list_contains({listed}, c)), "
        f"CAST(COLUMNS(lambda c: list_contains({listed}, c)) AS TIMESTAMPTZ)"
    )


@functools.cache
def _time_columns(table: str) -> tuple[str, ...]:
    """The store's time columns of ``table`` (its own schema's timestamps)."""
    import pyarrow as pa

    return tuple(f.name for f in empty_table(table).schema if pa.types.is_timestamp(f.type))


def bounds_sql(spans: list[TimeSpan]) -> str:
    """The bounds view's query: :data:`BOUNDS_SQL`, or its answer when the footers tell it.

    Every listed file's span (from its footer's statistics: exact, and free once
    vetted) gives the oldest and newest ``observed_at`` without opening a file; a file
    whose footer cannot tell (or that vanished) leaves it to the query.
    """
    if any(span is None for span in spans):
        return BOUNDS_SQL
    known = [span for span in spans if span]
    if not known:
        return "SELECT CAST(NULL AS BIGINT) AS lo_us, CAST(NULL AS BIGINT) AS hi_us"
    low = min(span[0] for span in known)
    high = max(span[1] for span in known)
    return f"SELECT CAST({int(low)} AS BIGINT) AS lo_us, CAST({int(high)} AS BIGINT) AS hi_us"


def spans_disjoint(spans: list[TimeSpan]) -> bool:
    """Whether no ``observed_at`` can lie in two of the files with these spans.

    From the footers' statistics (exact, and free once vetted): sorted by start, each
    range begins after every earlier one ended. A file without times cannot share one;
    a file whose range is unknown (or that vanished) might, so the answer is then False.
    """
    ranges: list[tuple[int, int]] = []
    for span in spans:
        if span is None:
            return False
        if span:
            ranges.append((span[0], span[1]))
    ranges.sort()
    return all(later[0] > earlier[1] for earlier, later in pairwise(ranges))


def pq_schema(store: Location, path: PurePath) -> pa.Schema:
    """A file's Arrow schema from its footer, without pandas' metadata."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    return pq.read_schema(store.source(path)).remove_metadata()

"""The one engine: the rules' SQL run by DuckDB over an in-memory pods frame.

:func:`query` hands the frame's columns a query reads, as Arrow, to an in-memory
DuckDB connection (no copy of the values: see :func:`_relation`; through a relation
registered once per connection, :class:`_Source`), runs the SQL, parsed once, through
the DB-API call and builds the result's columns in the frames' nullable dtypes straight
from DuckDB's numpy arrays, so the live analyses run the same SQL text as
:class:`ccanalytics.history.History` runs over the store. A column an older or
hand-made frame lacks is read as NULL of its pods-frame type. The connection is one
per thread (a DuckDB connection is not for concurrent use) and per process (a forked
child opens its own: :func:`_forget_inherited`), locked down like History's: no file
access, no extension loading.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from ccanalytics.measures._sql import sql_parameters

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

__all__ = ["query"]

_LOCAL = threading.local()
#: The frame's relation name inside the SQL.
FRAME: str = "frame"
#: In a forked child, what the forking thread's ``_LOCAL`` held: kept, never used, closed
#: or freed there (freeing a connection closes its database, which joins threads that
#: the fork did not copy).
_INHERITED: list[dict[str, Any]] = []


def _forget_inherited() -> None:
    """After a fork, in the child: its first query opens a database of its own.

    DuckDB's state is not fork-safe: a database's threads are not copied into the child,
    and a query there on the parent's connection may wait on them for ever
    (duckdb/duckdb-python#292). The report's drawing workers are forked, and query.
    """
    state = vars(_LOCAL)
    if state:
        _INHERITED.append(dict(state))
        state.clear()


if hasattr(os, "register_at_fork"):  # not on Windows, which cannot fork
    os.register_at_fork(after_in_child=_forget_inherited)


def _connection() -> duckdb.DuckDBPyConnection:
    con: duckdb.DuckDBPyConnection | None = getattr(_LOCAL, "con", None)
    if con is None:
        import duckdb

        con = duckdb.connect(
            ":memory:",
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
        )
        con.execute("SET enable_external_access = false")
        # One thread: a live frame is small (50,000 pods scan in a few ms), and a second
        # worker's scheduling cost more than it saved (0.87x the time with 1 thread,
        # measured side by side on 2 shared cores).
        con.execute("SET threads = 1")
        _LOCAL.con = con
        _LOCAL.parsed = {}
        _LOCAL.sources = {} if _rescans_streams(duckdb.__version__) else None
    return con


def _rescans_streams(version: str) -> bool:
    """Whether this DuckDB opens a registered object's Arrow stream anew at each query
    (1.5 and later); 1.4 and before keep the one stream it gave at registration, which a
    second query finds released."""
    import re

    found = re.match(r"(\d+)\.(\d+)", version)
    return found is not None and (int(found[1]), int(found[2])) >= (1, 5)


class _Source:
    """A relation registered once per connection, whose Arrow table each query sets.

    DuckDB reads it through the Arrow stream interface at each query's bind, so the
    view never changes: registering and unregistering the frame on every call were two
    more statements (a catalog write each, a tenth of a small query's time). DuckDB 1.5
    and later only (:func:`_rescans_streams`); before, each query registers its tables.
    """

    table: Any = None

    # No __arrow_c_schema__: DuckDB 1.5 would keep the first table's schema for good.
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        if self.table is None:
            raise LookupError("no table is set for this relation outside a query")
        return self.table.__arrow_c_stream__(requested_schema)


def _source(con: duckdb.DuckDBPyConnection, name: str, table: Any) -> _Source | None:
    """The relation ``name`` of this thread's connection, reading ``table`` (registered
    on first use: registering reads the schema). None where DuckDB cannot rescan it:
    ``table`` is then registered itself, for this query only."""
    sources: dict[str, _Source] | None = _LOCAL.sources
    if sources is None:
        con.register(name, table)
        return None
    source = sources.get(name)
    if source is None:
        source = _Source()
        source.table = table
        con.register(name, source)
        sources[name] = source
    source.table = table
    return source


#: How many parsed statements a connection keeps (the analyses have fewer than ten).
_PARSED_KEPT: Final = 64


def _parsed(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    """``sql`` parsed once per connection: the statement, which runs as its text does.

    DuckDB's parser cost as much as a small query (2 ms of the live summary's 14 at 200
    pods); the queries are a handful of constant texts, so each is parsed on first use.
    """
    parsed: dict[str, Any] = _LOCAL.parsed
    statement = parsed.get(sql)
    if statement is None:
        (statement,) = con.extract_statements(sql)
        if len(parsed) >= _PARSED_KEPT:  # a caller's own texts: never an unbounded cache
            parsed.clear()
        parsed[sql] = statement
    return statement


#: The Arrow type of a pods-frame dtype, for a column a frame lacks (read as NULLs).
_ARROW_TYPES: Final = {"string": "large_string", "Int64": "int64", "Float64": "float64"}


def _relation(
    frame: pd.DataFrame,
    columns: Iterable[str],
    dtypes: Mapping[str, str],
    fallbacks: Mapping[str, str] | None = None,
) -> Any:
    """The columns a query reads, as one Arrow table (missing ones as typed NULLs), and
    ``_row``, the row order.

    Arrow, not the pandas frame: DuckDB converts a pandas string or masked column value
    by value on every scan, where it reads an Arrow column where it lies; and a column
    already of its pods-frame type becomes Arrow without a copy of its values (Arrow
    strings are shared, a mask becomes a bitmap).
    """
    import pyarrow as pa  # type: ignore[import-untyped]

    arrays: dict[str, Any] = {}
    for name in columns:
        kind = dtypes.get(name, "Float64")
        # An older frame: the column's fallback, else NULLs.
        name_in_frame = name if name in frame.columns else (fallbacks or {}).get(name, name)
        if name_in_frame not in frame.columns:
            arrays[name] = pa.nulls(len(frame), _ARROW_TYPES.get(kind, "float64"))
            continue
        column = frame[name_in_frame]
        if str(column.dtype) != kind:  # a hand-made frame: objects, numpy floats
            column = column.astype(kind)  # type: ignore[call-overload]
        arrays[name] = pa.array(column.array)
    arrays["_row"] = _positions(len(frame))
    return pa.table(arrays)


def _positions(size: int) -> Any:
    """``0 .. size - 1`` as an Arrow int64 array: a slice of one kept array (Arrow arrays
    are immutable), not a new one per query."""
    import numpy as np
    import pyarrow as pa

    kept: Any = getattr(_LOCAL, "positions", None)
    if kept is None or len(kept) < size:
        kept = _LOCAL.positions = pa.array(np.arange(size, dtype=np.int64))
    return kept.slice(0, size)


def query(
    frame: pd.DataFrame,
    sql: str,
    params: Mapping[str, Any],
    *,
    reads: Iterable[str],
    frame_dtypes: Mapping[str, str],
    dtypes: Mapping[str, str] | None = None,
    tables: Mapping[str, tuple[pd.DataFrame, Mapping[str, str]]] | None = None,
    fallbacks: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Run ``sql`` (over the relation ``frame``) with ``params``: its result, nullable dtypes.

    ``reads`` are the frame columns the SQL uses (``frame_dtypes`` types them, and the
    absent ones, which read as NULL); ``_row`` is each pod's position in ``frame``.
    Without ``dtypes``: every result column, in the nullable dtype of its kind
    (``Int64``, ``Float64``, ``boolean``, ``string``). With it: ``dtypes``' columns, each
    built in its dtype at once; one the SQL does not compute is the pod's own, taken
    from ``frame`` at each result row's ``_row`` (NA where ``frame`` lacks it).
    ``tables``: more relations by name, each a frame and the types of the columns the
    SQL reads of it (the GPU frame, say), read the same way. ``fallbacks``: a column
    ``frame`` lacks read from another of its columns (``{"gpus_reporting": "gpu_count"}``).
    The parameters bound are those the SQL's tree names (:func:`~ccanalytics.measures.sql_parameters`).
    """
    import pandas as pd

    con = _connection()
    relations = {FRAME: _relation(frame, reads, frame_dtypes, fallbacks)}
    for name, (other, kinds) in (tables or {}).items():
        relations[name] = _relation(other, kinds, kinds)
    sources: dict[str, _Source | None] = {}
    try:
        for name, relation in relations.items():
            sources[name] = _source(con, name, relation)
        bound = sql_parameters(sql)
        used = {name: value for name, value in params.items() if name in bound}
        # The DB-API call, not ``con.sql``: that one binds the statement once more
        # before running it, a third of a small query's time.
        columns = con.execute(_parsed(con, sql), used).fetchnumpy()
    finally:
        for name, source in sources.items():
            if source is None:
                con.unregister(name)
            else:
                source.table = None  # the frame's arrays are not kept past the query
    if dtypes is None:
        out = {name: _nullable(values) for name, values in columns.items()}
    else:
        out = _typed(frame, columns, dtypes)
    # One frame, built once from its arrays: each intermediate frame cost pandas'
    # bookkeeping again (about a tenth of a millisecond a column).
    return pd.DataFrame(out, copy=False)


def _typed(frame: pd.DataFrame, columns: Mapping[str, Any], dtypes: Mapping[str, str]) -> Any:
    """``dtypes``' columns: computed ones from ``columns``, the pods' own from ``frame``."""
    import numpy as np
    import pandas as pd

    rows = np.ma.getdata(columns["_row"]).astype(np.int64) if "_row" in columns else None
    out = {}
    for name, kind in dtypes.items():
        if name in columns:
            out[name] = _nullable(columns[name], kind)
            continue
        if rows is not None and name in frame.columns:
            column = _take(frame[name].array, rows)
        else:
            size = len(rows) if rows is not None else len(next(iter(columns.values()), ()))
            column = pd.array([pd.NA] * size, dtype=kind)  # type: ignore[call-overload]
        out[name] = column if str(column.dtype) == kind else column.astype(kind)
    return out


#: Up to this many result rows, a string column's values are read one by one.
_FEW_ROWS: Final = 64


def _take(array: Any, rows: Any) -> Any:
    """``array``'s values at ``rows`` (positions), in its own dtype.

    Column by column: a sub-frame's take costs pandas' block bookkeeping again. An Arrow
    string column of a few rows (the stragglers, a summary's names) is read value by
    value: Arrow's take joins the column's chunks into one first, a copy of every
    string, half a millisecond a column at 50,000 pods for a result of ten rows.
    """
    import pandas as pd

    if len(rows) <= _FEW_ROWS and isinstance(array, pd.arrays.ArrowStringArray):
        chunked = array.__arrow_array__()
        return pd.array([chunked[int(row)].as_py() for row in rows], dtype=array.dtype)
    return array.take(rows)


def _nullable(values: Any, dtype: str | None = None) -> Any:
    """A result column (numpy, masked where NULL) as a pandas nullable array: ``dtype``,
    else the nullable dtype of its kind."""
    import numpy as np
    import pandas as pd

    mask = np.ma.getmaskarray(values)
    data = np.ma.getdata(values)
    kind = data.dtype.kind
    if kind in "iu" and dtype in (None, "Int64"):
        return pd.arrays.IntegerArray(data.astype(np.int64, copy=False), mask)
    if kind in "fiu" and dtype in (None, "Float64"):
        return pd.arrays.FloatingArray(data.astype(np.float64, copy=False), mask)
    if kind == "b" and dtype in (None, "boolean"):
        return pd.arrays.BooleanArray(data, mask)
    if kind in "OU":
        data = data.astype(object)
        data[mask] = None
        return pd.array(data, dtype=dtype or "string")  # type: ignore[call-overload]
    if dtype is None:  # no kind the queries give: as numpy has it
        return data
    # Another pairing (a sum of integers, which DuckDB widens to a float, as Int64):
    # through the kind's own array, whose astype checks the conversion.
    return _nullable(values).astype(dtype)

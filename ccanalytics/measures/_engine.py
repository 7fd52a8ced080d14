"""The one engine: the rules' SQL run by DuckDB over an in-memory pods frame.

:func:`query` registers the frame's columns a query reads on an in-memory DuckDB
connection (no copy: DuckDB scans the pandas columns where they lie) and returns the
result with the frames' nullable dtypes, so the live analyses run the same SQL text as
:class:`ccanalytics.history.History` runs over the store. A column an older or
hand-made frame lacks is read as NULL of its pods-frame type. The connection is one
per thread (a DuckDB connection is not for concurrent use), locked down like
History's: no file access, no extension loading.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

__all__ = ["query", "take"]

_LOCAL = threading.local()
#: The frame's relation name inside the SQL.
FRAME: str = "frame"


def _connection() -> duckdb.DuckDBPyConnection:
    con: duckdb.DuckDBPyConnection | None = getattr(_LOCAL, "con", None)
    if con is None:
        import duckdb

        con = duckdb.connect(
            ":memory:",
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
        )
        con.execute("SET enable_external_access = false")
        _LOCAL.con = con
    return con


def _relation(frame: pd.DataFrame, columns: Iterable[str], dtypes: Mapping[str, str]) -> Any:
    """The columns a query reads (missing ones as typed NULLs) and ``_row``, the row order.

    No copy of a column already of its pods-frame type: DuckDB scans it where it lies.
    """
    import numpy as np
    import pandas as pd

    present = [name for name in columns if name in frame.columns]
    slim = frame[present].reset_index(drop=True)
    fixes = {
        name: dtypes[name]
        for name in present
        if name in dtypes and str(slim[name].dtype) != dtypes[name]
    }
    if fixes:  # a hand-made frame: objects, numpy floats
        slim = slim.astype(fixes)
    extra = {
        name: pd.Series(pd.NA, index=slim.index, dtype=dtypes.get(name, "Float64"))
        for name in columns
        if name not in frame.columns
    }
    return slim.assign(**extra, _row=np.arange(len(frame), dtype=np.int64))


def query(
    frame: pd.DataFrame,
    sql: str,
    params: Mapping[str, Any],
    *,
    reads: Iterable[str],
    frame_dtypes: Mapping[str, str],
    tables: Mapping[str, tuple[pd.DataFrame, Mapping[str, str]]] | None = None,
) -> pd.DataFrame:
    """Run ``sql`` (over the relation ``frame``) with ``params``: its result, nullable dtypes.

    ``reads`` are the frame columns the SQL uses (``frame_dtypes`` types them, and the
    absent ones, which read as NULL); ``_row`` is each pod's position in ``frame``.
    ``tables``: more relations by name, each a frame and the types of the columns the
    SQL reads of it (the GPU frame, say), read the same way.
    """
    con = _connection()
    relations = {FRAME: _relation(frame, reads, frame_dtypes)}
    for name, (other, dtypes) in (tables or {}).items():
        relations[name] = _relation(other, dtypes, dtypes)
    for name, relation in relations.items():
        con.register(name, relation)
    try:
        used = {name: value for name, value in params.items() if f"${name}" in sql}
        table = con.sql(sql, params=used).to_arrow_table()
    finally:
        for name in relations:
            con.unregister(name)
    out: pd.DataFrame = table.to_pandas(types_mapper=_nullable)
    return out


def take(frame: pd.DataFrame, result: pd.DataFrame, dtypes: Mapping[str, str]) -> pd.DataFrame:
    """``result``'s rows with ``dtypes``' columns: computed ones from ``result``, the
    pods' own from ``frame`` at each row's ``_row`` (a column ``frame`` lacks is NA)."""
    import numpy as np
    import pandas as pd

    rows = result["_row"].to_numpy(dtype=np.int64)
    own = [n for n in dtypes if n not in result.columns and n in frame.columns]
    taken = frame[own].take(rows).reset_index(drop=True)  # one take for every pod column
    out = {}
    for name, kind in dtypes.items():
        if name in result.columns:
            column = result[name].reset_index(drop=True)
        elif name in taken.columns:
            column = taken[name]
        else:
            column = pd.Series(pd.NA, index=range(len(result)), dtype=kind)
        out[name] = column if str(column.dtype) == kind else column.astype(kind)  # type: ignore[call-overload]
    return pd.DataFrame(out, copy=False)


def _nullable(arrow_type: Any) -> Any:
    """Arrow types as pandas' nullable dtypes (None: pandas' default)."""
    import pandas as pd
    import pyarrow as pa  # type: ignore[import-untyped]

    if pa.types.is_integer(arrow_type):
        return pd.Int64Dtype()
    if pa.types.is_floating(arrow_type):
        return pd.Float64Dtype()
    if pa.types.is_boolean(arrow_type):
        return pd.BooleanDtype()
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return pd.StringDtype()
    return None

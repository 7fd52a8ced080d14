"""What a store file holds, and the conversions between the frames and Arrow.

A store file's columns are the frames' columns, typed from their pandas dtypes (never
from a hard-coded list, so a column the frames gain is stored as soon as it exists),
plus ``schema_version``. Timestamps are stored as microseconds in UTC: Spark cannot
read Parquet's nanosecond timestamps, and the API's times carry no finer precision.
No pandas or other metadata is written into a file: the store holds data only.

Reading converts back to the live frames' nullable dtypes (``string``, ``Int64``,
``Float64``, ``boolean``, ``datetime64[ns, UTC]``), whichever engine produced the Arrow.

A file is one of ours when :func:`foreign_reason` finds nothing: it has
``schema_version``, ``observed_at`` and ``cluster_id``, and every column it shares with
the files written now has the same kind of type (text, integer, number, time, ...;
width and unit may differ: pandas writes large strings and nanoseconds; an all-null
column fits any). Any other file (unrelated columns, wrong types, no columns) would
read as rows of nulls or fail deep inside a query, so ``verify`` names it, ``History``
refuses it and ``compact`` never merges it: :func:`file_problem` is that one test.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

__all__ = [
    "OK",
    "SCHEMA_VERSION",
    "SNAPSHOT_COLUMNS",
    "STORED_TIME_UNIT",
    "TABLES",
    "TimeSpan",
    "empty_table",
    "file_problem",
    "foreign_reason",
    "open_vetted",
    "schema_key",
    "to_arrow",
    "to_pandas",
    "vet_file",
    "vet_parquet",
]

#: The version written into every row's ``schema_version``. Bump it when a change
#: needs readers to tell rows apart (a column whose meaning changed); adding a
#: column does not need a bump: old files read it as null.
SCHEMA_VERSION = 1
#: Timestamps are stored at this precision (Spark reads microseconds, not nanoseconds).
STORED_TIME_UNIT = "us"
#: The store's tables: one top-level folder each. ``snapshots`` holds one row per
#: cluster per snapshot (see :data:`SNAPSHOT_COLUMNS`); stores written before it have
#: no such folder, and readers fall back to the pod rows' instants.
TABLES = ("pods", "gpus", "snapshots")
#: The snapshots table's columns and pandas dtypes: when, which cluster, how many pods
#: its listing held, ``"ok"`` or the failure's exception class, and the failure's HTTP
#: status (<NA> when it had none). Class and status only: a message may quote a URL.
SNAPSHOT_COLUMNS = {
    "cluster_id": "string",
    "pods": "Int64",
    "outcome": "string",
    "http_status": "Int64",
    "observed_at": "datetime64[ns, UTC]",  # last, as in the other tables' files
}
#: ``outcome`` of a listing that answered (with pods or without).
OK = "ok"


def _is_string_view(dtype: pa.DataType) -> bool:
    # pyarrow 16 added string views; before it no array can be one.
    test = getattr(pa.types, "is_string_view", None)
    return bool(test(dtype)) if test is not None else False


def _string_types() -> list[pa.DataType]:
    """Every Arrow string type this pyarrow has (string views came with pyarrow 16)."""
    views = [pa.string_view()] if hasattr(pa, "string_view") else []
    return [pa.string(), pa.large_string(), *views]


def _stored_type(dtype: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(dtype):
        return pa.timestamp(STORED_TIME_UNIT, tz="UTC")
    if pa.types.is_large_string(dtype) or _is_string_view(dtype):
        return pa.string()
    return dtype


def to_arrow(frame: pd.DataFrame) -> pa.Table:
    """A frame (with ``observed_at``) as the Arrow table a store file holds."""
    # Column by column (each pandas array converts itself): a third of the time of
    # Table.from_pandas, which also builds pandas metadata that we would drop anyway.
    # From the array rather than the Series: pyarrow's Series path costs a quarter more
    # (2.1 ms rather than 1.6 for the sandbox fleet's pods); from_pandas=True makes a
    # NaN of a NumPy column null, as the Series path does.
    names = [str(name) for name in frame.columns]
    arrays = [pa.array(frame[name].array, from_pandas=True) for name in frame.columns]
    table = pa.Table.from_arrays(arrays, names=names)
    schema = pa.schema([pa.field(f.name, _stored_type(f.type)) for f in table.schema])
    # safe=False: a nanosecond remainder is dropped rather than raising (see the docstring).
    table = table.cast(schema, safe=False).replace_schema_metadata(None)
    version = pa.array([SCHEMA_VERSION] * table.num_rows, type=pa.int32())
    return table.append_column("schema_version", version)


@cache
def empty_table(table: str) -> pa.Table:
    """A table with no rows and exactly the columns a file written now would have.

    Built once per table and process (an Arrow table cannot be changed): each History
    opened registers all three, and building them costs more than the open itself.
    """
    import pandas as pd

    from ccanalytics.frames import gpus_frame, pods_frame

    if table == "snapshots":
        return to_arrow(pd.DataFrame({n: pd.Series(dtype=t) for n, t in SNAPSHOT_COLUMNS.items()}))
    frame = pods_frame([]) if table == "pods" else gpus_frame([])
    frame["observed_at"] = pd.Series(dtype="datetime64[ns, UTC]")
    return to_arrow(frame)


#: The columns without which a file is not a snapshot of ours, whatever else it holds.
IDENTITY_COLUMNS = ("schema_version", "observed_at", "cluster_id")


def _kind(dtype: pa.DataType) -> str:
    """The kind of an Arrow type that decides whether a stored column fits its column."""
    checks = (
        ("null", pa.types.is_null),
        ("text", lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)),
        ("text", _is_string_view),
        ("time", pa.types.is_timestamp),
        ("integer", pa.types.is_integer),
        ("number", pa.types.is_floating),
        ("boolean", pa.types.is_boolean),
    )
    for kind, test in checks:
        if test(dtype):
            return kind
    return str(dtype)


#: The kinds a stored column may have for each kind its column has now.
_FITS = {"number": ("number", "integer")}


@cache
def _expected(table: str) -> dict[str, str]:
    return {f.name: _kind(f.type) for f in empty_table(table).schema}


def foreign_reason(schema: pa.Schema, table: str) -> str | None:
    """Why a file with ``schema`` is not one of ``table``'s snapshot files; None when it is."""
    if not schema.names:
        return "it has no columns"
    missing = [name for name in IDENTITY_COLUMNS if name not in schema.names]
    if missing:
        return f"it has no {', '.join(missing)} column"
    twice = sorted({name for name in schema.names if schema.names.count(name) > 1})
    if twice:
        return f"its column {twice[0]} appears more than once"
    expected = _expected(table)
    for field in schema:
        want = expected.get(field.name)
        kind = _kind(field.type)
        if want is None or kind == "null" or kind in _FITS.get(want, (want,)):
            continue
        return f"its column {field.name} is {field.type}, not {want}"
    return None


def file_problem(path: Any, table: str) -> str | None:
    """Why ``path`` cannot be read as a snapshot file of ``table`` (one line); None when it can.

    Reads the Parquet footer only. ``FileNotFoundError`` propagates: a file that
    vanished (a compaction finished) is the caller's to list again.
    """
    return vet_file(path, table)[0]


#: A file's earliest and latest ``observed_at`` in epoch µs (from its footer's
#: statistics); ``()`` when it holds no time at all, ``None`` when the footer cannot
#: tell (then only reading the column can).
TimeSpan = tuple[int, int] | tuple[()] | None


def vet_file(path: Any, table: str) -> tuple[str | None, str, TimeSpan]:
    """:func:`file_problem`, the file's schema key and its :data:`TimeSpan`.

    The schema key is ``""`` for a file with a problem; files with equal keys have the
    same columns with the same types (metadata aside), so a reader may read them as
    one without matching columns by name file by file.
    """
    try:
        with _open(path) as parquet:
            return vet_parquet(parquet, table)
    except _Unreadable as err:
        return err.reason, "", None


def open_vetted(path: Any, table: str) -> tuple[pq.ParquetFile | None, str | None]:
    """``path`` opened for reading and :func:`file_problem`'s verdict on it, from one
    read of its footer (the caller closes the file); ``(None, problem)`` when its footer
    cannot be read. ``FileNotFoundError`` propagates, as from :func:`file_problem`."""
    try:
        parquet = _open(path)
    except _Unreadable as err:
        return None, err.reason
    problem = vet_parquet(parquet, table)[0]
    if problem is not None:
        parquet.close()
        return None, problem
    return parquet, None


def vet_parquet(parquet: pq.ParquetFile, table: str) -> tuple[str | None, str, TimeSpan]:
    """:func:`vet_file` of a file already open."""
    try:
        schema = parquet.schema_arrow  # what pq.read_schema reads
    except Exception as err:  # pyarrow raises ArrowInvalid, OSError, ...
        return _Unreadable(err).reason, "", None
    reason, key = _judged_once(schema.remove_metadata(), table)
    if reason is not None:
        return f"not a snapshot file of this store: {reason}", "", None
    return None, key, _time_span(parquet.metadata)


class _Unreadable(Exception):
    """A footer pyarrow cannot read; ``reason`` says why in one line."""

    def __init__(self, err: Exception) -> None:
        super().__init__(err)
        self.reason = " ".join(str(err).split())


def _open(path: Any) -> pq.ParquetFile:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except FileNotFoundError:
        raise
    except Exception as err:  # pyarrow raises ArrowInvalid, OSError, ...
        raise _Unreadable(err) from None


def _time_span(metadata: Any) -> TimeSpan:
    """``observed_at``'s range from the row groups' statistics (see :data:`TimeSpan`)."""
    import json

    names = metadata.schema.names
    if names.count("observed_at") != 1:
        return None
    column = names.index("observed_at")
    logical = json.loads(metadata.schema.column(column).logical_type.to_json() or "{}")
    if logical.get("Type") != "Timestamp" or logical.get("timeUnit") != "microseconds":
        return None  # another unit: the view's µs would be a conversion of it
    lows, highs = [], []
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        chunk = group.column(column)
        stats = chunk.statistics
        if group.num_rows == 0 or (stats is not None and stats.null_count == group.num_rows):
            continue  # no time in this row group
        if stats is None or not stats.has_min_max or chunk.physical_type != "INT64":
            return None
        lows.append(int(stats.min_raw))
        highs.append(int(stats.max_raw))
    return (min(lows), max(highs)) if lows else ()


def schema_key(schema: pa.Schema, table: str) -> str:
    """The schema key :func:`vet_file` gives a file of ``table`` with this Arrow schema."""
    return _judged_once(schema.remove_metadata(), table)[1]


@lru_cache(maxsize=64)
def _judged_once(schema: pa.Schema, table: str) -> tuple[str | None, str]:
    # A store's files share a handful of schemas: judging each once keeps the cost of
    # vetting a file to reading its footer (without the metadata, which pandas varies).
    import hashlib

    key = hashlib.sha256(schema.serialize().to_pybytes()).hexdigest()[:16]
    return foreign_reason(schema, table), key


_NULLABLE: dict[pa.DataType, Any] = {}


def _pandas_dtype(dtype: pa.DataType) -> Any:
    """The live frames' nullable pandas dtype for an Arrow type (None: pyarrow's default)."""
    import pandas as pd

    if not _NULLABLE:
        _NULLABLE.update(
            {
                **{text: pd.StringDtype() for text in _string_types()},
                pa.bool_(): pd.BooleanDtype(),
                pa.int8(): pd.Int8Dtype(),
                pa.int16(): pd.Int16Dtype(),
                pa.int32(): pd.Int32Dtype(),
                pa.int64(): pd.Int64Dtype(),
                pa.uint8(): pd.UInt8Dtype(),
                pa.uint16(): pd.UInt16Dtype(),
                pa.uint32(): pd.UInt32Dtype(),
                pa.uint64(): pd.UInt64Dtype(),
                pa.float32(): pd.Float32Dtype(),
                pa.float64(): pd.Float64Dtype(),
            }
        )
    return _NULLABLE.get(dtype)


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """An Arrow result as a frame with the live frames' nullable dtypes; times in UTC (ns)."""
    frame: pd.DataFrame = table.to_pandas(types_mapper=_pandas_dtype)
    for field in table.schema:
        if pa.types.is_timestamp(field.type):
            column = frame[field.name]
            if field.type.tz is None:
                column = column.dt.tz_localize("UTC")
            frame[field.name] = column.dt.tz_convert("UTC").astype("datetime64[ns, UTC]")
    return frame

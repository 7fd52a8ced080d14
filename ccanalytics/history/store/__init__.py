"""The store on disk: Parquet files appended, listed, vetted, merged and compacted.

- ``_layout``: where files live, and which a reader should read;
- ``_schema``: what a file holds; frames to Arrow and back with nullable dtypes;
- ``_write``: appending files atomically (hidden temporary name, then a rename);
- ``_vetted``: the readers' cache of files found to be ours (``STORE/.vetted.json``);
- ``_merge``: a day's files as one table (what compaction writes and the day cache holds);
- ``_daycache``: the readers' day cache (``STORE/.day-cache``);
- ``_maintenance``: :func:`~ccanalytics.history.compact` and
  :func:`~ccanalytics.history.verify`.

The bottom of :mod:`ccanalytics.history`: it may import :mod:`ccanalytics.frames`, the
base modules (:mod:`ccanalytics.errors`, ``_files``) and itself; never the queries, the
collector or the alerts, which build on it (``[tool.importlinter]`` in pyproject.toml).
The names below are what they use: they import them from here, never from a module
whose name starts with ``_`` (a contract says so).
"""

from ccanalytics.history.store._daycache import DayCache
from ccanalytics.history.store._duckdb import Lease, connect
from ccanalytics.history.store._fs import FileKey, Location, dataset_of, open_store
from ccanalytics.history.store._layout import (
    Listing,
    holds_store,
    list_store,
    list_tables,
    new_snapshot_id,
    no_store_error,
    partition_day,
    store_folder,
    survey,
)
from ccanalytics.history.store._maintenance import CompactResult, StoreReport, compact, verify
from ccanalytics.history.store._rollup import (
    SUMMED,
    instant_rows_sql,
    instant_sums_sql,
    list_rollups,
    merged_rollups,
    rolled_days,
    rollup_params,
    snapshot_instants,
)
from ccanalytics.history.store._schema import (
    OK,
    SNAPSHOT_COLUMNS,
    TABLES,
    TimeSpan,
    empty_table,
    schema_key,
    to_pandas,
    vet_file,
)
from ccanalytics.history.store._vetted import Verdict, VetCache
from ccanalytics.history.store._write import append_frame, take_back

__all__ = [
    "OK",
    "SNAPSHOT_COLUMNS",
    "SUMMED",
    "TABLES",
    "CompactResult",
    "DayCache",
    "FileKey",
    "Lease",
    "Listing",
    "Location",
    "StoreReport",
    "TimeSpan",
    "Verdict",
    "VetCache",
    "append_frame",
    "compact",
    "connect",
    "dataset_of",
    "empty_table",
    "holds_store",
    "instant_rows_sql",
    "instant_sums_sql",
    "list_rollups",
    "list_store",
    "list_tables",
    "merged_rollups",
    "new_snapshot_id",
    "no_store_error",
    "open_store",
    "partition_day",
    "rolled_days",
    "rollup_params",
    "schema_key",
    "snapshot_instants",
    "store_folder",
    "survey",
    "take_back",
    "to_pandas",
    "verify",
    "vet_file",
]

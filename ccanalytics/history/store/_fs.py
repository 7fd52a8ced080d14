"""Opening a store: a folder or ``s3://bucket/prefix``, as a :class:`~._location.Location`
(:mod:`._local`, :mod:`._s3`), and a pyarrow dataset of its files.

The seam's parts are re-exported here: the store's logic imports them from this module.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from os import PathLike
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from ccanalytics.errors import StoreError
from ccanalytics.history.store._local import LocalLocation
from ccanalytics.history.store._location import TEMP_SUFFIX, FileKey, Location, Staged, temp_path
from ccanalytics.history.store._s3 import LOCK_STALE_SECONDS, S3Location

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

__all__ = [
    "LOCK_STALE_SECONDS",
    "TEMP_SUFFIX",
    "FileKey",
    "LocalLocation",
    "Location",
    "S3Location",
    "Staged",
    "dataset_of",
    "open_store",
    "temp_path",
]


def open_store(store: str | PathLike[str] | Location, *, resolve: bool = False) -> Location:
    """The :class:`Location` of ``store``: a folder, or ``s3://bucket/prefix[?endpoint_url=
    ...&region=...]``. ``resolve`` makes a local path absolute (what a reader keeps)."""
    if isinstance(store, Location):
        return store
    text = os.fspath(store)
    if isinstance(text, str) and text.startswith("s3://"):
        return _s3_location(text)
    path = Path(store)
    return LocalLocation(path.resolve() if resolve else path)


def _s3_location(uri: str) -> S3Location:
    parts = urlsplit(uri)
    if parts.username or parts.password:
        raise StoreError("an s3:// store takes no credentials in its address: use the AWS chain")
    bucket = parts.hostname or ""
    if len(bucket) < 3:
        raise StoreError(f"s3://{bucket}: a bucket name has 3 characters or more")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(query) - {"endpoint_url", "region"}
    if unknown:
        raise StoreError(
            f"s3://{bucket}: unknown option {sorted(unknown)[0]!r} (endpoint_url, region)"
        )
    return S3Location(
        bucket, parts.path, endpoint_url=query.get("endpoint_url"), region=query.get("region")
    )


def dataset_of(
    location: Location,
    files: Sequence[tuple[PurePath, str | None, int]],
    schema: pa.Schema,
    *,
    with_date: bool,
    fetch: bool = False,
) -> Any:
    """A pyarrow dataset of ``files`` (path, ``date`` partition, ``file_index``) with
    ``schema`` plus ``file_index`` (and ``date``), each filled per file: what DuckDB's
    ``read_parquet(hive_partitioning=...)`` and its ``file_index`` column give.
    ``fetch``: fetch an S3 store's small objects now (for files most questions read).

    Its fragments are read by C++ alone: the small objects of an S3 store that this
    process holds already (:meth:`S3Location.small_objects`: vetting a new file reads
    it whole) from memory, the others by pyarrow's own filesystem when a scan needs
    them. Never a filesystem written in Python: DuckDB starts a scan holding the GIL
    and waits on a lock of arrow's, which an arrow I/O thread calling Python would hold
    while it waits for the GIL, and the process would hang.
    """
    import datetime

    import pyarrow as pa
    import pyarrow.dataset as ds  # type: ignore[import-untyped]

    fs = location.filesystem()
    held = {}
    if isinstance(location, S3Location):
        held = location.small_objects([path for path, _, _ in files], fetch=fetch)
    fmt = ds.ParquetFileFormat()
    full = schema
    for name, kind in (("date", pa.date32()), ("file_index", pa.uint64())):
        if (with_date or name != "date") and name not in full.names:
            full = full.append(pa.field(name, kind))
    fragments = []
    for path, day, index in files:
        condition = ds.field("file_index") == pa.scalar(index, pa.uint64())
        if with_date and day is not None:
            when = datetime.date.fromisoformat(day)
            condition = condition & (ds.field("date") == pa.scalar(when, pa.date32()))
        if path in held:
            fragments.append(fmt.make_fragment(held[path], partition_expression=condition))
            continue
        size = location.key(path)[0] if isinstance(location, S3Location) else None
        fragments.append(
            fmt.make_fragment(str(path), fs, partition_expression=condition, file_size=size)
        )
    return ds.FileSystemDataset(fragments, full, fmt, fs)

"""A query that finds the store changed under it: run again, or say which file is bad.

A compaction may remove a listed file between the listing and the read; the query is
then run again on a fresh listing (:meth:`Catalog.retrying
<ccanalytics.history.queries._catalog.Catalog.retrying>`), with a growing pause. Any other
failure to read is a :class:`~ccanalytics.errors.StoreError` naming the bad file when
one is bad, and the query's own DuckDB error when none is.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ccanalytics.errors import StoreError
from ccanalytics.history.store import TABLES, list_store

if TYPE_CHECKING:
    from pathlib import PurePath

    import duckdb

    from ccanalytics.history.store import Location

__all__ = ["MAX_QUERY_ATTEMPTS", "RETRY_PAUSE_SECONDS", "store_error", "vanished"]

#: A query that keeps finding listed files gone is given up after this many runs
#: (then a StoreError: the store kept changing under it).
MAX_QUERY_ATTEMPTS = 8
#: The pause before the n-th new run is n times this: a compaction of a day takes a
#: moment, and running again at once would likely find the same files going.
RETRY_PAUSE_SECONDS = 0.05
_VANISHED = re.compile(
    r"No files found that match|No such file|Cannot open file"
    # An S3 object gone between the listing and the read (pyarrow's words for it):
    r"|Path does not exist|RESOURCE_NOT_FOUND|NO_SUCH_KEY|NoSuchKey",
    re.IGNORECASE,
)


def vanished(err: duckdb.Error) -> bool:
    """Whether DuckDB failed because a listed file is gone (a compaction removed it)."""
    return _VANISHED.search(str(err)) is not None


def store_error(location: Location, err: duckdb.Error) -> Exception:
    """A DuckDB failure as a :class:`StoreError` naming the bad file, if one is bad."""
    # DuckDB appends the query text and a caret line after "LINE n:": not for people.
    message = " ".join(re.split(r"\bLINE \d+:", str(err))[0].split())
    for table in TABLES:
        for path in list_store(location, table).files:
            if str(path) in message:
                where = location.at(path)
                return StoreError(f"cannot read store file {where}: {message}", where)
    bad = _first_unreadable(location)
    if bad is not None:
        return StoreError(f"cannot read store file {bad[0]}: {bad[1]}", bad[0])
    return err  # not the store's fault: the query's own error


def _first_unreadable(store: Location) -> tuple[PurePath | str, str] | None:
    """The first data file whose Parquet footer cannot be read, and why."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    for table in TABLES:
        for path in list_store(store, table).files:
            try:
                pq.read_metadata(store.source(path))
            except FileNotFoundError:
                continue
            except Exception as err:  # pyarrow raises ArrowInvalid, OSError, ...
                return store.at(path), " ".join(str(err).split())
    return None

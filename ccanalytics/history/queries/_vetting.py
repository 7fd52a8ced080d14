"""Refuse a file that is not a snapshot of ours, before DuckDB reads it as nulls.

Each listed file is vetted once (:func:`~ccanalytics.history.store._schema.vet_file`:
its footer only) and the verdict kept while the file is unchanged, in this History and
across processes (:mod:`~ccanalytics.history.store._vetted`, the store's readers' cache).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ccanalytics.errors import StoreError
from ccanalytics.history.store import TimeSpan, vet_file

if TYPE_CHECKING:
    from pathlib import PurePath

    from ccanalytics.history.store import FileKey, Listing, Location, Verdict, VetCache

__all__ = ["PARALLEL_VETTING_FROM", "vet"]

#: Vetting this many new files or more is spread over threads.
PARALLEL_VETTING_FROM = 64

#: A file to vet: its table, path, path relative to the store, and its file key.
_Todo = tuple[str, "PurePath", str, "FileKey"]


def vet(
    location: Location, cache: VetCache, listings: dict[str, Listing]
) -> tuple[dict[PurePath, Verdict], dict[PurePath, FileKey]]:
    """Each listed file's verdict (schema key and time span) and its file key.

    A file gone since the listing is left out (a compaction removed it: the query lists
    again); one that is not a snapshot of ours is a StoreError naming it. The cache
    keeps only the listed files; it is saved by the caller once the query has run.
    """
    verdicts: dict[PurePath, Verdict] = {}
    stats: dict[PurePath, FileKey] = {}
    todo: list[_Todo] = []
    listed: set[str] = set()
    prefix = len(str(location.root)) + 1  # listed paths are the store's + "/" + relative
    for table, listing in listings.items():
        for path in listing.files:
            relative = str(path)[prefix:]
            listed.add(relative)
            try:
                stat = location.key(path)
            except FileNotFoundError:
                continue
            stats[path] = stat
            known = cache.lookup(relative, stat)
            if known is not None:
                verdicts[path] = known
            else:
                todo.append((table, path, relative, stat))
    for (_, path, relative, stat), verdict in zip(todo, _judge(location, todo), strict=True):
        if verdict is None:
            continue  # vanished meanwhile
        problem, key, span = verdict
        if problem is not None:
            where = location.at(path)
            raise StoreError(
                f"cannot read store file {where}: {problem} (move it out of the store)", where
            )
        cache.record(relative, stat, (key, span))
        verdicts[path] = (key, span)
    cache.keep_only(listed)
    return verdicts, stats


def _judge(location: Location, todo: list[_Todo]) -> list[tuple[str | None, str, TimeSpan] | None]:
    """Each file's vetting, in threads when there are many (reading a footer releases the GIL)."""

    def one(item: _Todo) -> tuple[str | None, str, TimeSpan] | None:
        try:
            return vet_file(location.source(item[1]), item[0])
        except FileNotFoundError:
            return None

    if len(todo) < PARALLEL_VETTING_FROM:
        return [one(item) for item in todo]
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        return list(pool.map(one, todo))

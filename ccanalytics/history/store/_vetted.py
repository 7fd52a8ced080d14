"""Which store files a reader has already found to be snapshot files of ours.

Vetting a file (:func:`~ccanalytics.history.store._schema.vet_file`) reads its Parquet
footer: a fraction of a millisecond, but a month of uncompacted 5-minute snapshots is
26,000 files, and a fresh :class:`~ccanalytics.history.History` paid seconds for it
before its first query. The verdicts are kept in ``STORE/.vetted.json`` and reused by
the next reader, for a file only while it is exactly the file that was vetted: the
same relative path, size, modification and change times (ns) and inode (on S3: size,
last-modified and ETag, as listed: :data:`~ccanalytics.history.store._fs.FileKey`).
Any write, rename or replacement changes the change time or the inode (an object's
ETag or time), so a file that changed is vetted again; a file found foreign is never
recorded (it is refused every time).

The file is a cache and nothing else: it is written through the one atomic-write
replacement of the store's seam (:meth:`~ccanalytics.history.store._fs.Location.replace`), only when a reader vetted something
new, with only the files listed then (compacted-away files drop out). A store the
reader may not write (read-only, another user's) simply gets no cache, and a cache
that cannot be read or makes no sense (truncated, hand-edited, from a future version)
is ignored as if absent. It lies at the store's top level, outside every table's
folder, so no listing (:func:`~ccanalytics.history.store._layout.list_store`), ``verify``
or ``compact`` sees it, and other engines' globs (``STORE/pods/**/*.parquet``) skip it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import orjson

from ccanalytics.errors import StoreError
from ccanalytics.history.store._fs import FileKey, Location

if TYPE_CHECKING:
    from ccanalytics.history.store._schema import TimeSpan

__all__ = ["CACHE_NAME", "FileKey", "Verdict", "VetCache"]

#: The cache's file name, in the store's top folder.
CACHE_NAME = ".vetted.json"
#: Bumped when the cache's layout or the meaning of a schema key changes: an older
#: cache is then ignored (and rewritten), never misread.
CACHE_VERSION = 1

#: What a reader knows of a file found to be ours: its schema key and time span
#: (:func:`~ccanalytics.history.store._schema.vet_file`).
Verdict = tuple[str, "TimeSpan"]


@dataclass
class VetCache:
    """The verdicts of one store: relative path -> (file key, verdict)."""

    store: Location
    entries: dict[str, tuple[FileKey, Verdict]] = field(default_factory=dict)
    #: Whether :meth:`save` has anything the file does not.
    changed: bool = False

    @classmethod
    def load(cls, store: Location) -> VetCache:
        """The store's cache; empty when it is missing or unreadable in any way."""
        cache = cls(store)
        try:
            raw = orjson.loads(store.read_bytes(store.root / CACHE_NAME))
        except (OSError, StoreError, orjson.JSONDecodeError):
            return cache
        if not isinstance(raw, dict) or raw.get("version") != CACHE_VERSION:
            return cache
        files = raw.get("files")
        if not isinstance(files, dict):
            return cache
        for name, value in files.items():
            entry = _entry(value)
            if entry is not None:
                cache.entries[name] = entry
        return cache

    def lookup(self, relative: str, key: FileKey) -> Verdict | None:
        """The verdict recorded for this exact version of the file, or None."""
        entry = self.entries.get(relative)
        return entry[1] if entry is not None and entry[0] == key else None

    def record(self, relative: str, key: FileKey, verdict: Verdict) -> None:
        """Remember that this version of the file is one of ours, and what it holds."""
        if self.entries.get(relative) != (key, verdict):
            self.entries[relative] = (key, verdict)
            self.changed = True

    def keep_only(self, relatives: set[str]) -> None:
        """Forget files no longer listed (a compaction replaced them)."""
        gone = self.entries.keys() - relatives
        for name in gone:
            del self.entries[name]
        self.changed = self.changed or bool(gone)

    def save(self) -> None:
        """Write the cache if it changed; a store that cannot be written keeps none."""
        if not self.changed or not self.store.exists():
            return
        content = orjson.dumps(
            {
                "version": CACHE_VERSION,
                "files": {
                    name: [*key, schema, span]
                    for name, (key, (schema, span)) in self.entries.items()
                },
            }
        )
        try:
            self.store.replace(self.store.root / CACHE_NAME, lambda sink: sink.write(content))
        except OSError:
            return  # read-only or full: the next reader vets again, nothing is wrong
        self.changed = False


def _entry(value: object) -> tuple[FileKey, Verdict] | None:
    """One cache entry, ``[size, mtime_ns, ctime_ns, inode, schema_key, span]`` (a local
    file) or ``[size, mtime_ns, etag, schema_key, span]`` (an S3 object), ``span`` as
    :data:`TimeSpan` (``[lo, hi]``, ``[]`` or ``null``); None if malformed."""
    if type(value) is not list or len(value) not in (5, 6):
        return None
    *key, schema, raw_span = value
    # type() is: exact ints (a bool is no size), and the cheapest test for 26,000 entries.
    if type(schema) is not str:
        return None
    file_key: FileKey
    if len(key) == 4 and type(key[0]) is type(key[1]) is type(key[2]) is type(key[3]) is int:
        file_key = (key[0], key[1], key[2], key[3])
    elif len(key) == 3 and type(key[0]) is type(key[1]) is int and type(key[2]) is str:
        file_key = (key[0], key[1], key[2])
    else:
        return None
    span: TimeSpan
    if raw_span is None:
        span = None
    elif isinstance(raw_span, list) and not raw_span:
        span = ()
    elif isinstance(raw_span, list) and len(raw_span) == 2 and all(map(_is_int, raw_span)):
        span = (raw_span[0], raw_span[1])
    else:
        return None
    return file_key, (schema, span)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)

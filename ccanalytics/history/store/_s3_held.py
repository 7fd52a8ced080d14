"""Small S3 objects held in memory: read whole by one GET each, kept while unchanged."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import PurePath
from typing import TYPE_CHECKING

from ccanalytics.history.store._location import FileKey
from ccanalytics.history.store._s3_replies import arrow_owned

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

__all__ = ["FETCHES_AT_ONCE", "HELD_BYTES", "WHOLE_READ_BYTES", "HeldObjects"]

#: An object up to this size is read whole by one request (a 5-minute snapshot file is
#: tens of kB): pyarrow's own reads are a HEAD and a GET or more.
WHOLE_READ_BYTES = 1 << 20
#: At most this many bytes of small objects are held in memory by one S3 store (a day
#: of 5-minute snapshots of a few clusters is a few MB), the least recently used let go
#: first; beyond it a dataset reads them through pyarrow.
HELD_BYTES = 128 << 20
#: Small objects fetched at once (S3 answers each GET in tens of ms, whatever its size).
FETCHES_AT_ONCE = 8


class HeldObjects:
    """The bytes of an S3 store's small objects, by path, with the key each was fetched
    at; ``keys`` are the store's objects as its latest listings saw them."""

    def __init__(self, keys: Mapping[PurePath, FileKey], read: Callable[[PurePath], bytes]) -> None:
        self._keys = keys
        self._read = read
        #: Least recently used first.
        self.buffers: dict[PurePath, tuple[FileKey, pa.Buffer]] = {}
        self._lock = threading.Lock()

    def small(self, path: PurePath) -> bool:
        """Whether the latest listing found ``path`` small enough to read whole."""
        key = self._keys.get(path)
        return key is not None and key[0] <= WHOLE_READ_BYTES

    def take(self, paths: Sequence[PurePath], *, fetch: bool) -> dict[PurePath, pa.Buffer]:
        """See :meth:`~._s3.S3Location.small_objects`."""
        held = self.buffers  # least recently used first
        asked = dict.fromkeys(paths)
        with self._lock:  # the vetting reads footers from several threads
            for path in asked:
                if path in held:
                    held[path] = held.pop(path)  # used now: the last to be let go
            wanted = {p: self._keys[p] for p in asked if fetch and p not in held and self.small(p)}
            need = sum(key[0] for key in wanted.values())
            size = sum(buffer.size for _, buffer in held.values())
            for path in list(held):
                key, buffer = held[path]
                # Gone or replaced since it was fetched (a compaction), or room is needed.
                if self._keys.get(path) != key or (size + need > HELD_BYTES and path not in asked):
                    del held[path]
                    size -= buffer.size
            while wanted and size + need > HELD_BYTES:  # the rest left to pyarrow's reads
                need -= wanted.popitem()[1][0]
        fetched = [
            (path, wanted[path], arrow_owned(data))
            for path, data in zip(wanted, self._fetch(list(wanted)), strict=True)
        ]
        with self._lock:
            found = {path: held[path][1] for path in asked if path in held}
            for path, key, buffer in fetched:
                held[path] = (key, buffer)
                found[path] = buffer  # even if another thread let it go meanwhile
        return found

    def _fetch(self, paths: list[PurePath]) -> list[bytes]:
        """Each object's bytes, several requests at once when there are several."""
        if len(paths) < 2:
            return [self._read(path) for path in paths]
        with ThreadPoolExecutor(FETCHES_AT_ONCE, thread_name_prefix="ccanalytics-s3") as pool:
            return list(pool.map(self._read, paths))

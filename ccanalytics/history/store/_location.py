"""Where a store lives: a local folder or ``s3://bucket/prefix``, behind one small seam.

Every byte the store's logic (:mod:`._layout`, :mod:`._write`, :mod:`._maintenance`,
:mod:`._vetted`, :mod:`._daycache`, the readers and the alert state) reads or writes
goes through a :class:`Location`: listing a folder, reading a file, creating a new one,
replacing a cache, deleting, a file's identity (:data:`FileKey`) and a lock. The logic
is written once; only these primitives differ:

- :class:`~._local.LocalLocation` is the store as it always was: ``os.scandir``, a hidden
  temporary file renamed over its final name (:mod:`ccanalytics._files`), ``flock``.
- :class:`~._s3.S3Location` has no rename: a file becomes visible by one upload to its final
  key, made only if no object has that key (``If-None-Match: *``), so a reader sees the
  whole object or nothing and nothing existing is ever overwritten; a lock is a
  create-if-absent object that a stale holder's successor takes over with
  ``If-Match`` (one of two rivals wins). Parquet is read through pyarrow's
  ``S3FileSystem``; the conditional writes need botocore (the ``s3`` extra), because
  pyarrow's output streams cannot send ``If-None-Match``.

Paths are :class:`~pathlib.PurePath` values: a :class:`~pathlib.Path` locally, a
``PurePosixPath("bucket/prefix/...")`` on S3 (what pyarrow's filesystem takes), so
``part / name``, ``.name`` and ``.parent`` mean the same on both.

Credentials and the endpoint come from the standard AWS chain (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``/``AWS_DEFAULT_REGION``,
``AWS_ENDPOINT_URL``, then the config files and ``AWS_PROFILE``), read by botocore and
pyarrow themselves: this package never holds a secret. An explicit endpoint is the
URI's query: ``s3://bucket/prefix?endpoint_url=http://127.0.0.1:9000`` (and
``region=``). Nothing here puts a credential in a repr, a message or a file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    import pyarrow.fs as pafs  # type: ignore[import-untyped]

__all__ = ["TEMP_SUFFIX", "FileKey", "Fill", "Location", "Staged", "temp_path"]

#: What identifies one version of a file. Locally: size, mtime_ns, ctime_ns, inode
#: (any write, rename or replacement changes one). On S3: size, last-modified (ns) and
#: the ETag. Index 1 is the modification time (ns) on both.
FileKey = tuple[int, int, int, int] | tuple[int, int, str]
#: What fills a new file: called with the open binary file.
Fill = Callable[[BinaryIO], object]
#: The end of a hidden file being written (locally), or left by a crash.
TEMP_SUFFIX = ".tmp"


def temp_path(final: Path) -> Path:
    """The hidden name a file is written under before it is renamed to ``final``."""
    return final.with_name(f".{final.name}{TEMP_SUFFIX}")


class Location:
    """The primitives the store's logic uses (see the module docstring)."""

    #: The store's top folder (local: absolute; S3: ``bucket/prefix``).
    root: PurePath
    #: Whether DuckDB may read the files by their paths (else a pyarrow dataset).
    local: bool

    def show(self, path: PurePath) -> str:
        """``path`` as a person would type it (S3: with ``s3://``)."""
        raise NotImplementedError

    def at(self, path: PurePath) -> PurePath | str:
        """What a :class:`StoreError` names as its ``path``: the path locally, the
        ``s3://`` address on S3."""
        return self.show(path)

    def check(self) -> None:
        """:class:`StoreError` when the store exists and is not a folder."""

    def exists(self) -> bool:
        """Whether the store exists at all (S3: its bucket)."""
        raise NotImplementedError

    def partitions(self, table_dir: PurePath) -> list[tuple[PurePath, bool]]:
        """The ``date=`` folders of a table, sorted, each with whether it lies outside."""
        raise NotImplementedError

    def entries(self, folder: PurePath) -> list[tuple[str, bool]]:
        """The names in ``folder``, sorted, each with whether it is a link outside."""
        raise NotImplementedError

    def entries_of(self, folders: list[PurePath]) -> dict[PurePath, list[tuple[str, bool]]]:
        """:meth:`entries` of each of ``folders`` (S3: of a table's partitions in one
        listing of the table, not one request per day)."""
        return {folder: self.entries(folder) for folder in folders}

    def table_listing(
        self, table_dir: PurePath
    ) -> tuple[list[tuple[PurePath, bool]], dict[PurePath, list[tuple[str, bool]]]]:
        """:meth:`partitions` of a table and the :meth:`entries_of` those not outside
        (S3: both from one listing of the table)."""
        partitions = self.partitions(table_dir)
        return partitions, self.entries_of([part for part, out in partitions if not out])

    def surveyed(self, first: PurePath | None = None) -> contextlib.AbstractContextManager[None]:
        """Within this block, the listings of a reader's first pass (:meth:`table_listing`,
        :meth:`partitions`, :meth:`entries`, :meth:`walk`) may all be answered by one
        listing of the whole store, made at the first of them (S3: one request, not
        one per table and folder). :meth:`entries_of` (the markers' pass, which must
        come after the data files' listing) always lists afresh; so does any listing
        after this location wrote or deleted something. Locally nothing changes.

        ``first``: a folder whose files must be listed before every other folder's (the
        snapshots' records, :mod:`._layout`). A listing of many pages comes in key
        order, so that folder is then listed by a request of its own first."""
        return contextlib.nullcontext()

    def outside(self, path: PurePath) -> bool:
        """Whether ``path`` is a symbolic link out of the store (never on S3)."""
        return False

    def read_bytes(self, path: PurePath) -> bytes:
        """The file's bytes; ``FileNotFoundError`` when it is gone; when it cannot be
        read, ``OSError`` locally, a :class:`StoreError` naming it on S3 (after retries)."""
        raise NotImplementedError

    def key(self, path: PurePath) -> FileKey:
        """The file's :data:`FileKey`; ``FileNotFoundError`` when it is gone."""
        raise NotImplementedError

    def source(self, path: PurePath) -> Any:
        """What pyarrow's Parquet readers take for ``path`` (a path, or an open file)."""
        raise NotImplementedError

    def create(self, path: PurePath, write: Fill) -> None:
        """A new file at ``path``, visible whole or not at all, filled by ``write``.

        Locally through :func:`ccanalytics._files.write_atomic` (a hidden temporary
        file renamed); on S3 one upload made only if the key is free
        (``FileExistsError`` when it is not). ``OSError`` on failure.
        """
        raise NotImplementedError

    def replace(self, path: PurePath, write: Fill) -> None:
        """Replace (or create) ``path`` atomically: caches and the alert state."""
        raise NotImplementedError

    def create_durably(self, path: PurePath, write: Fill) -> None:
        """:meth:`create`, and locally the rename synced too (compaction's ordering needs it)."""
        self.create(path, write)

    def sync_folder(self, folder: PurePath) -> None:
        """Make the renames and removals in ``folder`` durable (no-op on S3: each request is)."""

    def stage(self, final: PurePath, write: Fill) -> Staged:
        """Step 1 of a publication in two steps (compaction): fill, not yet visible."""
        raise NotImplementedError

    def publish(self, staged: Staged) -> None:
        """Make a staged file visible under its final name (never over another)."""
        raise NotImplementedError

    def discard(self, staged: Staged) -> None:
        """Forget a staged file that will not be published."""

    def delete(self, path: PurePath) -> None:
        """Remove ``path`` (gone already is fine)."""
        raise NotImplementedError

    def delete_folder(self, folder: PurePath) -> None:
        """Remove an empty folder (no-op where folders do not exist); errors are ignored."""

    def walk(self, folder: PurePath, pattern: str) -> list[PurePath]:
        """Every file under ``folder`` matching the glob ``pattern`` (``*/date=*/*``)."""
        raise NotImplementedError

    def lock(self, name: str) -> contextlib.AbstractContextManager[None]:
        """An exclusive lock named ``name`` in the store's top folder."""
        raise NotImplementedError

    def make_dirs(self, folder: PurePath) -> None:
        """Create ``folder`` and its parents (no-op where folders do not exist)."""

    def filesystem(self) -> pafs.FileSystem:
        """pyarrow's filesystem over this store's files."""
        raise NotImplementedError


@dataclass(frozen=True)
class Staged:
    """A file written but not yet visible (:meth:`Location.stage`)."""

    final: PurePath
    #: Locally the hidden temporary file; on S3 None (the bytes are in ``data``).
    temp: Path | None
    data: bytes = b""

    def metadata(self) -> Any:
        """The staged Parquet file's footer (to check its row count before publishing)."""
        import pyarrow as pa
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        return pq.read_metadata(self.temp if self.temp is not None else pa.BufferReader(self.data))

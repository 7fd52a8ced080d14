"""Where a store lives: a local folder or ``s3://bucket/prefix``, behind one small seam.

Every byte the store's logic (:mod:`._layout`, :mod:`._write`, :mod:`._maintenance`,
:mod:`._vetted`, :mod:`._daycache`, the readers and the alert state) reads or writes
goes through a :class:`Location`: listing a folder, reading a file, creating a new one,
replacing a cache, deleting, a file's identity (:data:`FileKey`) and a lock. The logic
is written once; only these primitives differ:

- :class:`LocalLocation` is the store as it always was: ``os.scandir``, a hidden
  temporary file renamed over its final name (:mod:`ccanalytics._files`), ``flock``.
- :class:`S3Location` has no rename: a file becomes visible by one upload to its final
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

import bisect
import contextlib
import errno
import functools
import io
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from os import PathLike
from pathlib import Path, PurePath, PurePosixPath
from typing import TYPE_CHECKING, Any, BinaryIO, overload
from urllib.parse import parse_qs, quote, urlsplit

from ccanalytics._files import fsync_dir, write_atomic, write_new
from ccanalytics.errors import StoreError

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.fs as pafs  # type: ignore[import-untyped]

__all__ = [
    "LOCK_STALE_SECONDS",
    "TEMP_SUFFIX",
    "FileKey",
    "LocalLocation",
    "Location",
    "S3Location",
    "dataset_of",
    "open_store",
    "temp_path",
]

#: What identifies one version of a file. Locally: size, mtime_ns, ctime_ns, inode
#: (any write, rename or replacement changes one). On S3: size, last-modified (ns) and
#: the ETag. Index 1 is the modification time (ns) on both.
FileKey = tuple[int, int, int, int] | tuple[int, int, str]
#: An S3 lock object older than this is a killed holder's: the next one takes it over.
LOCK_STALE_SECONDS = 600.0
#: An object up to this size is read whole by one request (a 5-minute snapshot file is
#: tens of kB): pyarrow's own reads are a HEAD and a GET or more.
WHOLE_READ_BYTES = 1 << 20
#: At most this many bytes of small objects are held in memory by one S3 store (a day
#: of 5-minute snapshots of a few clusters is a few MB), the least recently used let go
#: first; beyond it a dataset reads them through pyarrow.
HELD_BYTES = 128 << 20
#: Small objects fetched at once (S3 answers each GET in tens of ms, whatever its size).
FETCHES_AT_ONCE = 8
#: A store surveyed with fewer objects than this (one page of a listing) has its
#: markers' pass listed by botocore, not pyarrow (see S3Location._names).
SMALL_LISTING = 1000
#: Keys a listing request asks for at most (S3's own maximum).
LIST_PAGE_SIZE = 1000
#: Tries of one S3 read whose download was cut short (see S3Location.read_bytes), and
#: the pause before the second (doubled before each next: 0.1, 0.2, 0.4 s).
READ_ATTEMPTS = 4
READ_PAUSE_SECONDS = 0.1
#: How long to wait for an S3 lock before giving up with a StoreError.
LOCK_WAIT_SECONDS = 900.0
_WRITE = Callable[[BinaryIO], object]
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

    def create(self, path: PurePath, write: _WRITE) -> None:
        """A new file at ``path``, visible whole or not at all, filled by ``write``.

        Locally through :func:`ccanalytics._files.write_atomic` (a hidden temporary
        file renamed); on S3 one upload made only if the key is free
        (``FileExistsError`` when it is not). ``OSError`` on failure.
        """
        raise NotImplementedError

    def replace(self, path: PurePath, write: _WRITE) -> None:
        """Replace (or create) ``path`` atomically: caches and the alert state."""
        raise NotImplementedError

    def create_durably(self, path: PurePath, write: _WRITE) -> None:
        """:meth:`create`, and locally the rename synced too (compaction's ordering needs it)."""
        self.create(path, write)

    def sync_folder(self, folder: PurePath) -> None:
        """Make the renames and removals in ``folder`` durable (no-op on S3: each request is)."""

    def stage(self, final: PurePath, write: _WRITE) -> Staged:
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


# --------------------------------------------------------------------------- local


class LocalLocation(Location):
    """A store in a local folder (or one mounted from a shared file system)."""

    local = True

    def __init__(self, root: Path) -> None:
        self.root = root
        self._real = os.path.realpath(root)

    def __repr__(self) -> str:
        return f"LocalLocation({str(self.root)!r})"

    def show(self, path: PurePath) -> str:
        return str(path)

    def at(self, path: PurePath) -> PurePath | str:
        return path

    def check(self) -> None:
        root = Path(self.root)
        if root.exists() and not root.is_dir():
            raise StoreError(f"the store {root} is not a folder", root)

    def exists(self) -> bool:
        return Path(self.root).is_dir()

    def outside(self, path: PurePath) -> bool:
        local = Path(path)
        if not local.is_symlink():
            return False
        real = os.path.realpath(local)
        return real != self._real and not real.startswith(self._real + os.sep)

    def partitions(self, table_dir: PurePath) -> list[tuple[PurePath, bool]]:
        try:
            found = list(os.scandir(table_dir))
        except FileNotFoundError:
            return []
        except OSError as err:
            raise _listing_error(table_dir, err) from None
        folders = sorted(Path(e.path) for e in found if e.name.startswith("date=") and e.is_dir())
        return [(part, self.outside(part)) for part in folders]

    def entries(self, folder: PurePath) -> list[tuple[str, bool]]:
        try:
            found = sorted(os.scandir(folder), key=lambda e: e.name)
        except FileNotFoundError:
            return []
        except OSError as err:
            raise _listing_error(folder, err) from None
        return [(e.name, e.is_symlink() and self.outside(Path(e.path))) for e in found]

    def read_bytes(self, path: PurePath) -> bytes:
        return Path(path).read_bytes()

    def key(self, path: PurePath) -> FileKey:
        st = os.stat(path)
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    def source(self, path: PurePath) -> Any:
        return path

    def create(self, path: PurePath, write: _WRITE) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(Path(path), write)

    def replace(self, path: PurePath, write: _WRITE) -> None:
        write_atomic(Path(path), write)

    def create_durably(self, path: PurePath, write: _WRITE) -> None:
        write_atomic(Path(path), write, durable_rename=True)

    def sync_folder(self, folder: PurePath) -> None:
        fsync_dir(Path(folder))

    def stage(self, final: PurePath, write: _WRITE) -> Staged:
        temp = temp_path(Path(final))
        try:
            write_new(temp, write)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        return Staged(final, temp)

    def publish(self, staged: Staged) -> None:
        assert staged.temp is not None
        os.replace(staged.temp, staged.final)
        fsync_dir(staged.temp.parent)

    def discard(self, staged: Staged) -> None:
        if staged.temp is not None:
            staged.temp.unlink(missing_ok=True)

    def delete(self, path: PurePath) -> None:
        Path(path).unlink(missing_ok=True)

    def delete_folder(self, folder: PurePath) -> None:
        with contextlib.suppress(OSError):
            Path(folder).rmdir()

    def walk(self, folder: PurePath, pattern: str) -> list[PurePath]:
        return list(Path(folder).glob(pattern))

    def make_dirs(self, folder: PurePath) -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        import fcntl

        fd = os.open(Path(self.root) / name, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def filesystem(self) -> pafs.FileSystem:
        import pyarrow.fs as pafs

        return pafs.LocalFileSystem()


def _listing_error(folder: PurePath, err: OSError) -> StoreError:
    return StoreError(f"cannot list the store folder {folder}: {err.strerror or err}", folder)


# --------------------------------------------------------------------------- S3


@functools.cache
def _botocore_loader() -> Any:
    """One botocore data loader for every S3 client this process makes.

    It reads and parses S3's service model (~0.15 s, for every client of a new
    session) once; each session still resolves its own credentials and settings, so a
    key rotated between two stores is the one the second uses.
    """
    import botocore.session  # type: ignore[import-untyped]

    return botocore.session.get_session().get_component("data_loader")


class S3Location(Location):
    """A store under ``s3://bucket/prefix`` (any S3-compatible service)."""

    local = False

    def __init__(self, bucket: str, prefix: str, *, endpoint_url: str | None = None,
                 region: str | None = None) -> None:  # fmt: skip
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.root = PurePosixPath(bucket, self.prefix) if self.prefix else PurePosixPath(bucket)
        self.endpoint_url = endpoint_url
        self.region = region
        self._client: Any = None
        self._fs: pafs.FileSystem | None = None
        #: Small objects' bytes by path, with the key they were fetched at (see
        #: :meth:`small_objects`).
        self._held: dict[PurePath, tuple[FileKey, pa.Buffer]] = {}
        self._held_lock = threading.Lock()
        #: Keys of the objects seen by the latest listings (no HEAD per file to vet it).
        self._keys: dict[PurePath, FileKey] = {}
        #: Inside :meth:`surveyed`: whether a survey may answer, and the one made (the
        #: store's objects, sorted by key, and those keys, for bisecting).
        self._surveying = False
        self._survey: tuple[list[dict[str, Any]], list[str]] | None = None
        #: The folder a survey lists before the others (see :meth:`Location.surveyed`).
        self._first: PurePath | None = None

    def __repr__(self) -> str:
        return f"S3Location({self.show(self.root)!r})"

    # -- clients (lazy: botocore and pyarrow's S3 take a moment to start) --------------

    @property
    def client(self) -> Any:
        if self._client is None:
            # botocore's own session, not boto3's: the same client and AWS chain, without
            # the ~0.2 s import of boto3 and its s3transfer, which nothing here uses.
            try:
                import botocore.session
                from botocore.config import Config  # type: ignore[import-untyped]
            except ImportError:
                raise StoreError(
                    "an s3:// store needs botocore: pip install 'ccanalytics[s3]'",
                    self.show(self.root),
                ) from None
            session = botocore.session.get_session()
            session.register_component("data_loader", _botocore_loader())
            session.get_component("response_parser_factory").set_parser_defaults(
                timestamp_parser=_timestamp
            )
            self._client = session.create_client(
                "s3",
                endpoint_url=self.endpoint_url,
                region_name=self.region,
                config=Config(retries={"mode": "standard", "max_attempts": 5}),
            )
        return self._client

    def filesystem(self) -> pafs.FileSystem:
        if self._fs is None:
            import pyarrow.fs as pafs

            region = self.region or _env_region()
            if self.endpoint_url is None:
                # from_uri honours AWS_ENDPOINT_URL (the constructor does not); a known
                # region spares it the request that would look the bucket's up.
                query = f"?region={quote(region)}" if region else ""
                fs, _ = pafs.FileSystem.from_uri(f"s3://{self.bucket}{query}")
            else:
                parts = urlsplit(self.endpoint_url)
                fs = pafs.S3FileSystem(
                    endpoint_override=parts.netloc, scheme=parts.scheme or "https", region=region
                )
            self._fs = fs
        return self._fs

    def small_objects(
        self, paths: Sequence[PurePath], *, fetch: bool = True
    ) -> dict[PurePath, pa.Buffer]:
        """The bytes of each of ``paths`` that the latest listing found small (up to
        :data:`WHOLE_READ_BYTES`), fetched by one GET each (several at once), where
        pyarrow would read a footer, then the columns: two requests or more.
        ``fetch=False``: only those held already (a dataset's, see :func:`dataset_of`).

        Kept while the object is unchanged: an object is never overwritten, so its key
        (ETag, size) names its bytes. Up to :data:`HELD_BYTES` in all, the least
        recently used let go first (those gone are never used again); the rest are
        left to pyarrow's S3 reads. A listed object gone raises ``FileNotFoundError``
        (a query lists again).
        """
        held = self._held  # least recently used first
        asked = dict.fromkeys(paths)
        with self._held_lock:  # the vetting reads footers from several threads
            for path in asked:
                if path in held:
                    held[path] = held.pop(path)  # used now: the last to be let go
            wanted = {
                p: self._keys[p] for p in asked if fetch and p not in held and self._is_small(p)
            }
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
            (path, wanted[path], _arrow_owned(data))
            for path, data in zip(wanted, self._fetch(list(wanted)), strict=True)
        ]
        with self._held_lock:
            found = {path: held[path][1] for path in asked if path in held}
            for path, key, buffer in fetched:
                held[path] = (key, buffer)
                found[path] = buffer  # even if another thread let it go meanwhile
        return found

    def _is_small(self, path: PurePath) -> bool:
        key = self._keys.get(path)
        return key is not None and key[0] <= WHOLE_READ_BYTES

    def _fetch(self, paths: list[PurePath]) -> list[bytes]:
        """Each object's bytes, several requests at once when there are several."""
        if len(paths) < 2:
            return [self.read_bytes(path) for path in paths]
        with ThreadPoolExecutor(FETCHES_AT_ONCE, thread_name_prefix="ccanalytics-s3") as pool:
            return list(pool.map(self.read_bytes, paths))

    # -- the primitives ---------------------------------------------------------------

    def show(self, path: PurePath) -> str:
        return f"s3://{path}"

    def exists(self) -> bool:
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except Exception:  # missing, or not ours: nothing to read either way
            return False
        return True

    def _object(self, path: PurePath) -> str:
        return str(PurePosixPath(*path.parts[1:]))

    def _prefix(self, folder: PurePath) -> str:
        """The key prefix of the objects under ``folder`` (``""``: the whole bucket)."""
        return self._object(folder) + "/" if folder != PurePosixPath(self.bucket) else ""

    @contextlib.contextmanager
    def surveyed(self, first: PurePath | None = None) -> Iterator[None]:
        self._surveying, self._survey, self._first = True, None, first
        try:
            yield
        finally:
            self._surveying, self._survey, self._first = False, None, None

    def _list(self, folder: PurePath, *, delimiter: bool) -> tuple[list[dict[str, Any]], list[str]]:
        if self._surveying and self._within(folder):
            return self._from_survey(folder, delimiter=delimiter)
        return self._request_listing(folder, delimiter=delimiter)

    def _within(self, folder: PurePath) -> bool:
        return folder == self.root or self.root in folder.parents

    def _from_survey(
        self, folder: PurePath, *, delimiter: bool
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """What a listing of ``folder`` would return, cut from the survey of the store."""
        if self._survey is None:
            objects = self._survey_objects()
            objects.sort(key=lambda obj: str(obj["Key"]))
            self._survey = objects, [obj["Key"] for obj in objects]
        objects, keys = self._survey
        prefix = self._prefix(folder)
        # Sorted keys: those under one prefix are one contiguous run.
        start = bisect.bisect_left(keys, prefix)
        end = start
        while end < len(keys) and keys[end].startswith(prefix):
            end += 1
        if not delimiter:
            return objects[start:end], []
        direct: list[dict[str, Any]] = []
        folders: list[str] = []
        for obj in objects[start:end]:
            head, slash, _ = obj["Key"][len(prefix) :].partition("/")
            if not slash:
                direct.append(obj)
            elif not folders or folders[-1] != prefix + head + "/":
                folders.append(prefix + head + "/")
        return direct, folders

    def _survey_objects(self) -> list[dict[str, Any]]:
        """Every object of the store, with the ``first`` folder's listed before the rest.

        One page is one request, read whole. Pages after it come in key order, the
        ``first`` folder's keys possibly last: then that folder is listed on its own
        first and its objects taken from that listing, the rest from the whole one.
        """
        if self._first is None:
            return self._request_listing(self.root, delimiter=False)[0]
        objects, _, more = self._request_listing(self.root, delimiter=False, pages=1)
        if not more:
            return objects
        first, _ = self._request_listing(self._first, delimiter=False)
        everything, _ = self._request_listing(self.root, delimiter=False)
        prefix = self._prefix(self._first)
        return [obj for obj in everything if not obj["Key"].startswith(prefix)] + first

    @overload
    def _request_listing(
        self, folder: PurePath, *, delimiter: bool
    ) -> tuple[list[dict[str, Any]], list[str]]: ...

    @overload
    def _request_listing(
        self, folder: PurePath, *, delimiter: bool, pages: int
    ) -> tuple[list[dict[str, Any]], list[str], bool]: ...

    def _request_listing(
        self, folder: PurePath, *, delimiter: bool, pages: int | None = None
    ) -> tuple[list[dict[str, Any]], list[str]] | tuple[list[dict[str, Any]], list[str], bool]:
        """The objects and subfolders under ``folder``; with ``pages``, at most that many
        pages of them and whether more follow."""
        prefix = self._prefix(folder)
        objects: list[dict[str, Any]] = []
        folders: list[str] = []
        options: dict[str, Any] = {
            "Bucket": self.bucket,
            "Prefix": prefix,
            "PaginationConfig": {"PageSize": LIST_PAGE_SIZE},
        }
        if delimiter:
            options["Delimiter"] = "/"
        more = False
        try:
            for count, page in enumerate(
                self.client.get_paginator("list_objects_v2").paginate(**options), 1
            ):
                objects += page.get("Contents", ())
                folders += [p["Prefix"] for p in page.get("CommonPrefixes", ())]
                if pages is not None and count >= pages:
                    more = bool(page.get("IsTruncated"))
                    break
        except Exception as err:
            raise StoreError(
                f"cannot list {self.show(folder)}: {_aws_reason(err)}", self.show(folder)
            ) from None
        for obj in objects:
            path = PurePosixPath(self.bucket, obj["Key"])
            self._keys[path] = _s3_key(obj["Size"], obj["LastModified"], obj["ETag"])
        return (objects, folders) if pages is None else (objects, folders, more)

    def partitions(self, table_dir: PurePath) -> list[tuple[PurePath, bool]]:
        _, folders = self._list(table_dir, delimiter=True)
        names = sorted(f.rstrip("/").rsplit("/", 1)[-1] for f in folders)
        return [(table_dir / n, False) for n in names if n.startswith("date=")]

    def entries(self, folder: PurePath) -> list[tuple[str, bool]]:
        objects, _ = self._list(folder, delimiter=True)
        return sorted((obj["Key"].rsplit("/", 1)[-1], False) for obj in objects)

    def table_listing(
        self, table_dir: PurePath
    ) -> tuple[list[tuple[PurePath, bool]], dict[PurePath, list[tuple[str, bool]]]]:
        objects, _ = self._list(table_dir, delimiter=False)
        found: dict[PurePath, list[tuple[str, bool]]] = {}
        for obj in objects:
            path = PurePosixPath(self.bucket, obj["Key"])
            if path.parent.parent == table_dir and path.parent.name.startswith("date="):
                found.setdefault(path.parent, []).append((path.name, False))
        for names in found.values():
            names.sort()
        folders = sorted(found)
        return [(folder, False) for folder in folders], {
            folder: found[folder] for folder in folders
        }

    def entries_of(self, folders: list[PurePath]) -> dict[PurePath, list[tuple[str, bool]]]:
        # Names only (the markers' pass of a listing), and one listing for all: of the
        # folders' nearest common folder (a table's, or the store's for every table).
        found: dict[PurePath, list[tuple[str, bool]]] = {folder: [] for folder in folders}
        if not folders:
            return found
        common = PurePosixPath(os.path.commonpath([str(folder) for folder in folders]))
        recursive = any(folder != common for folder in folders)
        for path in self._names(common, recursive=recursive):
            names = found.get(path.parent)
            if names is not None:
                names.append((path.name, False))
        for names in found.values():
            names.sort()
        return found

    def _names(self, folder: PurePath, *, recursive: bool) -> list[PurePath]:
        """The files under ``folder`` (all its subfolders' too if ``recursive``).

        Through pyarrow's C++ client when the store is large: it lists a page several
        times faster than botocore parses the same XML, and no ETag is wanted here.
        When this pass's survey found one page or less, through botocore: its client
        is running already, and starting pyarrow's costs more than the page's parse.
        """
        if self._survey is not None and len(self._survey[1]) < SMALL_LISTING:
            objects, _ = self._request_listing(folder, delimiter=not recursive)
            return [PurePosixPath(self.bucket, obj["Key"]) for obj in objects]
        return self._pyarrow_names(folder, recursive=recursive)

    def _pyarrow_names(self, folder: PurePath, *, recursive: bool) -> list[PurePath]:
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(str(folder), allow_not_found=True, recursive=recursive)
        try:
            infos = self.filesystem().get_file_info(selector)
        except OSError as err:
            where = self.show(folder)
            raise StoreError(f"cannot list {where}: {' '.join(str(err).split())}", where) from None
        return [PurePosixPath(i.path) for i in infos if i.type == pafs.FileType.File]

    def read_bytes(self, path: PurePath) -> bytes:
        """The object's bytes; ``FileNotFoundError`` when it is gone, else a
        :class:`StoreError` naming it when it cannot be read.

        botocore retries a request that fails (5 retries), not a body cut short after
        its answer began (a truncated or reset download): such a read is tried again,
        up to :data:`READ_ATTEMPTS` times in all, with a pause doubling from
        :data:`READ_PAUSE_SECONDS`.
        """
        where = self.show(path)
        attempt = 1
        while True:
            try:
                reply = self.client.get_object(Bucket=self.bucket, Key=self._object(path))
            except Exception as err:  # botocore retried it already
                raise _read_error(err, where) from None
            try:
                data: bytes = reply["Body"].read()
                return data
            except Exception as err:
                if attempt >= READ_ATTEMPTS:
                    raise _read_error(err, where, tries=attempt) from None
            time.sleep(READ_PAUSE_SECONDS * 2 ** (attempt - 1))
            attempt += 1

    def key(self, path: PurePath) -> FileKey:
        known = self._keys.get(path)
        if known is not None:
            return known
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self._object(path))
        except Exception as err:
            raise _os_error(err, self.show(path)) from None
        key = _s3_key(head["ContentLength"], head["LastModified"], head["ETag"])
        self._keys[path] = key
        return key

    def source(self, path: PurePath) -> Any:
        import pyarrow as pa

        if self._is_small(path):  # one GET, not a HEAD and GETs
            # Held for the query that reads it next (a new file's footer is vetted first).
            buffer = self.small_objects([path]).get(path)
            return pa.BufferReader(buffer if buffer is not None else self.read_bytes(path))
        try:
            return self.filesystem().open_input_file(str(path))
        except OSError as err:
            if "does not exist" in str(err):
                raise FileNotFoundError(errno.ENOENT, "no such object", self.show(path)) from None
            raise

    def _put(self, path: PurePath, data: bytes, **condition: str) -> str:
        self._survey = None  # a listing after a write lists afresh
        try:
            reply = self.client.put_object(
                Bucket=self.bucket, Key=self._object(path), Body=data, **condition
            )
        except Exception as err:
            raise _os_error(err, self.show(path)) from None
        etag: str = reply.get("ETag", "")
        return etag

    def _put_new(self, path: PurePath, data: bytes) -> str:
        """Upload ``data`` to ``path`` only if no object has that key; its ETag.

        A lost answer (a 500 or a reset after S3 stored the object) makes botocore
        send the PUT again, and S3 answers the retry 412: the object there is then
        ours if it holds exactly ``data``, and that is a success. Any other object at
        the key is ``FileExistsError``.
        """
        try:
            return self._put(path, data, IfNoneMatch="*")
        except FileExistsError:
            etag = self._etag_if_holds(path, data)
            if etag is None:
                raise
            return etag

    def _etag_if_holds(self, path: PurePath, data: bytes) -> str | None:
        """The ETag of the object at ``path`` if it holds exactly ``data``, else None.

        A single-part upload's ETag is its MD5, which settles it in one HEAD; an ETag of
        another kind (an encrypted bucket's, another service's) of an object of the
        same size is settled by its bytes.
        """
        import hashlib

        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self._object(path))
        except Exception:
            return None  # gone again, or unreadable: not known to be ours
        etag: str = head.get("ETag", "")
        if head.get("ContentLength") != len(data):
            return None
        if etag.strip('"') == hashlib.md5(data, usedforsecurity=False).hexdigest():
            return etag
        try:
            held = self.read_bytes(path)
        except (OSError, StoreError):
            return None
        return etag if held == data else None

    def create(self, path: PurePath, write: _WRITE) -> None:
        self._put_new(path, _bytes(write))

    def replace(self, path: PurePath, write: _WRITE) -> None:
        self._put(path, _bytes(write))

    def stage(self, final: PurePath, write: _WRITE) -> Staged:
        return Staged(final, None, _bytes(write))

    def publish(self, staged: Staged) -> None:
        self._put_new(staged.final, staged.data)

    def delete(self, path: PurePath) -> None:
        self._survey = None  # a listing after a write lists afresh
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._object(path))
        except Exception as err:
            raise _os_error(err, self.show(path)) from None
        self._keys.pop(path, None)

    def walk(self, folder: PurePath, pattern: str) -> list[PurePath]:
        objects, _ = self._list(folder, delimiter=False)
        paths = (PurePosixPath(self.bucket, obj["Key"]) for obj in objects)
        return [p for p in paths if p.relative_to(folder).match(pattern)]

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        path = self.root / name
        etag = self._acquire(path)
        try:
            yield
        finally:
            with contextlib.suppress(Exception):  # taken over as stale: not ours to remove
                self.client.delete_object(Bucket=self.bucket, Key=self._object(path), IfMatch=etag)

    def _acquire(self, path: PurePath) -> str:
        """Create the lock object if absent; take it over with If-Match once stale."""
        body = f'{{"owner": "{uuid.uuid4().hex}"}}'.encode()
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                return self._put_new(path, body)
            except FileExistsError:
                pass
            try:
                head = self.client.head_object(Bucket=self.bucket, Key=self._object(path))
            except Exception:
                continue  # released meanwhile: try again at once
            age = time.time() - head["LastModified"].timestamp()
            if age >= LOCK_STALE_SECONDS:
                with contextlib.suppress(FileExistsError):  # a rival took it first
                    return self._put(path, body, IfMatch=head["ETag"])
            if time.monotonic() > deadline:
                raise StoreError(
                    f"{self.show(path)} stayed locked: is another run stuck?", self.show(path)
                )
            time.sleep(0.1)


def _arrow_owned(data: bytes) -> pa.Buffer:
    """``data`` copied into memory of arrow's own pool.

    Not ``pa.py_buffer`` (a view of the Python object): an arrow thread may drop the
    last reference to a buffer after a scan, and freeing a Python object there takes
    the GIL, which the thread that started the scan may hold while it waits on arrow.
    """
    import pyarrow as pa

    buffer = pa.allocate_buffer(len(data))
    memoryview(buffer).cast("B")[:] = data
    return buffer


def _bytes(write: _WRITE) -> bytes:
    sink = io.BytesIO()
    write(sink)
    return sink.getvalue()


def _timestamp(value: str) -> datetime:
    """An S3 reply's time, as botocore's own parser reads it, in ~1/300 of the time.

    Every key of a listing has a ``LastModified`` in ISO 8601 (``2026-11-20T10:05:00.000Z``):
    botocore reads each with dateutil, a sixth of a listing's CPU (docs/performance.md).
    ``fromisoformat``
    reads that form (Python 3.11); anything else, or a time without its zone, goes to
    botocore's parser (the ``Last-Modified`` header's HTTP date of a HEAD). The AWS CLI
    swaps this parser the same way (its ``cli_timestamp_format``).
    """
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        from botocore.utils import parse_timestamp  # type: ignore[import-untyped]

        found: datetime = parse_timestamp(value)
        return found
    return parsed


def _s3_key(size: int, modified: Any, etag: str) -> FileKey:
    return (int(size), int(modified.timestamp() * 1e9), str(etag))


def _env_region() -> str | None:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


def _aws_reason(err: Exception) -> str:
    """An AWS failure in one line: its code and message (never a credential: botocore's
    errors carry none)."""
    response = getattr(err, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        return f"{error.get('Code', '')} {error.get('Message', '')}".strip() or type(err).__name__
    return " ".join(str(err).split()) or type(err).__name__


def _read_error(err: Exception, where: str, *, tries: int = 1) -> Exception:
    """A failed read of ``where``: ``FileNotFoundError`` when the object is gone (a
    reader lists again), else the :class:`StoreError` naming it."""
    gone = _os_error(err, where)
    if isinstance(gone, FileNotFoundError):
        return gone
    reason = _aws_reason(err) + (f" ({tries} tries)" if tries > 1 else "")
    return StoreError(f"cannot read {where}: {reason}", where)


def _os_error(err: Exception, where: str) -> OSError:
    """A botocore failure as the OSError a local file system would raise."""
    code = ""
    response = getattr(err, "response", None)
    if isinstance(response, dict):
        code = str(response.get("Error", {}).get("Code", ""))
    if code in {"NoSuchKey", "404", "NotFound"}:
        return FileNotFoundError(errno.ENOENT, "no such object", where)
    if code in {"PreconditionFailed", "412", "ConditionalRequestConflict"}:
        return FileExistsError(errno.EEXIST, "the object exists already", where)
    return OSError(errno.EIO, _aws_reason(err), where)


# --------------------------------------------------------------------------- opening


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

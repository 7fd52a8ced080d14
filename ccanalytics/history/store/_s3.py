"""A store under ``s3://bucket/prefix`` (any S3-compatible service; see :mod:`._location`).

S3 has no rename: a file becomes visible by one upload to its final key, made only if no
object has that key (``If-None-Match: *``); a lock is a create-if-absent object that a
stale holder's successor takes over with ``If-Match``. Parquet is read through pyarrow's
``S3FileSystem``; the conditional writes need botocore (the ``s3`` extra).
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import os
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import PurePath, PurePosixPath
from typing import TYPE_CHECKING, Any, overload

from ccanalytics.errors import StoreError
from ccanalytics.history.store._location import FileKey, Fill, Location, Staged
from ccanalytics.history.store._s3_clients import s3_client, s3_filesystem
from ccanalytics.history.store._s3_held import HeldObjects
from ccanalytics.history.store._s3_replies import (
    aws_reason,
    bytes_written,
    os_error,
    read_error,
    s3_key,
)

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.fs as pafs  # type: ignore[import-untyped]

__all__ = ["LOCK_STALE_SECONDS", "S3Location"]

#: An S3 lock object older than this is a killed holder's: the next one takes it over.
LOCK_STALE_SECONDS = 600.0
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
        #: Keys of the objects seen by the latest listings (no HEAD per file to vet it).
        self._keys: dict[PurePath, FileKey] = {}
        self._held = HeldObjects(self._keys, self.read_bytes)
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
            self._client = s3_client(self.endpoint_url, self.region, self.show(self.root))
        return self._client

    def filesystem(self) -> pafs.FileSystem:
        if self._fs is None:
            self._fs = s3_filesystem(self.bucket, self.endpoint_url, self.region)
        return self._fs

    def small_objects(
        self, paths: Sequence[PurePath], *, fetch: bool = True
    ) -> dict[PurePath, pa.Buffer]:
        """The bytes of each of ``paths`` that the latest listing found small (up to
        :data:`~._s3_held.WHOLE_READ_BYTES`), fetched by one GET each (several at once), where
        pyarrow would read a footer, then the columns: two requests or more.
        ``fetch=False``: only those held already (a dataset's, see :func:`dataset_of`).

        Kept while the object is unchanged: an object is never overwritten, so its key
        (ETag, size) names its bytes. Up to :data:`~._s3_held.HELD_BYTES` in all, the least
        recently used let go first (those gone are never used again); the rest are
        left to pyarrow's S3 reads. A listed object gone raises ``FileNotFoundError``
        (a query lists again).
        """
        return self._held.take(paths, fetch=fetch)

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
                f"cannot list {self.show(folder)}: {aws_reason(err)}", self.show(folder)
            ) from None
        for obj in objects:
            path = PurePosixPath(self.bucket, obj["Key"])
            self._keys[path] = s3_key(obj["Size"], obj["LastModified"], obj["ETag"])
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
                raise read_error(err, where) from None
            try:
                data: bytes = reply["Body"].read()
                return data
            except Exception as err:
                if attempt >= READ_ATTEMPTS:
                    raise read_error(err, where, tries=attempt) from None
            time.sleep(READ_PAUSE_SECONDS * 2 ** (attempt - 1))
            attempt += 1

    def key(self, path: PurePath) -> FileKey:
        known = self._keys.get(path)
        if known is not None:
            return known
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self._object(path))
        except Exception as err:
            raise os_error(err, self.show(path)) from None
        key = s3_key(head["ContentLength"], head["LastModified"], head["ETag"])
        self._keys[path] = key
        return key

    def source(self, path: PurePath) -> Any:
        import pyarrow as pa

        if self._held.small(path):  # one GET, not a HEAD and GETs
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
            raise os_error(err, self.show(path)) from None
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

    def create(self, path: PurePath, write: Fill) -> None:
        self._put_new(path, bytes_written(write))

    def replace(self, path: PurePath, write: Fill) -> None:
        self._put(path, bytes_written(write))

    def stage(self, final: PurePath, write: Fill) -> Staged:
        return Staged(final, None, bytes_written(write))

    def publish(self, staged: Staged) -> None:
        self._put_new(staged.final, staged.data)

    def delete(self, path: PurePath) -> None:
        self._survey = None  # a listing after a write lists afresh
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._object(path))
        except Exception as err:
            raise os_error(err, self.show(path)) from None
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

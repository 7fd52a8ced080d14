"""S3's replies read as this package needs them: times, keys, failures in one line, and
object bytes as arrow's own buffers."""

from __future__ import annotations

import errno
import io
import os
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ccanalytics.errors import StoreError
from ccanalytics.history.store._location import FileKey, Fill

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

__all__ = [
    "arrow_owned",
    "aws_reason",
    "bytes_written",
    "env_region",
    "os_error",
    "read_error",
    "s3_key",
    "s3_timestamp",
]


def arrow_owned(data: bytes) -> pa.Buffer:
    """``data`` copied into memory of arrow's own pool.

    Not ``pa.py_buffer`` (a view of the Python object): an arrow thread may drop the
    last reference to a buffer after a scan, and freeing a Python object there takes
    the GIL, which the thread that started the scan may hold while it waits on arrow.
    """
    import pyarrow as pa

    buffer = pa.allocate_buffer(len(data))
    memoryview(buffer).cast("B")[:] = data
    return buffer


def bytes_written(write: Fill) -> bytes:
    sink = io.BytesIO()
    write(sink)
    return sink.getvalue()


def s3_timestamp(value: str) -> datetime:
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


def s3_key(size: int, modified: Any, etag: str) -> FileKey:
    return (int(size), int(modified.timestamp() * 1e9), str(etag))


def env_region() -> str | None:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


def aws_reason(err: Exception) -> str:
    """An AWS failure in one line: its code and message (never a credential: botocore's
    errors carry none)."""
    response = getattr(err, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        return f"{error.get('Code', '')} {error.get('Message', '')}".strip() or type(err).__name__
    return " ".join(str(err).split()) or type(err).__name__


def read_error(err: Exception, where: str, *, tries: int = 1) -> Exception:
    """A failed read of ``where``: ``FileNotFoundError`` when the object is gone (a
    reader lists again), else the :class:`StoreError` naming it."""
    gone = os_error(err, where)
    if isinstance(gone, FileNotFoundError):
        return gone
    reason = aws_reason(err) + (f" ({tries} tries)" if tries > 1 else "")
    return StoreError(f"cannot read {where}: {reason}", where)


def os_error(err: Exception, where: str) -> OSError:
    """A botocore failure as the OSError a local file system would raise."""
    code = ""
    response = getattr(err, "response", None)
    if isinstance(response, dict):
        code = str(response.get("Error", {}).get("Code", ""))
    if code in {"NoSuchKey", "404", "NotFound"}:
        return FileNotFoundError(errno.ENOENT, "no such object", where)
    if code in {"PreconditionFailed", "412", "ConditionalRequestConflict"}:
        return FileExistsError(errno.EEXIST, "the object exists already", where)
    return OSError(errno.EIO, aws_reason(err), where)

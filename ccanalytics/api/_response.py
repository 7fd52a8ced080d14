"""Responses: reading a body within the call's limits, and turning it into data or an error.

Nothing here raises a library error: each step *returns* the error it found, and
the request loop raises it. That keeps the body out of every frame an error
passes through, so an error reporter that captures locals (Sentry does) never
ships a listing, pod ``env`` values included. The errors built here carry no
location and no scrubbing yet: the client adds both in one place
(``_BaseClient._finished``).
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, NamedTuple, Protocol

import orjson

from ccanalytics._json import NotJsonError, tolerant_loads
from ccanalytics.api._clock import judged
from ccanalytics.api._retry import parse_retry_after
from ccanalytics.api.models import ErrorResponse
from ccanalytics.errors import (
    ApiError,
    ApiTimeoutError,
    AuthenticationError,
    MalformedResponseError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ResponseTooLargeError,
    ServerError,
    UnprocessableEntityError,
)

__all__ = [
    "BodyLimits",
    "RawListing",
    "ReadStopped",
    "decode_json",
    "observed_at",
    "service_date",
    "shape_error",
    "status_error",
]

_STATUS_ERRORS: dict[int, type[ApiError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}

_TAG = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)
_SPACE = re.compile(r"\s+")
#: A ``Date`` header outside these years is a broken clock, not an observation time.
_PLAUSIBLE_YEARS = range(2000, 2100)


class _HasHeaders(Protocol):
    @property
    def headers(self) -> Any: ...


class RawListing(NamedTuple):
    """A 2xx listing as received: its body, undecoded, and when the service answered."""

    content: bytes
    observed_at: datetime
    path: str

    def __repr__(self) -> str:
        # The body holds pod env values: never show it (reprs reach logs and tracebacks).
        return f"RawListing(content=<{len(self.content)} bytes>, observed_at={self.observed_at!r}, path={self.path!r})"


def service_date(response: _HasHeaders) -> datetime | None:
    """The response's ``Date`` (UTC) when present and plausible, else ``None``."""
    value = response.headers.get("Date")
    if value:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            when = None
        if when is not None and when.tzinfo is not None and when.year in _PLAUSIBLE_YEARS:
            return when.astimezone(UTC)
    return None


def observed_at(response: _HasHeaders, *, trust_service_clock: bool = False) -> datetime:
    """When the service answered: its ``Date`` header when present and plausible, and
    within ``CLOCK_SKEW`` (5 minutes) of the local clock unless ``trust_service_clock``;
    else the local clock now.

    The server's clock is the observation time, so a skewed local clock cannot reorder
    history; a ``Date`` far from the local clock (a broken clock, or a simulated one:
    pass ``trust_service_clock=True`` for that) is set aside by the rule of
    :mod:`ccanalytics.api._clock`. The client applies the same rule, and warns.
    """
    when, _ = judged(service_date(response), datetime.now(UTC), trust=trust_service_clock)
    return when


# -- reading a body within the limits ---------------------------------------------------


class ReadStopped(Exception):
    """Internal: reading stopped at a limit; ``error`` is what the call ends in."""

    def __init__(self, error: ApiError | ApiTimeoutError) -> None:
        super().__init__()
        self.error = error


class BodyLimits:
    """Collects a streamed body, stopping at ``max_size`` bytes or at ``deadline``.

    ``deadline`` is a :func:`time.monotonic` instant (``None``: none), checked as
    each chunk arrives; the wait for a chunk is bounded by the transport (each read
    cut to the deadline: ``_deadline`` for the sync client, ``asyncio.timeout`` for
    the async one; a caller's own transport, by its read timeout).
    """

    def __init__(self, status: int, headers: Any, *, max_size: int, deadline: float | None) -> None:
        self._status, self._headers = status, headers
        self._max_size, self._deadline = max_size, deadline
        self._chunks: list[bytes] = []
        self._size = 0

    def check_announced_size(self) -> None:
        """Refuse at once a body whose ``Content-Length`` is past the limit."""
        length = self._headers.get("content-length", "")
        if length.isascii() and length.isdigit() and int(length) > self._max_size:
            raise ReadStopped(self._too_large(f"announces {int(length)} bytes"))

    def add(self, chunk: bytes) -> None:
        self._size += len(chunk)
        if self._size > self._max_size:
            raise ReadStopped(self._too_large(f"passed {self._size} bytes"))
        self._chunks.append(chunk)
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise ReadStopped(
                ApiTimeoutError(
                    f"timed out: the call's deadline passed while reading the {self._status} "
                    f"response's body ({self._size} bytes read)"
                )
            )

    def content(self) -> bytes:
        content = b"".join(self._chunks)
        self._chunks.clear()
        return content

    def _too_large(self, what: str) -> ResponseTooLargeError:
        return ResponseTooLargeError(
            f"{self._status} response body {what}, more than max_response_size="
            f"{self._max_size}; the rest was not read",
            status=self._status,
            title="Response too large",
            detail=f"body larger than {self._max_size} bytes",
            headers=self._headers,
        )


# -- decoding ---------------------------------------------------------------------------


def decode_json(content: bytes, ctype: str, status: int) -> Any | MalformedResponseError:
    """The JSON in ``content``, or the error saying why there is none (the body left out)."""
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as err:
        # Built here, raised by the caller outside this block: the decode error (its
        # ``doc`` is the whole body) must not become the raised error's __context__.
        reason = f"{err.msg} at byte {err.pos}"
    try:  # what orjson refuses but is JSON (1e400, "\ud800"): those values None, the rest as sent
        return tolerant_loads(content)
    except NotJsonError as err:  # NaN where no None can stand: named, not a byte offset
        reason = str(err)
    except (ValueError, RecursionError):  # not JSON at all: orjson's reason says why
        pass
    return MalformedResponseError(
        f"{status} response is not valid JSON ({ctype}, {len(content)} bytes: {reason})",
        status=status,
        title="Malformed response",
        detail=f"invalid JSON ({ctype})",
    )


def shape_error(want: str, got: object, status: int = 200) -> MalformedResponseError:
    """A 2xx body of the wrong shape (``want``: what the spec promises)."""
    return MalformedResponseError(
        f"expected {want}, got {type(got).__name__}",
        status=status,
        title="Malformed response",
        detail=f"expected {want}",
    )


def _body_excerpt(content: bytes, ctype: str, limit: int = 200) -> str:
    """A short, single-line, human-readable excerpt of a non-JSON body (tags stripped)."""
    text = content[:4096].decode("utf-8", "replace")
    if "html" in ctype.lower() or text.lstrip().startswith("<"):
        text = _TAG.sub(" ", text)
    text = _SPACE.sub(" ", text).strip()
    return text[:limit] + ("..." if len(text) > limit else "")


def _problem(content: bytes) -> ErrorResponse | None:
    """The body as problem+json, if it is a JSON object."""
    try:
        data = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    return ErrorResponse.model_validate(data) if isinstance(data, dict) else None


def _detail(problem: ErrorResponse | None, content: bytes, ctype: str) -> str:
    if problem is not None:
        return problem.detail or ""
    if content:
        return f"non-JSON error body ({ctype}): {_body_excerpt(content, ctype)}"
    return "empty response body"


def status_error(status: int, reason: str, headers: Any, content: bytes) -> ApiError:
    """Map any non-2xx response to its exception class, whatever the body looks like."""
    cls = _STATUS_ERRORS.get(status, ServerError)
    problem = _problem(content)
    ctype = headers.get("content-type", "no content type")
    fields: dict[str, Any] = {
        "status": status,
        "title": (problem.title if problem else None) or reason or "HTTP error",
        "detail": _detail(problem, content, ctype),
        "errors": list(problem.errors or []) if problem else [],
        "headers": headers,
    }
    if cls is RateLimitError:
        fields["retry_after"] = parse_retry_after(headers.get("Retry-After"))
    return cls(**fields)

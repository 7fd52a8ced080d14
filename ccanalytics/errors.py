"""Every exception ccanalytics raises.

The whole tree, drawn once::

    CCAnalyticsError
    ├── ApiError                       status, title, detail, errors, headers
    │   ├── AuthenticationError        401
    │   ├── PermissionDeniedError      403
    │   ├── NotFoundError              404
    │   ├── UnprocessableEntityError   422
    │   ├── RateLimitError             429 (retry_after), also raised locally when pacing gives up
    │   ├── ServerError                5xx and any other unexpected status
    │   └── MalformedResponseError     a 2xx whose body is not what the spec promises
    ├── ApiConnectionError             network failure
    │   └── ApiTimeoutError            connect/read/write/pool timeout
    ├── InvalidSshKeysError            local validation before a PUT; ``errors`` as "<json path>: <message>"
    └── ConfigurationError             no API key or base URL, or an unusable one (also a ValueError)

``MalformedResponseError`` and ``ConfigurationError`` are additions to the tree that
``shared/API.md`` fixes; everything else is exactly that tree.

No message built here ever contains the API key: messages are made from the
response's status and problem+json fields, the request's method and path only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ApiConnectionError",
    "ApiError",
    "ApiTimeoutError",
    "AuthenticationError",
    "CCAnalyticsError",
    "ConfigurationError",
    "InvalidSshKeysError",
    "MalformedResponseError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "ServerError",
    "UnprocessableEntityError",
]

#: Headers that may be kept on an exception; anything else (cookies, auth echoes) is dropped.
_SAFE_HEADERS = frozenset(
    {
        "content-type",
        "content-length",
        "date",
        "retry-after",
        "ratelimit",
        "ratelimit-policy",
        "server",
        "via",
        "x-request-id",
    }
)


class CCAnalyticsError(Exception):
    """Base class of every error raised by ccanalytics."""


class ApiError(CCAnalyticsError):
    """The API answered with an error status (or a body that breaks the spec)."""

    status: int
    title: str
    detail: str
    errors: list[str]
    headers: dict[str, str]
    method: str | None
    path: str | None

    def __init__(
        self,
        message: str | None = None,
        *,
        status: int,
        title: str = "",
        detail: str = "",
        errors: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        method: str | None = None,
        path: str | None = None,
    ) -> None:
        self.status = status
        self.title = title
        self.detail = detail
        self.errors = list(errors)
        self.headers = {
            k.lower(): v for k, v in (headers or {}).items() if k.lower() in _SAFE_HEADERS
        }
        self.method = method
        self.path = path
        super().__init__(message or self._default_message())

    def _default_message(self) -> str:
        where = f"{self.method} {self.path}: " if self.method and self.path else ""
        text = f"{where}{self.status} {self.title}".rstrip()
        if self.detail and self.detail != self.title:
            text += f": {self.detail}"
        if self.errors:
            shown = self.errors[:10]
            text += " (" + "; ".join(shown)
            if len(self.errors) > len(shown):
                text += f"; and {len(self.errors) - len(shown)} more"
            text += ")"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, title={self.title!r}, detail={self.detail!r})"


class AuthenticationError(ApiError):
    """401: the API key is missing, malformed, expired or invalid."""


class PermissionDeniedError(ApiError):
    """403: the API key is valid but does not grant access to this resource or action."""


class NotFoundError(ApiError):
    """404: the addressed resource does not exist."""


class UnprocessableEntityError(ApiError):
    """422: the request was well formed but failed the server's validation."""


class RateLimitError(ApiError):
    """429 from the server, or a window known to be exhausted for longer than the client may wait."""

    retry_after: float | None

    def __init__(self, message: str | None = None, *, retry_after: float | None = None, **kw: Any):
        self.retry_after = retry_after
        super().__init__(message, **kw)


class ServerError(ApiError):
    """5xx, or any status the client has no more specific class for."""


class MalformedResponseError(ApiError):
    """A successful status whose body is not valid JSON of the documented shape."""


class ApiConnectionError(CCAnalyticsError):
    """The request did not get an HTTP response: DNS, refused or reset connection, TLS, ..."""


class ApiTimeoutError(ApiConnectionError):
    """The request timed out (connect, read, write or waiting for a pooled connection)."""


class InvalidSshKeysError(CCAnalyticsError, ValueError):
    """Some keys would be rejected by the API; nothing was sent.

    ``errors`` lists every failure in the server's ``"<json path>: <message>"`` form,
    for example ``"$.keys[2]: does not match pattern ..."``.
    """

    errors: list[str]

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        head = f"{len(self.errors)} SSH key(s) would be rejected by the API; nothing was sent"
        super().__init__(head + ":\n  " + "\n  ".join(self.errors))


class ConfigurationError(CCAnalyticsError, ValueError):
    """The client cannot be configured: no API key or base URL, or an unusable base URL."""

"""The API client: HTTP, models, errors, rate limits and retries of the REST API v2.

- ``_client``: ``Client`` and ``AsyncClient`` (httpx), the three operations;
- ``models``: pydantic v2 models of the resources (lenient on responses);
- ``_ratelimit``: ``RateLimit``/``RateLimit-Policy`` parsing and the pacer;
- ``_retry``: which failures are retried, and how long to wait;
- ``_config``: every policy constant in one place.

The exception tree lives in :mod:`ccanalytics.errors`, shared by every layer. This
package may import only :mod:`ccanalytics.errors` and the key rule of
:mod:`ccanalytics.keys` (the client checks keys locally, as the server will);
everything else builds on it. Names are imported on first use, so importing
``_ratelimit`` or ``models`` does not load httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccanalytics._lazy import lazy_exports

if TYPE_CHECKING:
    from ccanalytics.api._client import AsyncClient, Client
    from ccanalytics.api._ratelimit import RateLimitStatus, RateLimitWindow, parse_rate_limit
    from ccanalytics.api.models import ErrorResponse, Pod, Registry, SshKeys, UpdateSshKeysRequest

__all__ = [
    "AsyncClient",
    "Client",
    "ErrorResponse",
    "Pod",
    "RateLimitStatus",
    "RateLimitWindow",
    "Registry",
    "SshKeys",
    "UpdateSshKeysRequest",
    "parse_rate_limit",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AsyncClient": "ccanalytics.api._client",
        "Client": "ccanalytics.api._client",
        "RateLimitStatus": "ccanalytics.api._ratelimit",
        "RateLimitWindow": "ccanalytics.api._ratelimit",
        "parse_rate_limit": "ccanalytics.api._ratelimit",
        **dict.fromkeys(
            ("ErrorResponse", "Pod", "Registry", "SshKeys", "UpdateSshKeysRequest"),
            "ccanalytics.api.models",
        ),
    },
)

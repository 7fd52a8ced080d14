"""``Client`` and ``AsyncClient``: the three operations of the API v2, typed.

Both share :class:`_BaseClient`, which holds everything but the I/O: configuration,
request building, response decoding, the error mapping and the retry decision. The
two subclasses only differ in how they wait and send.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any, NamedTuple, Self
from urllib.parse import quote

import httpx
import orjson

from ccanalytics.api import _config
from ccanalytics.api._ratelimit import Pacer, RateLimitStatus, parse_rate_limit
from ccanalytics.api._retry import backoff_delay, is_retryable_status, parse_retry_after
from ccanalytics.api.models import ErrorResponse, Pod, Registry, SshKeys, UpdateSshKeysRequest
from ccanalytics.errors import (
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    AuthenticationError,
    CCAnalyticsError,
    ConfigurationError,
    InvalidSshKeysError,
    MalformedResponseError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    UnprocessableEntityError,
)
from ccanalytics.keys._api_rule import api_key_error

__all__ = ["AsyncClient", "Client", "RawListing", "observed_at"]

logger = logging.getLogger("ccanalytics.client")

_STATUS_ERRORS: dict[int, type[ApiError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}

_TAG = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)
_SPACE = re.compile(r"\s+")


class RawListing(NamedTuple):
    """A 2xx listing as received: its body, undecoded, and when the service answered."""

    content: bytes
    observed_at: datetime
    path: str


#: A ``Date`` header outside these years is a broken clock, not an observation time.
_PLAUSIBLE_YEARS = range(2000, 2100)


def observed_at(response: httpx.Response) -> datetime:
    """When the service answered: its ``Date`` header when present and plausible, else now.

    The server's clock is the observation time, so a skewed local clock cannot
    reorder history; the local clock at receipt stands in only when there is no
    usable ``Date``.
    """
    value = response.headers.get("Date")
    if value:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            when = None
        if when is not None and when.tzinfo is not None and when.year in _PLAUSIBLE_YEARS:
            return when.astimezone(UTC)
    return datetime.now(UTC)


def _decode_json(content: bytes, ctype: str, status: int, method: str, path: str) -> Any:
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as err:
        message = (
            f"{method} {path}: {status} response is not valid JSON "
            f"({ctype}, {len(content)} bytes: {err.msg} at byte {err.pos})"
        )
    raise MalformedResponseError(  # outside the except: the body stays out of the chain
        message,
        status=status,
        title="Malformed response",
        detail=f"invalid JSON ({ctype})",
        method=method,
        path=path,
    )


def _body_excerpt(response: httpx.Response, limit: int = 200) -> str:
    """A short, single-line, human-readable excerpt of a non-JSON body (tags stripped)."""
    text = response.content[:4096].decode("utf-8", "replace")
    if "html" in response.headers.get("content-type", "").lower() or text.lstrip().startswith("<"):
        text = _TAG.sub(" ", text)
    text = _SPACE.sub(" ", text).strip()
    return text[:limit] + ("..." if len(text) > limit else "")


def _path_id(value: object, what: str) -> str:
    """One URL-encoded path segment: ``a/b`` reaches the server as ``a%2Fb``."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    try:
        return quote(value, safe="")
    except UnicodeEncodeError:
        raise ValueError(f"{what} is not valid Unicode text (lone surrogate)") from None


def _utf8_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _keys_argument(keys: object) -> list[str]:
    """The replacement set, refusing anything that could remove keys by accident."""
    if isinstance(keys, str | bytes):
        raise TypeError("keys must be a list of key lines, not a single string")
    if keys is None or not isinstance(keys, Iterable):
        raise TypeError(f"keys must be a list of key lines, not {type(keys).__name__}")
    if isinstance(keys, Mapping):
        raise TypeError("keys must be a list of key lines, not a mapping")
    materialised = list(keys)
    if not materialised and not isinstance(keys, list):
        raise ValueError(
            "refusing to remove every SSH key: got an empty "
            f"{type(keys).__name__}; pass [] explicitly to remove all keys"
        )
    return materialised


class _BaseClient:
    """Configuration, request building and response handling shared by both clients."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        *,
        timeout: float | httpx.Timeout,
        max_retries: int,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get(_config.API_KEY_ENV)
        url = base_url if base_url is not None else os.environ.get(_config.BASE_URL_ENV)
        if not key:
            raise ConfigurationError(
                f"no API key: pass api_key= or set {_config.API_KEY_ENV} "
                "(or use ccanalytics.sandbox for a local API)"
            )
        if not url:
            raise ConfigurationError(
                f"no base URL: pass base_url= or set {_config.BASE_URL_ENV} "
                "(or use ccanalytics.sandbox for a local API)"
            )
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError("max_retries must be a non-negative int")
        try:
            parsed = httpx.URL(url)
        except Exception as err:
            raise ConfigurationError(f"invalid base URL {url!r}: {err}") from None
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ConfigurationError(f"base URL must be an http(s) URL with a host, got {url!r}")
        self._api_key = key
        self.base_url = str(parsed).rstrip("/")
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.max_retries = max_retries
        self._pacer = Pacer()
        self._rate_limit: RateLimitStatus | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key='***')"

    @property
    def rate_limit(self) -> RateLimitStatus | None:
        """Rate-limit state from the last response's headers (``None``: exempt or unknown)."""
        return self._rate_limit

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self._api_key}",
            "Accept": "application/json, application/problem+json",
            "User-Agent": _config.USER_AGENT,
        }

    def _scrub(self, text: str) -> str:
        """Remove the API key from any text that came from the network (an echoing proxy)."""
        return text.replace(self._api_key, "***") if self._api_key in text else text

    # -- response handling ------------------------------------------------------

    def _record_rate_limit(self, response: httpx.Response) -> RateLimitStatus | None:
        status = parse_rate_limit(
            response.headers.get("RateLimit"), response.headers.get("RateLimit-Policy")
        )
        self._rate_limit = status
        return status

    def _status_error(self, response: httpx.Response, method: str, path: str) -> ApiError:
        """Map any non-2xx response to its exception class, whatever the body looks like."""
        status = response.status_code
        cls = _STATUS_ERRORS.get(status, ServerError)
        problem = None
        try:
            data = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            problem = ErrorResponse.model_validate(data)
        title = (problem.title if problem else None) or response.reason_phrase or "HTTP error"
        if problem and problem.detail:
            detail = problem.detail
        elif problem is None and response.content:
            ctype = response.headers.get("content-type", "no content type")
            detail = f"non-JSON error body ({ctype}): {_body_excerpt(response)}"
        elif problem is None:
            detail = "empty response body"
        else:
            detail = ""
        errors = [self._scrub(e) for e in (problem.errors or [])] if problem else []
        kw: dict[str, Any] = {
            "status": status,
            "title": self._scrub(title),
            "detail": self._scrub(detail),
            "errors": errors,
            # Scrubbed too: a proxy may echo the Authorization header into X-Request-Id, Via...
            "headers": {k: self._scrub(v) for k, v in response.headers.items()},
            "method": method,
            "path": path,
        }
        if cls is RateLimitError:
            kw["retry_after"] = parse_retry_after(response.headers.get("Retry-After"))
        return cls(**kw)

    def _decode(self, response: httpx.Response, method: str, path: str) -> Any:
        ctype = response.headers.get("content-type", "no content type")
        return _decode_json(response.content, ctype, response.status_code, method, path)

    def _decode_raw(self, listing: RawListing) -> Any:
        """A raw listing's JSON (the frame path decodes after the request loop)."""
        return _decode_json(listing.content, "listing", 200, "GET", listing.path)

    def _expect_object(
        self, data: Any, key: str | None, method: str, path: str, status: int
    ) -> Any:
        if not isinstance(data, dict) or (key is not None and key not in data):
            shape = type(data).__name__
            want = f"an object with {key!r}" if key else "an object"
            raise MalformedResponseError(
                f"{method} {path}: expected {want}, got {shape}",
                status=status,
                title="Malformed response",
                detail=f"expected {want}",
                method=method,
                path=path,
            )
        return data

    def _retry_delay(self, err: CCAnalyticsError, attempt: int) -> float | None:
        """Seconds to wait before retrying after ``err``, or ``None`` when it is final."""
        if attempt >= self.max_retries:
            return None
        if isinstance(err, ApiConnectionError):
            return backoff_delay(attempt)
        if isinstance(err, RateLimitError):
            wait = err.retry_after
            if wait is None and self._rate_limit is not None:
                blocked = [
                    w.reset for w in self._rate_limit.windows.values() if w.exhausted and w.reset
                ]
                wait = max(blocked) if blocked else None
            if wait is None:
                return backoff_delay(attempt)
            if wait > _config.MAX_RETRY_AFTER:
                # Too long to wait now; but tell the pacer, so the next call fails
                # locally instead of provoking another 429.
                self._pacer.block_for(wait)
                return None
            self._pacer.block_for(wait)
            return 0.0  # the pacer now holds every request (this one included) until then
        if (
            isinstance(err, ApiError)
            and is_retryable_status(err.status)
            and not isinstance(err, MalformedResponseError)
        ):
            return backoff_delay(attempt)
        return None

    @staticmethod
    def _log_retry(method: str, path: str, delay: float, err: Exception, attempt: int) -> None:
        logger.debug(
            "retrying %s %s in %.2fs after %s (attempt %d)",
            method,
            path,
            delay,
            type(err).__name__,
            attempt + 1,
        )

    def _transport_error(self, err: httpx.HTTPError, method: str, path: str) -> ApiConnectionError:
        kind = type(err).__name__
        if isinstance(err, httpx.TimeoutException):
            return ApiTimeoutError(
                f"{method} {path}: timed out ({kind}) after {self._timeout_text()}"
            )
        return ApiConnectionError(
            f"{method} {path}: connection failed ({kind}: {self._scrub(str(err))})"
        )

    def _timeout_text(self) -> str:
        t = self.timeout
        values = {t.connect, t.read, t.write, t.pool} - {None}
        return f"{max(values):g}s" if values else "no timeout"  # type: ignore[type-var]

    def _outcome(
        self, response: httpx.Response, method: str, path: str, raw: bool = False
    ) -> tuple[Any, ApiError | None]:
        status = self._record_rate_limit(response)
        self._pacer.release(status)
        logger.debug("%s %s -> %d", method, path, response.status_code)
        if response.is_success:
            if raw:
                return RawListing(response.content, observed_at(response), path), None
            return self._decode(response, method, path), None
        return None, self._status_error(response, method, path)

    # -- operations: response shapes ---------------------------------------------

    @staticmethod
    def _pods_path(cluster_id: str) -> str:
        return f"/v2/clusters/{_path_id(cluster_id, 'cluster_id')}/pods"

    @staticmethod
    def _registry_path(registry_id: str) -> str:
        return f"/v2/registries/{_path_id(registry_id, 'registry_id')}"

    @staticmethod
    def _ssh_keys_body(keys: object) -> dict[str, list[str]]:
        materialised = _keys_argument(keys)
        problems = []
        for i, key in enumerate(materialised):
            error = api_key_error(i, key)
            if error is None and not _utf8_encodable(key):
                # The pattern lets a lone surrogate through (text decoded with
                # surrogateescape), but no UTF-8 request body can carry it.
                error = f"$.keys[{i}]: is not valid Unicode text (contains a lone surrogate)"
            if error is not None:
                problems.append(error)
        if problems:
            raise InvalidSshKeysError(problems)
        return UpdateSshKeysRequest(keys=materialised).model_dump()

    def _pod_dicts(self, data: Any, path: str) -> list[dict[str, Any]]:
        pods = self._expect_object(data, "pods", "GET", path, 200)["pods"]
        if not isinstance(pods, list):
            self._expect_object(None, "pods", "GET", path, 200)
        # A listing element that is not an object cannot be a pod: skip it, keep the rest.
        return [p for p in pods if isinstance(p, dict)]

    def _pods(self, data: Any, path: str) -> list[Pod]:
        return [Pod.model_validate(p) for p in self._pod_dicts(data, path)]

    def _registry(self, data: Any, path: str) -> Registry:
        return Registry.model_validate(self._expect_object(data, None, "GET", path, 200))

    def _ssh_keys(self, data: Any, path: str) -> SshKeys:
        keys = self._expect_object(data, "keys", "PUT", path, 200)["keys"]
        if not isinstance(keys, list):
            # After a replacement the caller must learn the key set, never get None for it.
            self._expect_object(None, "keys", "PUT", path, 200)
        return SshKeys.model_validate(data)


class Client(_BaseClient):
    """Synchronous client of the API v2.

    >>> with Client() as client:                       # doctest: +SKIP
    ...     pods = client.list_cluster_pods("c-123")

    ``api_key`` and ``base_url`` default to ``CCANALYTICS_API_KEY`` and
    ``CCANALYTICS_BASE_URL``. ``transport`` takes any httpx transport (for example
    :class:`ccanalytics.sandbox.SandboxTransport` or ``httpx.MockTransport``).
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | httpx.Timeout = _config.DEFAULT_TIMEOUT,
        max_retries: int = _config.DEFAULT_MAX_RETRIES,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(api_key, base_url, timeout=timeout, max_retries=max_retries)
        self._transport = transport
        self._http = httpx.Client(base_url=self.base_url, timeout=self.timeout, transport=transport)

    def _async_twin(self) -> AsyncClient:
        """An AsyncClient with this client's configuration and the *same* rate-limit pacer.

        Used by the fleet loader to fan out concurrently from synchronous code; the
        caller closes it. A transport that can also serve async requests (the
        sandbox's) is shared; otherwise the twin makes its own connections.
        """
        transport = (
            self._transport if isinstance(self._transport, httpx.AsyncBaseTransport) else None
        )
        if self._transport is not None and transport is None:
            raise TypeError(
                "this Client's transport cannot serve async requests; "
                "pass an AsyncClient (or a transport that is also an httpx.AsyncBaseTransport)"
            )
        twin = AsyncClient(
            self._api_key,
            self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            transport=transport,
        )
        twin._pacer = self._pacer
        return twin

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close pooled connections. The client cannot be used afterwards."""
        self._http.close()

    def _request(self, method: str, path: str, json: Any = None, raw: bool = False) -> Any:
        attempt = 0
        while True:
            self._pacer.acquire()
            try:
                response = self._http.request(method, path, json=json, headers=self._headers())
            except httpx.HTTPError as exc:
                self._pacer.cancel()
                err: CCAnalyticsError = self._transport_error(exc, method, path)
            except RuntimeError as exc:  # "Cannot send a request, as the client has been closed"
                self._pacer.cancel()
                raise ApiConnectionError(f"{method} {path}: {exc}") from None
            except BaseException:
                self._pacer.cancel()  # interrupted: give the booked slot back
                raise
            else:
                data, api_err = self._outcome(response, method, path, raw)
                if api_err is None:
                    return data
                err = api_err
            delay = self._retry_delay(err, attempt)
            if delay is None:
                raise err
            self._log_retry(method, path, delay, err, attempt)
            time.sleep(delay)
            attempt += 1

    def list_cluster_pods(self, cluster_id: str) -> list[Pod]:
        """``GET /v2/clusters/{id}/pods``: the cluster's member pods."""
        path = self._pods_path(cluster_id)
        return self._pods(self._request("GET", path), path)

    def get_registry(self, registry_id: str) -> Registry:
        """``GET /v2/registries/{id}``: a registry credential (never its username/password)."""
        path = self._registry_path(registry_id)
        return self._registry(self._request("GET", path), path)

    def update_ssh_keys(self, keys: list[str]) -> SshKeys:
        """``PUT /v2/account/ssh-keys``: **replace** the account's whole key set.

        Every key is checked locally with the server's exact rule first; if any
        fails, :class:`InvalidSshKeysError` lists them all and nothing is sent.
        ``[]`` removes every key and is accepted only as an explicit empty list.
        """
        body = self._ssh_keys_body(keys)
        path = "/v2/account/ssh-keys"
        return self._ssh_keys(self._request("PUT", path, json=body), path)


class AsyncClient(_BaseClient):
    """Asynchronous client of the API v2; the same methods as :class:`Client`, as coroutines."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | httpx.Timeout = _config.DEFAULT_TIMEOUT,
        max_retries: int = _config.DEFAULT_MAX_RETRIES,
        transport: httpx.AsyncBaseTransport | None = None,
        limits: httpx.Limits | None = None,
    ) -> None:
        super().__init__(api_key, base_url, timeout=timeout, max_retries=max_retries)
        self._transport = transport
        self._limits = limits
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=self.timeout,
            transport=transport,
            limits=limits or httpx.Limits(max_connections=32, max_keepalive_connections=16),
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close pooled connections. The client cannot be used afterwards."""
        await self._http.aclose()

    close = aclose

    def _async_twin(self) -> AsyncClient:
        """A fresh AsyncClient (own connection pool, for another event loop), same pacer."""
        twin = AsyncClient(
            self._api_key,
            self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            transport=self._transport,
            limits=self._limits,
        )
        twin._pacer = self._pacer
        return twin

    async def _request(self, method: str, path: str, json: Any = None, raw: bool = False) -> Any:
        attempt = 0
        while True:
            await self._pacer.acquire_async()
            try:
                response = await self._http.request(
                    method, path, json=json, headers=self._headers()
                )
            except httpx.HTTPError as exc:
                self._pacer.cancel()
                err: CCAnalyticsError = self._transport_error(exc, method, path)
            except RuntimeError as exc:
                self._pacer.cancel()
                raise ApiConnectionError(f"{method} {path}: {exc}") from None
            except BaseException:
                self._pacer.cancel()  # cancelled task: give the booked slot back
                raise
            else:
                data, api_err = self._outcome(response, method, path, raw)
                if api_err is None:
                    return data
                err = api_err
            delay = self._retry_delay(err, attempt)
            if delay is None:
                raise err
            self._log_retry(method, path, delay, err, attempt)
            await asyncio.sleep(delay)
            attempt += 1

    async def _list_cluster_pods_raw(self, cluster_id: str) -> RawListing:
        """The listing's body undecoded, and when it was observed, for the frame path.

        The frames decode the bytes themselves (no model per pod); a body that is
        not a listing is for them to report as :class:`MalformedResponseError`.
        """
        listing: RawListing = await self._request("GET", self._pods_path(cluster_id), raw=True)
        return listing

    async def list_cluster_pods(self, cluster_id: str) -> list[Pod]:
        """``GET /v2/clusters/{id}/pods``: the cluster's member pods."""
        path = self._pods_path(cluster_id)
        return self._pods(await self._request("GET", path), path)

    async def get_registry(self, registry_id: str) -> Registry:
        """``GET /v2/registries/{id}``: a registry credential (never its username/password)."""
        path = self._registry_path(registry_id)
        return self._registry(await self._request("GET", path), path)

    async def update_ssh_keys(self, keys: list[str]) -> SshKeys:
        """``PUT /v2/account/ssh-keys``: replace the whole key set (see :meth:`Client.update_ssh_keys`)."""
        body = self._ssh_keys_body(keys)
        path = "/v2/account/ssh-keys"
        return self._ssh_keys(await self._request("PUT", path, json=body), path)

"""What both clients share: configuration, one call's state, responses to outcomes, retries.

:class:`Client` (``_sync``) and :class:`AsyncClient` (``_async``) differ only in
how they wait and send; each request loop reads::

    call = start(...)
    repeat: pace -> attempt (send, read the body within limits, outcome)
            -> retry delay or raise the finished error

Every error leaves the client through :meth:`_BaseClient._finished`, the one
place that scrubs the API key (in any escaped form) from every text the network
sent, names the host, and cuts the exception chain (a decode error's ``doc`` is
the whole body; an httpx error holds the request and its headers).
"""

from __future__ import annotations

import copy
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self, TypeVar

import httpx

from ccanalytics.api import _config
from ccanalytics.api._clock import ServiceClock
from ccanalytics.api._ratelimit import Pacer, RateLimitStatus, parse_rate_limit
from ccanalytics.api._response import (
    BodyLimits,
    RawListing,
    decode_json,
    service_date,
    status_error,
)
from ccanalytics.api._retry import backoff_delay, is_retryable_status
from ccanalytics.api._secrets import KeyScrubber, checked_api_key
from ccanalytics.api._url import checked_base_url, warn_if_insecure
from ccanalytics.errors import (
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    CCAnalyticsError,
    ConfigurationError,
    MalformedResponseError,
    RateLimitError,
    ResponseTooLargeError,
    keep_headers,
    locate,
)

__all__ = ["Shape", "_BaseClient", "_Call", "construction_error"]

logger = logging.getLogger("ccanalytics.client")

E = TypeVar("E", bound=CCAnalyticsError)
#: Turns a 2xx body's JSON into the operation's result, or says why it cannot.
Shape = Callable[[Any], Any]


@dataclass
class _Call:
    """One call of an operation: its request, how many attempts it made, its deadline."""

    method: str
    path: str
    json: Any
    shape: Shape | None  # None: return the body undecoded, as a RawListing
    deadline_at: float | None  # time.monotonic() instant; None: no deadline
    attempt: int = 0

    def remaining(self) -> float | None:
        return None if self.deadline_at is None else self.deadline_at - time.monotonic()

    def extend(self, seconds: float) -> None:
        """Waits for the rate limit do not count against the deadline (they have their own cap)."""
        if self.deadline_at is not None:
            self.deadline_at += seconds


def _configured(value: str | None, argument: str, env: str, what: str) -> str:
    """The argument, else the environment variable; ConfigurationError when neither is set."""
    value = value if value is not None else os.environ.get(env)
    if not value:
        raise ConfigurationError(
            f"no {what}: pass {argument}= or set {env} (or use ccanalytics.sandbox for a local API)"
        )
    return value


def _largest(timeout: httpx.Timeout) -> float | None:
    values = [v for v in (timeout.connect, timeout.read, timeout.write, timeout.pool) if v]
    return max(values) if values else None


class _BaseClient:
    """Configuration, request building and response handling shared by both clients."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        *,
        timeout: float | httpx.Timeout,
        max_retries: int,
        deadline: float | None,
        max_response_size: int,
        trust_service_clock: bool,
    ) -> None:
        self._api_key = self._configured_key(api_key)
        self._scrub = KeyScrubber(self._api_key)
        base = checked_base_url(_configured(base_url, "base_url", _config.BASE_URL_ENV, "base URL"))
        warn_if_insecure(base, stacklevel=3)  # the caller of Client(...) / AsyncClient(...)
        self.base_url, self._host = base.url, base.host
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError("max_retries must be a non-negative int")
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.max_retries = max_retries
        self.deadline = self._checked_deadline(deadline)
        self.max_response_size = self._checked_size(max_response_size)
        self._clock = ServiceClock(trust_service_clock)
        self._pacer = Pacer()
        self._rate_limit: RateLimitStatus | None = None
        self._shares_status_with: _BaseClient | None = None

    # -- configuration ------------------------------------------------------------------

    @staticmethod
    def _configured_key(api_key: str | None) -> str:
        source = "api_key=" if api_key is not None else _config.API_KEY_ENV
        key = _configured(api_key, "api_key", _config.API_KEY_ENV, "API key")
        return checked_api_key(key, source)

    def _checked_deadline(self, deadline: float | None) -> float | None:
        if deadline is None:
            return _config.default_deadline(_largest(self.timeout), self.max_retries)
        if isinstance(deadline, bool) or not isinstance(deadline, int | float):
            raise TypeError(f"deadline must be a number of seconds, not {type(deadline).__name__}")
        if not (deadline > 0 and math.isfinite(deadline)):
            raise ValueError("deadline must be a positive, finite number of seconds")
        return float(deadline)

    @staticmethod
    def _checked_size(size: int) -> int:
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError("max_response_size must be a positive int (bytes)")
        return size

    def __repr__(self) -> str:
        # getattr: a client whose construction failed may be shown in a traceback's locals.
        return f"{type(self).__name__}(base_url={getattr(self, 'base_url', None)!r}, api_key='***')"

    @property
    def trust_service_clock(self) -> bool:
        """Whether ``observed_at`` is the service's ``Date`` however far it is from the
        local clock (see the client's docstring)."""
        return self._clock.trust

    def with_options(self, *, trust_service_clock: bool | None = None) -> Self:
        """This client with the options given changed (``None``: as this client's).

        The copy shares this client's connections, configuration and rate-limit pacer
        (what it learns of the rate limit shows in this client's :attr:`rate_limit`
        too): close one of the two, not both. ``collect`` uses it to load with the
        service's clock trusted and to judge a snapshot's clock itself.
        """
        twin = copy.copy(self)
        if trust_service_clock is not None and trust_service_clock != self.trust_service_clock:
            twin._clock = ServiceClock(trust_service_clock)
        twin._shares_status_with = self
        return twin

    @property
    def rate_limit(self) -> RateLimitStatus | None:
        """Rate-limit state from the last response's headers (``None``: exempt or unknown)."""
        return self._rate_limit

    # -- one call ---------------------------------------------------------------------------

    def _start(self, method: str, path: str, json: Any, shape: Shape | None) -> _Call:
        deadline_at = None if self.deadline is None else time.monotonic() + self.deadline
        return _Call(method, path, json, shape, deadline_at)

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self._api_key}",
            "Accept": "application/json, application/problem+json",
            "User-Agent": _config.USER_AGENT,
        }

    def _attempt_timeout(self, call: _Call) -> httpx.Timeout:
        """The configured timeouts, each cut to what is left of the call's deadline."""
        remaining = call.remaining()
        if remaining is None:
            return self.timeout
        left = max(remaining, 0.001)
        t = self.timeout
        return httpx.Timeout(
            connect=left if t.connect is None else min(t.connect, left),
            read=left if t.read is None else min(t.read, left),
            write=left if t.write is None else min(t.write, left),
            pool=left if t.pool is None else min(t.pool, left),
        )

    def _body_limits(self, response: httpx.Response, call: _Call) -> BodyLimits:
        """The limits the body is read within; raises ReadStopped on a too-large Content-Length."""
        limits = BodyLimits(
            response.status_code,
            response.headers,
            max_size=self.max_response_size,
            deadline=call.deadline_at,
        )
        limits.check_announced_size()
        return limits

    def _settle(self, response: httpx.Response, call: _Call) -> None:
        """Fold the response's rate-limit headers into the pacer and ``rate_limit``."""
        status = parse_rate_limit(
            response.headers.get("RateLimit"), response.headers.get("RateLimit-Policy")
        )
        self._rate_limit = status
        parent = self._shares_status_with
        while parent is not None:  # a twin (as_async, with_options): its parents see it too
            parent._rate_limit = status
            parent = parent._shares_status_with
        self._pacer.release(status)
        logger.debug("%s %s -> %d", call.method, call.path, response.status_code)

    def _outcome(self, response: httpx.Response, content: bytes, call: _Call) -> Any:
        """The operation's result, or the error (returned, not raised) the response means."""
        status, headers = response.status_code, response.headers
        if not response.is_success:
            return status_error(status, response.reason_phrase, headers, content)
        if call.shape is None:
            return RawListing(content, self._clock.observed_at(service_date(response)), call.path)
        data = decode_json(content, headers.get("content-type", "no content type"), status)
        result = data if isinstance(data, MalformedResponseError) else call.shape(data)
        if isinstance(result, MalformedResponseError):
            keep_headers(result, headers)  # a request id helps support; _finished scrubs them
        return result

    def _transport_error(self, exc: Exception, call: _Call) -> ApiConnectionError:
        kind = type(exc).__name__
        remaining = call.remaining()
        if isinstance(exc, httpx.TimeoutException):
            if remaining is not None and remaining <= 0:
                return ApiTimeoutError(f"timed out ({kind}): the call's deadline passed")
            return ApiTimeoutError(f"timed out ({kind}) after {self._timeout_text()}")
        if isinstance(exc, httpx.HTTPError):
            return ApiConnectionError(f"connection failed ({kind}: {exc})")
        return ApiConnectionError(str(exc))  # RuntimeError: the client has been closed

    def _timeout_text(self) -> str:
        largest = _largest(self.timeout)
        return "no timeout" if largest is None else f"{largest:g}s"

    # -- after a failed attempt -------------------------------------------------------------

    def _is_closed(self) -> bool:
        """Whether the client was closed (each asks its own httpx client)."""
        raise NotImplementedError

    def _retry_delay(self, err: CCAnalyticsError, call: _Call) -> float | None:
        """Seconds to wait before the next attempt, or ``None`` when ``err`` is final."""
        if call.attempt >= self.max_retries or self._is_closed():
            return None  # a closed client fails the same however long it waits
        delay = self._policy_delay(err, call.attempt)
        remaining = call.remaining()
        if delay is not None and remaining is not None and delay >= remaining:
            logger.debug("%s %s: no time left before the deadline to retry", call.method, call.path)
            return None
        return delay

    def _policy_delay(self, err: CCAnalyticsError, attempt: int) -> float | None:
        if isinstance(err, ApiConnectionError):
            return backoff_delay(attempt)
        if isinstance(err, RateLimitError):
            return self._rate_limit_delay(err, attempt)
        if (
            isinstance(err, ApiError)
            and is_retryable_status(err.status)
            and not isinstance(err, MalformedResponseError | ResponseTooLargeError)
        ):
            return backoff_delay(attempt)
        return None

    def _rate_limit_delay(self, err: RateLimitError, attempt: int) -> float | None:
        wait = err.retry_after
        if wait is None and self._rate_limit is not None:
            blocked = [
                w.reset for w in self._rate_limit.windows.values() if w.exhausted and w.reset
            ]
            wait = max(blocked) if blocked else None
        if wait is None:
            return backoff_delay(attempt)
        # Tell the pacer either way: a wait past the cap makes the next call fail
        # locally instead of provoking another 429.
        self._pacer.block_for(wait)
        if wait > _config.MAX_RETRY_AFTER:
            return None
        return 0.0  # the pacer now holds every request (this one included) until then

    @staticmethod
    def _log_retry(call: _Call, delay: float, err: Exception) -> None:
        logger.debug(
            "retrying %s %s in %.2fs after %s (attempt %d)",
            call.method,
            call.path,
            delay,
            type(err).__name__,
            call.attempt + 1,
        )

    def _finished(self, err: E, method: str, path: str) -> E:
        """The one way out for an error: key scrubbed, host named, chain cut."""
        err.args = tuple(self._scrub(a) if isinstance(a, str) else a for a in err.args)
        if isinstance(err, ApiError):
            err.title, err.detail = self._scrub(err.title), self._scrub(err.detail)
            err.errors = [self._scrub(e) for e in err.errors]
            err.headers = {k: self._scrub(v) for k, v in err.headers.items()}
        if isinstance(err, ApiError | ApiConnectionError):
            locate(err, method, path, self.base_url + path, self._host)
        err.__cause__ = err.__context__ = None
        err.__suppress_context__ = True
        return err

    # -- for code that decodes a raw listing itself (ccanalytics.frames) ----------------

    def malformed(self, path: str, message: str) -> MalformedResponseError:
        """The error this client raises for a 2xx body at ``path`` that is not what the
        spec promises, with ``message`` saying why: named, located and scrubbed like the
        client's own errors (returned, for the caller to raise).

        For code that decodes :meth:`list_cluster_pods_raw` bodies itself, as the frames do.
        """
        err = MalformedResponseError(
            message, status=200, title="Malformed response", detail=message, method="GET", path=path
        )
        return self._finished(err, "GET", path)

    def _unwrapped(self, result: Any, method: str, path: str) -> Any:
        if isinstance(result, CCAnalyticsError):
            raise self._finished(result, method, path)
        return result


def construction_error(err: BaseException) -> BaseException:
    """``err`` raised afresh by a constructor: no traceback and no chain.

    The frames it passed through (the key check, the environment read) held the API
    key in their locals, and a chained error (a ``UnicodeEncodeError``) may hold it as
    its ``object``; error reporters capture both. The message already says what is
    wrong, without the key.
    """
    err.__traceback__ = None
    err.__cause__ = None
    err.__context__ = None
    err.__suppress_context__ = True
    return err

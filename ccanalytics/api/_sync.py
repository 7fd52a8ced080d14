"""``Client``: the three operations of the API v2, synchronously (httpx.Client)."""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import httpx

from ccanalytics.api import _config
from ccanalytics.api._base import Shape, _BaseClient, _Call, construction_error
from ccanalytics.api._deadline import DeadlineBackend, call_deadline
from ccanalytics.api._operations import (
    SSH_KEYS_PATH,
    pods_or_error,
    pods_path,
    registry_or_error,
    registry_path,
    ssh_keys_body,
    ssh_keys_or_error,
)
from ccanalytics.api._response import RawListing, ReadStopped
from ccanalytics.api._transport import pool_transports
from ccanalytics.api.models import Pod, Registry, SshKeys
from ccanalytics.errors import CCAnalyticsError, RateLimitError

if TYPE_CHECKING:
    from ccanalytics.api._async import AsyncClient

__all__ = ["Client"]


class Client(_BaseClient):
    """Synchronous client of the API v2.

    >>> with Client() as client:                       # doctest: +SKIP
    ...     pods = client.list_cluster_pods("c-123")

    ``api_key`` and ``base_url`` default to ``CCANALYTICS_API_KEY`` and
    ``CCANALYTICS_BASE_URL``. ``timeout`` bounds each network operation;
    ``deadline`` bounds a whole call, retries and body reading included (default
    derived from ``timeout``), and ``max_response_size`` one body, in bytes (see
    :mod:`ccanalytics.api._config`). ``transport`` takes any httpx transport (for
    example :class:`ccanalytics.sandbox.SandboxTransport` or ``httpx.MockTransport``).

    ``trust_service_clock``: a raw listing's ``observed_at`` (and so a load's) is the
    service's ``Date``. By default a ``Date`` further than ``CLOCK_SKEW`` (5 minutes)
    from the local clock (a broken clock, or one in 2099) is not trusted: the local
    clock at receipt is used instead, with one
    :class:`~ccanalytics.errors.ClockSkewWarning` per client. ``True`` keeps the
    service's time however far it is, as a simulated-clock sandbox (whose ``Date`` is
    its simulated time) needs.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | httpx.Timeout = _config.DEFAULT_TIMEOUT,
        max_retries: int = _config.DEFAULT_MAX_RETRIES,
        transport: httpx.BaseTransport | None = None,
        deadline: float | None = None,
        max_response_size: int = _config.DEFAULT_MAX_RESPONSE_SIZE,
        trust_service_clock: bool = False,
    ) -> None:
        try:
            super().__init__(
                api_key,
                base_url,
                timeout=timeout,
                max_retries=max_retries,
                deadline=deadline,
                max_response_size=max_response_size,
                trust_service_clock=trust_service_clock,
            )
        except (CCAnalyticsError, ValueError, TypeError) as err:
            del api_key  # error reporters send every frame's locals: this one held the key
            raise construction_error(err) from None
        self._transport = transport
        mounts: dict[str, httpx.BaseTransport | None] | None = None
        if transport is None:
            # Our own pools on the deadline's network backend: the deadline also bounds
            # the status line and headers (see ``_deadline``), proxied or not.
            transport, mounts = pool_transports(DeadlineBackend())
        self._http = httpx.Client(
            base_url=self.base_url, timeout=self.timeout, transport=transport, mounts=mounts
        )

    def as_async(self) -> AsyncClient:
        """An AsyncClient with this client's configuration and the *same* rate-limit pacer.

        What it learns of the rate limit shows in this client's :attr:`rate_limit` too.
        The fleet loader uses it to fan out concurrently from synchronous code; the
        caller closes it. A transport that can also serve async requests (the
        sandbox's) is shared; otherwise the twin makes its own connections.
        """
        from ccanalytics.api._async import AsyncClient

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
            deadline=self.deadline,
            max_response_size=self.max_response_size,
        )
        twin._clock = self._clock  # the same choice, and one warning for both
        twin._pacer = self._pacer
        twin._shares_status_with = self
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

    # -- the request loop -------------------------------------------------------------------

    def _request(self, method: str, path: str, *, json: Any = None, shape: Shape | None) -> Any:
        call = self._start(method, path, json, shape)
        while True:
            refused = self._pace(call)
            if refused is not None:
                raise self._finished(refused, method, path)
            outcome = self._attempt(call)
            if not isinstance(outcome, CCAnalyticsError):
                return outcome
            delay = self._retry_delay(outcome, call)
            if delay is None:
                raise self._finished(outcome, method, path)
            self._log_retry(call, delay, outcome)
            time.sleep(delay)
            call.attempt += 1

    def _pace(self, call: _Call) -> RateLimitError | None:
        """Wait until the rate limit lets a request go, and book it; the error if it never will."""
        started = time.monotonic()
        try:
            self._pacer.acquire()
        except RateLimitError as err:
            return err
        finally:
            call.extend(time.monotonic() - started)
        return None

    def _attempt(self, call: _Call) -> Any:
        """Send once and read the answer: the result, or the error it ends in (returned).

        Every network operation of the exchange, status line and headers included,
        ends by the call's deadline (see :mod:`ccanalytics.api._deadline`).
        """
        with call_deadline(call.deadline_at):
            return self._exchange(call)

    def _is_closed(self) -> bool:
        return self._http.is_closed

    def _exchange(self, call: _Call) -> Any:
        request = self._http.build_request(
            call.method,
            call.path,
            json=call.json,
            headers=self._headers(),
            timeout=self._attempt_timeout(call),
        )
        try:
            response = self._http.send(request, stream=True)
        except (httpx.HTTPError, RuntimeError) as exc:  # RuntimeError: the client is closed
            self._pacer.cancel()
            return self._transport_error(exc, call)
        except BaseException:
            self._pacer.cancel()  # interrupted: give the booked slot back
            raise
        try:
            content = self._read_body(response, call)
        except ReadStopped as stop:
            return stop.error
        except httpx.HTTPError as exc:
            return self._transport_error(exc, call)
        finally:
            response.close()
            self._settle(response, call)
        return self._outcome(response, content, call)

    def _read_body(self, response: httpx.Response, call: _Call) -> bytes:
        limits = self._body_limits(response, call)
        for chunk in response.iter_bytes():
            limits.add(chunk)
        return limits.content()

    # -- the operations ---------------------------------------------------------------------

    def list_cluster_pods(self, cluster_id: str) -> list[Pod]:
        """``GET /v2/clusters/{id}/pods``: the cluster's member pods."""
        pods: list[Pod] = self._request("GET", pods_path(cluster_id), shape=pods_or_error)
        return pods

    def list_cluster_pods_raw(self, cluster_id: str) -> RawListing:
        """``GET /v2/clusters/{id}/pods`` undecoded: the body's bytes, when the service
        answered (``observed_at``) and the path.

        Every failure is handled as for :meth:`list_cluster_pods` (retries, typed
        errors); only the decoding is left to the caller, which is how the frames build
        a 50,000-pod frame without a model per pod. The body holds pods' ``env`` values:
        keep it out of logs (its repr shows only its size). A body that turns out not to
        be a listing is :meth:`malformed`.
        """
        listing: RawListing = self._request("GET", pods_path(cluster_id), shape=None)
        return listing

    def get_registry(self, registry_id: str) -> Registry:
        """``GET /v2/registries/{id}``: a registry credential (never its username/password)."""
        registry: Registry = self._request(
            "GET", registry_path(registry_id), shape=registry_or_error
        )
        return registry

    def update_ssh_keys(self, keys: list[str]) -> SshKeys:
        """``PUT /v2/account/ssh-keys``: **replace** the account's whole key set.

        Every key is checked locally with the server's exact rule first; if any
        fails, :class:`InvalidSshKeysError` lists them all and nothing is sent.
        ``[]`` removes every key and is accepted only as an explicit empty list.
        """
        body = ssh_keys_body(keys)
        result: SshKeys = self._request("PUT", SSH_KEYS_PATH, json=body, shape=ssh_keys_or_error)
        return result

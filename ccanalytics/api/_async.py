"""``AsyncClient``: the three operations of the API v2 as coroutines (httpx.AsyncClient)."""

from __future__ import annotations

import asyncio
import time
from types import TracebackType
from typing import Any, Self

import httpx

from ccanalytics.api import _config
from ccanalytics.api._base import Shape, _BaseClient, _Call, construction_error
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
from ccanalytics.api._transport import tls_context
from ccanalytics.api.models import Pod, Registry, SshKeys
from ccanalytics.errors import ApiTimeoutError, CCAnalyticsError, RateLimitError

__all__ = ["AsyncClient"]


class AsyncClient(_BaseClient):
    """Asynchronous client of the API v2; the same methods as :class:`Client`, as coroutines.

    The options are :class:`Client`'s (``trust_service_clock`` included), plus
    ``limits``, the connection pool's sizes (default: 32 connections, 16 kept alive).
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | httpx.Timeout = _config.DEFAULT_TIMEOUT,
        max_retries: int = _config.DEFAULT_MAX_RETRIES,
        transport: httpx.AsyncBaseTransport | None = None,
        limits: httpx.Limits | None = None,
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
        self._limits = limits
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=self.timeout,
            transport=transport,
            limits=limits or httpx.Limits(max_connections=32, max_keepalive_connections=16),
            verify=tls_context(),  # httpx's default, built once (its own transport and proxies')
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

    def as_async(self) -> AsyncClient:
        """A fresh AsyncClient (own connection pool, for another event loop), with this
        client's configuration and the *same* rate-limit pacer; what it learns of the
        rate limit shows in this client's :attr:`rate_limit` too. The caller closes it."""
        twin = AsyncClient(
            self._api_key,
            self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            transport=self._transport,
            limits=self._limits,
            deadline=self.deadline,
            max_response_size=self.max_response_size,
        )
        twin._clock = self._clock  # the same choice, and one warning for both
        twin._pacer = self._pacer
        twin._shares_status_with = self
        return twin

    # -- the request loop (as Client's, awaiting) ------------------------------------------

    async def _request(
        self, method: str, path: str, *, json: Any = None, shape: Shape | None
    ) -> Any:
        call = self._start(method, path, json, shape)
        while True:
            refused = await self._pace(call)
            if refused is not None:
                raise self._finished(refused, method, path)
            outcome = await self._attempt(call)
            if not isinstance(outcome, CCAnalyticsError):
                return outcome
            delay = self._retry_delay(outcome, call)
            if delay is None:
                raise self._finished(outcome, method, path)
            self._log_retry(call, delay, outcome)
            await asyncio.sleep(delay)
            call.attempt += 1

    async def _pace(self, call: _Call) -> RateLimitError | None:
        """Wait until the rate limit lets a request go, and book it; the error if it never will."""
        started = time.monotonic()
        try:
            await self._pacer.acquire_async()
        except RateLimitError as err:
            return err
        finally:
            call.extend(time.monotonic() - started)
        return None

    async def _attempt(self, call: _Call) -> Any:
        """Send once and read the answer: the result, or the error it ends in (returned).

        The whole exchange, status line and headers included, runs under the call's
        deadline (a drip of bytes never trips a per-read timeout).
        """
        try:
            async with asyncio.timeout(call.remaining()):
                return await self._exchange(call)
        except TimeoutError:
            return ApiTimeoutError("timed out: the call's deadline passed")

    def _is_closed(self) -> bool:
        return self._http.is_closed

    async def _exchange(self, call: _Call) -> Any:
        request = self._http.build_request(
            call.method,
            call.path,
            json=call.json,
            headers=self._headers(),
            timeout=self._attempt_timeout(call),
        )
        try:
            response = await self._http.send(request, stream=True)
        except (httpx.HTTPError, RuntimeError) as exc:  # RuntimeError: the client is closed
            self._pacer.cancel()
            return self._transport_error(exc, call)
        except BaseException:
            self._pacer.cancel()  # cancelled task: give the booked slot back
            raise
        try:
            content = await self._read_body(response, call)
        except ReadStopped as stop:
            return stop.error
        except httpx.HTTPError as exc:
            return self._transport_error(exc, call)
        finally:
            await response.aclose()
            self._settle(response, call)
        return self._outcome(response, content, call)

    async def _read_body(self, response: httpx.Response, call: _Call) -> bytes:
        limits = self._body_limits(response, call)
        async for chunk in response.aiter_bytes():
            limits.add(chunk)
        return limits.content()

    # -- the operations ---------------------------------------------------------------------

    async def list_cluster_pods_raw(self, cluster_id: str) -> RawListing:
        """``GET /v2/clusters/{id}/pods`` undecoded: the body's bytes, when the service
        answered and the path (see :meth:`Client.list_cluster_pods_raw`)."""
        listing: RawListing = await self._request("GET", pods_path(cluster_id), shape=None)
        return listing

    async def list_cluster_pods(self, cluster_id: str) -> list[Pod]:
        """``GET /v2/clusters/{id}/pods``: the cluster's member pods."""
        pods: list[Pod] = await self._request("GET", pods_path(cluster_id), shape=pods_or_error)
        return pods

    async def get_registry(self, registry_id: str) -> Registry:
        """``GET /v2/registries/{id}``: a registry credential (never its username/password)."""
        registry: Registry = await self._request(
            "GET", registry_path(registry_id), shape=registry_or_error
        )
        return registry

    async def update_ssh_keys(self, keys: list[str]) -> SshKeys:
        """``PUT /v2/account/ssh-keys``: replace the whole key set (see :meth:`Client.update_ssh_keys`)."""
        body = ssh_keys_body(keys)
        result: SshKeys = await self._request(
            "PUT", SSH_KEYS_PATH, json=body, shape=ssh_keys_or_error
        )
        return result

"""The call's deadline down at the socket, for the synchronous client.

httpx bounds each read by ``timeout`` but has no total deadline, so a server that
drips its status line and headers a byte at a time holds a call for as long as it
likes (the body is checked chunk by chunk in ``_response.BodyLimits``). The async
client puts the whole attempt under ``asyncio.timeout``; threads have no such
thing, so the synchronous client wraps httpcore's network backend: every connect,
read and write has its timeout cut to what is left of the deadline of the call
running on this thread (a context variable set around each attempt).

The client hands :class:`DeadlineBackend` to the httpcore pools it builds itself
(``_transport``: httpcore's public ``network_backend=`` seam), for direct
connections and proxied ones alike; a transport passed by the caller is left alone.

Its streams also read up to :data:`READ_SIZE` bytes at a time where httpcore asks for
64 KiB: every read is one h11 event and a few copies in Python, and a 95 MB listing
was ~1,450 of them, a fifth of a 50,000-pod load. h11 buffers whatever a read
returns, so reading more than asked changes nothing but the count; a TLS socket
returns one record (16 KiB) per read whatever the size.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpcore

__all__ = ["READ_SIZE", "DeadlineBackend", "call_deadline"]

#: The most one socket read asks for (httpcore asks for 64 KiB). 1 MiB read a
#: 95 MB listing over loopback in ~35 % less time than 64 KiB; 256 KiB gained less,
#: and 4 MiB lost some of it again (blocks beyond the CPU's caches).
READ_SIZE = 1024 * 1024

_deadline_at: ContextVar[float | None] = ContextVar("ccanalytics_deadline_at", default=None)


@contextmanager
def call_deadline(at: float | None) -> Iterator[None]:
    """Network operations in this block end by ``at`` (a :func:`time.monotonic` instant)."""
    token = _deadline_at.set(at)
    try:
        yield
    finally:
        _deadline_at.reset(token)


def _cut(timeout: float | None) -> float | None:
    at = _deadline_at.get()
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the call's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max(max_bytes, READ_SIZE), _cut(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _cut(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, _cut(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """``inner`` (default: httpcore's own), every operation cut to the call's deadline."""

    def __init__(self, inner: httpcore.NetworkBackend | None = None) -> None:
        self._inner = inner if inner is not None else httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, _cut(timeout), local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(path, _cut(timeout), socket_options)
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)

"""The synchronous client's own transport: httpcore's pool on a network backend of ours.

httpx.HTTPTransport builds its httpcore pool with httpcore's default network backend
and takes no ``network_backend=``; httpcore's pools do, as their public seam. So the
client builds the pool itself, with exactly the settings ``httpx.Client()`` gives the
transports it builds (all httpx's defaults: certificates checked against certifi's CAs,
or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``; HTTP/1.1 only; at most 100 connections of
which 20 are kept alive for 5 s; the proxies of ``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY`` and ``NO_PROXY``), and hands it the backend (``_deadline``'s).
:class:`PoolTransport` converts requests and responses between httpx and httpcore and
maps httpcore's exceptions to httpx's, as httpx's own transport does, so the client
sees exactly what it saw from ``httpx.HTTPTransport``.

Only httpx's and httpcore's public names are used.
"""

from __future__ import annotations

import functools
import ipaddress
import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self
from urllib.request import getproxies

import httpcore
import httpx

if TYPE_CHECKING:
    import ssl  # httpx imports it only when a context is built: so do we

__all__ = [
    "DEFAULT_LIMITS",
    "PoolTransport",
    "environment_proxies",
    "pool_transports",
    "tls_context",
]

#: The pool sizes ``httpx.Client()`` gives its transports (httpx's own default, which it
#: does not export; a test checks it against ``httpx.HTTPTransport``'s signature).
DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)

#: Each httpcore exception and the httpx exception httpx's transport raises for it.
_EXCEPTIONS: dict[type[Exception], type[httpx.HTTPError]] = {
    httpcore.TimeoutException: httpx.TimeoutException,
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.NetworkError: httpx.NetworkError,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
    httpcore.ProtocolError: httpx.ProtocolError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
}


@contextmanager
def httpcore_errors_as_httpx() -> Iterator[None]:
    """httpcore's exceptions raised as the most specific httpx exception for them.

    The first class of the exception's MRO found in the table is the most specific one
    (the table's classes form a tree), which is the one httpx's transport picks.
    """
    try:
        yield
    except Exception as exc:
        mapped = next((_EXCEPTIONS[c] for c in type(exc).__mro__ if c in _EXCEPTIONS), None)
        if mapped is None:
            raise
        raise mapped(str(exc)) from exc


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: httpcore.Response) -> None:
        self._response = stream

    def __iter__(self) -> Iterator[bytes]:
        with httpcore_errors_as_httpx():
            yield from self._response.iter_stream()

    def close(self) -> None:
        self._response.close()


Pool = httpcore.ConnectionPool | httpcore.HTTPProxy | httpcore.SOCKSProxy


class PoolTransport(httpx.BaseTransport):
    """An httpx transport over an httpcore pool whose network backend is ``backend``.

    ``proxy``: go through this proxy (``http``, ``https`` or ``socks5``), as
    ``httpx.HTTPTransport(proxy=...)`` does; ``None``: connect directly.
    """

    def __init__(
        self, backend: httpcore.NetworkBackend, *, proxy: httpx.Proxy | None = None
    ) -> None:
        self._core = _pool(backend, proxy)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if not isinstance(request.stream, httpx.SyncByteStream):  # an async-only body
            raise TypeError("this transport sends synchronous request bodies only")
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with httpcore_errors_as_httpx():
            response = self._core.handle_request(core)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response),
            extensions=response.extensions,
        )

    def close(self) -> None:
        with httpcore_errors_as_httpx():
            self._core.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        self.close()


def tls_context() -> ssl.SSLContext:
    """The context httpx builds by default (certifi's CAs, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR``), one per process and setting, shared by every client.

    Building one reads and parses the whole CA bundle (20 ms here), and each Client,
    AsyncClient and fleet load's async twin built its own: a collect paid it every
    time. An ``SSLContext`` is made to be shared by connections and threads; clients
    built after the variables change get a context of the new setting (a bundle
    rewritten in place is read again by a new process, as by a long-lived client).
    """
    return _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=8)
def _tls_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    del cafile, capath  # the cache's key only: httpx reads the same two variables
    return httpx.create_ssl_context()  # verify=True, trust_env=True: its default


def _pool(backend: httpcore.NetworkBackend, proxy: httpx.Proxy | None) -> Pool:
    """The pool ``httpx.HTTPTransport(proxy=proxy)`` builds, on ``backend``."""
    sizes = DEFAULT_LIMITS
    common: dict[str, Any] = {  # what every pool httpx builds shares
        "ssl_context": tls_context(),
        "max_connections": sizes.max_connections,
        "max_keepalive_connections": sizes.max_keepalive_connections,
        "keepalive_expiry": sizes.keepalive_expiry,
        "http1": True,
        "http2": False,
        "network_backend": backend,
    }
    if proxy is None:
        return httpcore.ConnectionPool(**common)
    proxy_url = httpcore.URL(
        scheme=proxy.url.raw_scheme,
        host=proxy.url.raw_host,
        port=proxy.url.port,
        target=proxy.url.raw_path,
    )
    if proxy.url.scheme in ("http", "https"):
        return httpcore.HTTPProxy(
            proxy_url=proxy_url,
            proxy_auth=proxy.raw_auth,
            proxy_headers=proxy.headers.raw,
            proxy_ssl_context=proxy.ssl_context,
            **common,
        )
    if proxy.url.scheme in ("socks5", "socks5h"):
        # Without the socksio package httpcore raises ImportError here, as httpx does.
        return httpcore.SOCKSProxy(proxy_url=proxy_url, proxy_auth=proxy.raw_auth, **common)
    raise ValueError(
        "Proxy protocol must be either 'http', 'https', 'socks5', or 'socks5h',"
        f" but got {proxy.url.scheme!r}."
    )


def environment_proxies() -> dict[str, str | None]:
    """httpx's mount patterns for the proxy environment variables (``None``: no proxy).

    What ``httpx.Client()`` reads when it builds its own transport; a client given a
    transport reads none, so the client reads them here, by httpx's rules:
    ``HTTP_PROXY``, ``HTTPS_PROXY`` and ``ALL_PROXY`` (a bare host means ``http://``),
    and each ``NO_PROXY`` entry (``*``: no proxy at all; ``.example.com``: its
    subdomains; ``example.com``: it and its subdomains; addresses and ``localhost``
    exactly).
    """
    found = getproxies()
    mounts: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        if found.get(scheme):
            host = found[scheme]
            mounts[f"{scheme}://"] = host if "://" in host else f"http://{host}"
    for entry in (host.strip() for host in found.get("no", "").split(",")):
        if entry == "*":
            return {}
        if not entry:
            continue
        if "://" in entry:
            mounts[entry] = None
        elif _is_address(entry, ipaddress.IPv4Address) or entry.lower() == "localhost":
            mounts[f"all://{entry}"] = None
        elif _is_address(entry, ipaddress.IPv6Address):
            mounts[f"all://[{entry}]"] = None
        else:
            mounts[f"all://*{entry}"] = None
    return mounts


def _is_address(
    entry: str, kind: type[ipaddress.IPv4Address] | type[ipaddress.IPv6Address]
) -> bool:
    try:
        kind(entry.split("/")[0])
    except ValueError:
        return False
    return True


def pool_transports(
    backend: httpcore.NetworkBackend,
) -> tuple[PoolTransport, dict[str, httpx.BaseTransport | None]]:
    """The transport and proxy mounts for ``httpx.Client(transport=..., mounts=...)``:
    what ``httpx.Client()`` would build itself, on ``backend``."""
    mounts: dict[str, httpx.BaseTransport | None] = {
        pattern: None if url is None else PoolTransport(backend, proxy=httpx.Proxy(url))
        for pattern, url in environment_proxies().items()
    }
    return PoolTransport(backend), mounts

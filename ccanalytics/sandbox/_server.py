"""Serving the sandbox over real loopback HTTP, and in process as an httpx transport."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import logging
import selectors
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

import httpx

from ccanalytics.sandbox._app import (
    FULL_ACCESS_KEY,
    MAX_BODY_BYTES,
    SandboxApp,
    SandboxResponse,
)
from ccanalytics.sandbox._clock import SimulatedClock

__all__ = ["Sandbox", "SandboxTransport", "serve"]

logger = logging.getLogger("ccanalytics.sandbox")

_REASONS = {status.value: status.phrase for status in HTTPStatus}
#: A too-large body up to this size (bytes) is read and dropped after the 413.
_DRAIN_LIMIT = 16 << 20


class _Handler(BaseHTTPRequestHandler):
    """Every method, and every request the parser refuses, gets problem+json.

    ``BaseHTTPRequestHandler`` answers unknown methods and unparsable requests with an
    HTML page; :meth:`send_error` is overridden so that never happens, and any method
    name is served (the app answers 405 with ``Allow``).
    """

    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, so clients reuse connections
    # Headers and body leave in two writes: with Nagle's algorithm on, the body waits
    # for the client's delayed ACK (~40 ms per answer on loopback).
    disable_nagle_algorithm = True

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):  # any method: GET, HEAD, OPTIONS, TRACE, FOO...
            return self._serve
        raise AttributeError(name)

    def _serve(self) -> None:
        app = self.server.app
        body, refusal = self._read_body()
        try:
            if refusal is not None:
                headers = dict(self.headers.items())
                response = app.reject(self.command, self.path, *refusal, headers=headers)
            else:
                response = app.handle(self.command, self.path, dict(self.headers.items()), body)
        except Exception:  # a bug must still answer in the documented shape
            logger.exception("sandbox: error answering %s", self.command)
            response = app.reject(self.command, self.path, 500, "internal sandbox error")
        self._send(response)

    def _read_body(self) -> tuple[bytes, tuple[int, str] | None]:
        """The request body, or (status, detail) when it cannot be read safely.

        A refused body is never read, so the connection is closed after the answer
        (what follows on the socket cannot be framed).
        """
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            return b"", (411, "send the body with a Content-Length, not Transfer-Encoding")
        values = self.headers.get_all("Content-Length") or []
        if not values:
            return b"", None
        text = values[0].strip()
        if len(values) > 1 or not text.isdigit() or not text.isascii():
            self.close_connection = True
            return b"", (400, "Content-Length must be one non-negative integer")
        length = int(text)
        if length > MAX_BODY_BYTES:
            # Discard a body we can afford to read, so the client sees the 413 and not a
            # reset; past that, close without reading.
            if length > _DRAIN_LIMIT or not self._discard(length):
                self.close_connection = True
            return b"", (413, f"the body exceeds {MAX_BODY_BYTES} bytes")
        body = self.rfile.read(length) if length else b""
        if len(body) < length:
            self.close_connection = True
            return b"", (400, "the body is shorter than its Content-Length")
        return body, None

    def _discard(self, length: int) -> bool:
        """Read and drop ``length`` bytes; False when the client sent fewer."""
        while length > 0:
            chunk = self.rfile.read(min(length, 1 << 16))
            if not chunk:
                return False
            length -= len(chunk)
        return True

    def _send(self, response: SandboxResponse) -> None:
        app = self.server.app
        fault = response.wire_fault
        if app.latency:
            time.sleep(app.latency)
        if fault and fault.kind == "slow":
            time.sleep(fault.seconds)
        if fault and fault.kind == "reset":
            # SO_LINGER 0: the close sends RST, as a crashing proxy does.
            self.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            self.close_connection = True
            return
        # Our own Date (the simulated clock's, when there is one), never a second one.
        self.log_request(response.status)
        self.send_response_only(response.status)
        self.send_header("Server", self.version_string())
        if not any(name.lower() == "date" for name in response.headers):
            self.send_header("Date", self.date_time_string())
        body = response.body
        declared = len(body)
        if fault and fault.kind == "truncate":
            declared, body = len(body), body[: len(body) // 2]
            self.close_connection = True
        for name, value in response.headers.items():
            if name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(declared))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        try:
            if self.command != "HEAD":  # a HEAD answer has headers only
                self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            self.close_connection = True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Refusals of the request parser (bad request line, huge headers): problem+json."""
        self.close_connection = True
        command = getattr(self, "command", None) or "-"
        path = getattr(self, "path", None) or "-"
        if not hasattr(self, "headers"):  # the request line itself was refused
            self.headers = http.client.HTTPMessage()
        if self.request_version == "HTTP/0.9":  # unparsed: answer in HTTP/1.1 anyway
            self.request_version = self.protocol_version
        detail = message or _REASONS.get(code, "request refused")
        with contextlib.suppress(OSError):  # the client is already gone
            self._send(self.server.app.reject(command, path, code, detail))

    def log_message(self, format: str, *args: Any) -> None:
        # Request lines only at DEBUG: never headers (they carry the bearer key).
        logger.debug("sandbox %s - %s", self.address_string(), format % args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], app: SandboxApp) -> None:
        self.app = app
        super().__init__(address, _Handler)
        # serve_forever looks at its stop flag once per poll interval, and shutdown()
        # waits for that look: a wait at every stop, or a thread waking all the time
        # (and taking the GIL from the caller's work). A byte on this pair wakes the
        # loop below the moment it is told to stop, and nothing wakes it while idle.
        self._wake, self._waker = socket.socketpair()

    def serve_until_stopped(self) -> None:
        """Serve each connection as it arrives until :meth:`stop_serving`."""
        with selectors.DefaultSelector() as selector:
            selector.register(self, selectors.EVENT_READ)
            selector.register(self._wake, selectors.EVENT_READ)
            while all(key.fileobj is not self._wake for key, _ in selector.select()):
                self.handle_request()  # one is waiting: accepted and handed to a thread

    def stop_serving(self) -> None:
        """Make :meth:`serve_until_stopped` return (at once: it need not be waiting)."""
        self._waker.send(b"\0")

    def server_close(self) -> None:
        super().server_close()
        self._wake.close()
        self._waker.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        logger.debug("sandbox: connection from %s ended abruptly", client_address)


class Sandbox:
    """The sandbox served on ``127.0.0.1`` in a background thread.

    >>> with Sandbox() as sb:                      # doctest: +SKIP
    ...     with sb.client() as client:
    ...         client.list_cluster_pods("cl-llama70b-train")

    ``port=0`` (the default) binds a free port; ``url`` tells which. ``app`` is the
    :class:`SandboxApp` being served: configure quotas, latency and faults on it,
    and read what the server received from ``app.stats``.
    """

    def __init__(
        self,
        app: SandboxApp | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        **app_options: Any,
    ) -> None:
        if app is not None and app_options:
            raise TypeError("pass either app= or SandboxApp options, not both")
        self.app = app if app is not None else SandboxApp(**app_options)
        self._server = _Server((host, port), self.app)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        return f"http://{host}:{port}"

    def __repr__(self) -> str:
        state = "serving" if self._thread is not None else "not started"
        return f"<Sandbox {self.url} {state}, {len(self.app.data.clusters)} clusters>"

    @property
    def api_key(self) -> str:
        """The sandbox's full-access key (not a secret: it only opens the sandbox)."""
        return FULL_ACCESS_KEY

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_until_stopped,
                daemon=True,
                name="ccanalytics-sandbox",
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.stop_serving()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def client(self, api_key: str | None = None, **kw: Any) -> Any:
        """A :class:`ccanalytics.Client` for this sandbox (full access unless ``api_key``).

        On a simulated clock the client trusts the sandbox's ``Date`` (its simulated
        time, by design) unless ``trust_service_clock=False`` is given.
        """
        from ccanalytics.api import Client

        return Client(api_key or FULL_ACCESS_KEY, self.url, **self._client_options(kw))

    def async_client(self, api_key: str | None = None, **kw: Any) -> Any:
        """A :class:`ccanalytics.AsyncClient` for this sandbox (see :meth:`client`)."""
        from ccanalytics.api import AsyncClient

        return AsyncClient(api_key or FULL_ACCESS_KEY, self.url, **self._client_options(kw))

    def _client_options(self, given: dict[str, Any]) -> dict[str, Any]:
        if isinstance(self.app.clock, SimulatedClock):
            return {"trust_service_clock": True, **given}
        return given


def serve(port: int = 8765, host: str = "127.0.0.1", **app_options: Any) -> None:
    """Serve the sandbox until interrupted (``ccanalytics sandbox --port N``)."""
    sandbox = Sandbox(host=host, port=port, **app_options)
    print(
        f"ccanalytics sandbox on {sandbox.url}  (API key: {FULL_ACCESS_KEY}); Ctrl-C to stop",
        flush=True,
    )
    clock = sandbox.app.clock
    if isinstance(clock, SimulatedClock):
        print(f"simulated clock: {clock.now().isoformat()}, speed {clock.speed:g}x", flush=True)
    try:
        sandbox._server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        sandbox._server.server_close()


class SandboxTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """The sandbox in process: an httpx transport for ``Client(transport=...)``.

    Wire faults become the httpx exceptions a real socket would raise
    (``reset`` -> ``ReadError``, ``truncate`` -> ``RemoteProtocolError``, ``slow``
    past the request's read timeout -> ``ReadTimeout``).
    """

    def __init__(self, app: SandboxApp | None = None, **app_options: Any) -> None:
        self.app = app if app is not None else SandboxApp(**app_options)

    def _respond(self, request: httpx.Request, body: bytes) -> tuple[SandboxResponse, float]:
        raw_path = request.url.raw_path.decode("ascii")
        response = self.app.handle(request.method, raw_path, dict(request.headers), body)
        fault = response.wire_fault
        delay = self.app.latency + (fault.seconds if fault and fault.kind == "slow" else 0.0)
        return response, delay

    def _finish(
        self, request: httpx.Request, response: SandboxResponse, waited: float
    ) -> httpx.Response:
        fault = response.wire_fault
        timeout = request.extensions.get("timeout", {}).get("read")
        if fault and fault.kind == "slow" and timeout is not None and waited > timeout:
            raise httpx.ReadTimeout("timed out (sandbox slow fault)", request=request)
        if fault and fault.kind == "reset":
            raise httpx.ReadError("connection reset by peer (sandbox fault)", request=request)
        if fault and fault.kind == "truncate":
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete body", request=request
            )
        return httpx.Response(
            response.status, headers=response.headers, content=response.body, request=request
        )

    def _bounded(self, request: httpx.Request, delay: float) -> float:
        timeout = request.extensions.get("timeout", {}).get("read")
        return delay if timeout is None else min(delay, timeout + 0.01)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response, delay = self._respond(request, request.read())
        if delay:
            time.sleep(self._bounded(request, delay))
        return self._finish(request, response, delay)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response, delay = self._respond(request, await request.aread())
        if delay:
            await asyncio.sleep(self._bounded(request, delay))
        return self._finish(request, response, delay)

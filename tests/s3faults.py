"""A fault proxy on 127.0.0.1 in front of the local S3 server (tests/s3server.py).

Requests pass through unchanged (the same method, path, headers and body: the client's
signature still holds) unless a :class:`Fault` matches, which then does what a flaky
network or a busy S3 would:

- ``"500-after"``: forward the request (S3 does what it asks), answer 500 InternalError;
- ``"reset-after"``: forward the request, then reset the connection (no answer at all);
- ``"503"``: answer 503 SlowDown without forwarding (nothing happens in S3);
- ``"truncate-body"``: forward, send the answer's headers (the whole ``Content-Length``)
  and half its body, then close the connection;
- ``"reset-body"``: the same, then reset the connection instead of closing it.

A fault matches a request's method and a prefix of its path (``/bucket/key``, unquoted:
the clients here address S3 by path), for its first ``times`` matches (``None``: all).
Point a store at it with ``?endpoint_url=`` (:attr:`FaultProxy.endpoint`). Every
request is logged in :attr:`FaultProxy.log` with what the proxy did to it.

Use it as a context manager, or through the ``fault_proxy`` fixture
(``from s3faults import fault_proxy`` in a conftest).
"""

from __future__ import annotations

import contextlib
import http.client
import io
import socket
import socketserver
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit

import pytest

__all__ = ["Fault", "FaultProxy", "fault_proxy"]

Action = Literal["500-after", "reset-after", "503", "truncate-body", "reset-body"]

_ERROR_BODY = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
    "<Message>{message}</Message><RequestId>fault-proxy</RequestId></Error>"
)
_ANSWERS = {
    "500-after": (
        500,
        "Internal Server Error",
        "InternalError",
        "We encountered an internal error",
    ),
    "503": (503, "Slow Down", "SlowDown", "Please reduce your request rate"),
}


@dataclass
class Fault:
    """What to do to the requests with ``method`` whose path starts with ``prefix``."""

    method: str
    prefix: str
    action: Action
    times: int | None = None
    #: How many requests it has faulted so far.
    done: int = 0

    def takes(self, method: str, path: str) -> bool:
        if method != self.method or not path.startswith(self.prefix):
            return False
        return self.times is None or self.done < self.times


@dataclass(frozen=True)
class Logged:
    """One request through the proxy: its method, path, and the action taken (or the
    status S3 answered when it passed through)."""

    method: str
    path: str
    outcome: str


class FaultProxy:
    """The proxy (see the module docstring); ``upstream`` is the S3 server's URL."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.faults: list[Fault] = []
        self.log: list[Logged] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def add(self, method: str, prefix: str, action: Action, *, times: int | None = None) -> Fault:
        """Fault the next ``times`` requests (``None``: every one) with ``method`` under ``prefix``."""
        fault = Fault(method, prefix, action, times)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear(self) -> None:
        """No faults from now on (the log stays)."""
        with self._lock:
            self.faults.clear()

    def outcomes(self, method: str, prefix: str) -> list[str]:
        """What happened to each logged request with ``method`` under ``prefix``, in order."""
        with self._lock:
            return [e.outcome for e in self.log if e.method == method and e.path.startswith(prefix)]

    # -- one connection ------------------------------------------------------------------

    def _serve(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        try:
            while self._one_request(conn, reader):
                pass
        except (OSError, ValueError):
            pass  # the client went away
        finally:
            with contextlib.suppress(OSError):
                reader.close()
                conn.close()

    def _one_request(self, conn: socket.socket, reader: io.BufferedIOBase) -> bool:
        line = reader.readline(65537)
        if not line.strip():
            return False
        method, target, _ = line.decode("latin-1").split(" ", 2)
        headers: list[tuple[str, str]] = []
        while True:
            raw = reader.readline(65537).decode("latin-1")
            if raw in ("\r\n", "\n", ""):
                break
            name, _, value = raw.partition(":")
            headers.append((name.strip(), value.strip()))
        lower = {name.lower(): value for name, value in headers}
        if lower.get("expect", "").lower() == "100-continue":
            conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = self._body(reader, lower)
        path = unquote(target.split("?", 1)[0])  # the key as the store names it
        fault = self._fault(method, path)
        action = fault.action if fault is not None else None
        if action == "503":
            self._record(method, target, "503")
            return self._answer_error(conn, "503")
        status, reason, answer_headers, answer = self._forward(method, target, headers, body)
        if action is None:
            self._record(method, target, str(status))
            self._send(conn, status, reason, answer_headers, answer)
            return lower.get("connection", "").lower() != "close"
        self._record(method, target, f"{action} (S3 answered {status})")
        if action == "500-after":
            return self._answer_error(conn, "500-after")
        if action == "reset-after":
            _reset(conn)
            return False
        half = answer[: len(answer) // 2]
        self._send(conn, status, reason, answer_headers, half, length=len(answer))
        if action == "reset-body":
            _reset(conn)
        else:
            conn.shutdown(socket.SHUT_RDWR)
        return False

    def _body(self, reader: io.BufferedIOBase, lower: dict[str, str]) -> bytes:
        if "content-length" in lower:
            return bytes(reader.read(int(lower["content-length"])))
        if lower.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(reader.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while reader.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(reader.read(size))
                reader.readline()
        return b""

    def _fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.takes(method, path):
                    fault.done += 1
                    return fault
        return None

    def _record(self, method: str, target: str, outcome: str) -> None:
        with self._lock:
            self.log.append(Logged(method, unquote(target.split("?", 1)[0]), outcome))

    def _forward(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        upstream = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            upstream.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for name, value in headers:
                if name.lower() in ("expect", "transfer-encoding", "content-length"):
                    continue
                upstream.putheader(name, value)
            if body or method in ("PUT", "POST"):
                upstream.putheader("Content-Length", str(len(body)))
            upstream.endheaders(body)
            reply = upstream.getresponse()
            answer = reply.read()
            # A HEAD's Content-Length is the object's size, not this answer's: kept.
            dropped = ("transfer-encoding", "connection")
            if method != "HEAD":
                dropped += ("content-length",)
            kept = [(k, v) for k, v in reply.getheaders() if k.lower() not in dropped]
            return reply.status, reply.reason, kept, answer
        finally:
            upstream.close()

    def _send(
        self,
        conn: socket.socket,
        status: int,
        reason: str,
        headers: list[tuple[str, str]],
        body: bytes,
        *,
        length: int | None = None,
    ) -> None:
        lines = [f"HTTP/1.1 {status} {reason}"]
        lines += [f"{name}: {value}" for name, value in headers]
        if not any(name.lower() == "content-length" for name, _ in headers):
            lines.append(f"Content-Length: {len(body) if length is None else length}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        conn.sendall(head + body)

    def _answer_error(self, conn: socket.socket, action: str) -> bool:
        status, reason, code, message = _ANSWERS[action]
        body = _ERROR_BODY.format(code=code, message=message).encode()
        self._send(conn, status, reason, [("Content-Type", "application/xml")], body)
        return True


def _reset(conn: socket.socket) -> None:
    """Close ``conn`` with a TCP reset (SO_LINGER 0), as a dropped connection reads."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


@pytest.fixture
def fault_proxy(s3_endpoint: str) -> Iterator[FaultProxy]:
    """A :class:`FaultProxy` in front of the session's S3 server, with no fault yet."""
    with FaultProxy(s3_endpoint) as proxy:
        yield proxy

"""A raw HTTP server on 127.0.0.1 for tests that need bytes no real server would send.

``raw_server(respond)`` accepts connections on a free loopback port and hands each one,
after reading the request, to ``respond(conn)``, which writes whatever it likes (a
dripping body, a 2 GB ``Content-Length`` that never comes, invalid UTF-8).
``json_body(body)`` is the usual ``respond``: a 200 ``application/json`` answer.
``webhook_receiver()`` is a well-behaved one instead: a webhook that keeps what is posted.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = [
    "Receiver",
    "client_side_threads",
    "connection_server",
    "json_body",
    "raw_server",
    "webhook_receiver",
]


@contextlib.contextmanager
def connection_server(
    handle: Callable[[socket.socket, threading.Event], None], *, scheme: str = "http"
) -> Iterator[str]:
    """A loopback server handing each accepted connection, unread, to ``handle(conn, stop)``.

    One thread per connection; ``stop`` is set when the block ends (a handler that drips
    can stop early). Yields the server's URL.
    """
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            if stop.is_set():  # the block's end waking this loop: not a client
                conn.close()
                break
            threading.Thread(target=handle, args=(conn, stop), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"{scheme}://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        # A connection wakes the accept at once, rather than at its next timeout.
        with contextlib.suppress(OSError):
            socket.create_connection(listener.getsockname(), timeout=1).close()
        thread.join()
        listener.close()


def raw_server(respond: Callable[[socket.socket], None]) -> contextlib.AbstractContextManager[str]:
    """A loopback HTTP server whose ``respond(conn)`` writes raw bytes, one thread per client."""

    def serve(conn: socket.socket, _stop: threading.Event) -> None:
        with conn:
            conn.recv(65536)  # the request (small: headers only)
            with contextlib.suppress(OSError):  # the client hung up: what the test wants
                respond(conn)

    return connection_server(serve)


def json_body(
    body: bytes | Callable[[], bytes], *, length: int | None = None, hold: float = 0.0
) -> Callable[[socket.socket], None]:
    """A 200 ``application/json`` with ``body`` (or what ``body()`` returns at each request).

    ``length`` announces another ``Content-Length`` than the body's (the connection is
    then held ``hold`` seconds, as a server still sending would).
    """

    def respond(conn: socket.socket) -> None:
        content = body() if callable(body) else body
        announced = len(content) if length is None else length
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"Content-Length: {announced}\r\nConnection: close\r\n\r\n"
        )
        conn.sendall(head.encode() + content)
        if hold:
            threading.Event().wait(hold)

    return respond


def client_side_threads() -> set[threading.Thread]:
    """The live threads, less the loopback servers' per-connection handlers.

    A ``ThreadingMixIn`` server (the sandbox's) finishes a handler thread a moment after
    the client has closed its connection, so a leak test that counted every thread would
    race it (seen on Python 3.13). What the library itself starts must all be gone.
    """
    return {t for t in threading.enumerate() if "process_request_thread" not in t.name}


def threads_started_since(before: set[threading.Thread]) -> set[threading.Thread]:
    """The client-side threads alive now that were not in ``before``: what a leak test
    asserts is empty. Not a comparison of the two sets: a thread that was ending when the
    test began (an earlier test's server) may be gone by its end, which is no leak."""
    return client_side_threads() - before


@dataclass
class Receiver:
    """A webhook on 127.0.0.1 (:func:`webhook_receiver`): POSTs to ``url`` are answered
    ``status``, and each one's JSON body is kept in ``bodies``."""

    url: str
    status: int = 200
    bodies: list[dict[str, object]] = field(default_factory=list)

    def texts(self) -> list[str]:
        """The ``text`` of each message (what a Slack-style webhook shows)."""
        return [str(body["text"]) for body in self.bodies]


@contextlib.contextmanager
def webhook_receiver(path: str = "/hook") -> Iterator[Receiver]:
    """A loopback HTTP server taking webhook POSTs until the block ends (each connection
    is handled by ``http.server``'s request handler, in :func:`connection_server`)."""
    receiver: Receiver

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            receiver.bodies.append(json.loads(self.rfile.read(length)))
            self.send_response(receiver.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    def handle(conn: socket.socket, _stop: threading.Event) -> None:
        with conn:
            Handler(conn, conn.getpeername(), None)  # type: ignore[arg-type]  # no server

    with connection_server(handle) as url:
        receiver = Receiver(url + path)
        yield receiver

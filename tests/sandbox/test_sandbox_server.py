"""The sandbox as a server: malformed framing, huge or deep bodies, wrong media types.

Each refusal is a problem+json 4xx, never a dropped connection, and a refused PUT
changes nothing. Over real loopback sockets; a raw socket where httpx would refuse
to send the malformed request.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest

from ccanalytics.sandbox import (
    FULL_ACCESS_KEY,
    IN_PROCESS_URL,
    MAX_BODY_BYTES,
    Sandbox,
    SandboxApp,
    SandboxTransport,
)

KEYS = "/v2/account/ssh-keys"
AUTH = {"Authorization": f"Bearer {FULL_ACCESS_KEY}"}
ED25519 = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINajBoYvNIvnWWRi5fvEHCRN+YGrlS3KI3xqQ4uhGGlr alice@laptop"
)
NEW_KEYS = json.dumps({"keys": [ED25519]}).encode()


@pytest.fixture
def sb() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        yield sandbox


def raw(
    sb: Sandbox, request: bytes, *, half_close: bool = False
) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` on a fresh socket; read until the server closes. (status, headers, body)."""
    host, port = sb._server.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=5) as s:
        s.sendall(request)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(65536):  # the server closes: a timeout here fails the test
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines)}
    return int(status_line.split()[1]), headers, body


def put_request(content_length: bytes, body: bytes = NEW_KEYS, extra: bytes = b"") -> bytes:
    return (
        b"PUT " + KEYS.encode() + b" HTTP/1.1\r\nHost: sandbox\r\n"
        b"Authorization: Bearer " + FULL_ACCESS_KEY.encode() + b"\r\n"
        b"Content-Type: application/json\r\n" + content_length + extra + b"\r\n" + body
    )


def assert_problem(status: int, headers: dict[str, str], body: bytes, expected: int) -> dict:
    assert status == expected
    assert headers["content-type"] == "application/problem+json"
    problem = json.loads(body)
    assert problem["status"] == expected and problem["title"] and problem["detail"]
    return problem


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: abc\r\n",
        b"Content-Length: -5\r\n",
        b"Content-Length: 1e3\r\n",
        b"Content-Length: 0x10\r\n",
        b"Content-Length: 12, 12\r\n",
        b"Content-Length: \r\n",
        b"Content-Length: 12\r\nContent-Length: 13\r\n",
    ],
)
def test_bad_content_length_is_a_400(sb: Sandbox, header: bytes) -> None:
    before = list(sb.app.data.ssh_keys)
    status, headers, body = raw(sb, put_request(header))
    problem = assert_problem(status, headers, body, 400)
    assert "Content-Length" in problem["detail"]
    assert headers.get("connection") == "close"  # the rest of the stream cannot be framed
    assert sb.app.data.ssh_keys == before


@pytest.mark.parametrize("length", [MAX_BODY_BYTES + 1, 10**12, 10**40])
def test_huge_content_length_is_a_413_without_reading(sb: Sandbox, length: int) -> None:
    before = list(sb.app.data.ssh_keys)
    header = f"Content-Length: {length}\r\n".encode()
    status, headers, body = raw(sb, put_request(header), half_close=True)
    assert_problem(status, headers, body, 413)
    assert sb.app.data.ssh_keys == before


def test_an_oversized_body_is_read_and_refused_and_the_connection_lives_on(sb: Sandbox) -> None:
    """A body just over the limit: a 413 the client can read (not a reset), then more requests."""
    big = b'{"keys": ["' + b"a" * (MAX_BODY_BYTES + 10) + b'"]}'
    before = list(sb.app.data.ssh_keys)
    with httpx.Client(base_url=sb.url, headers=AUTH) as http:
        r = http.put(KEYS, content=big, headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and r.headers["content-type"] == "application/problem+json"
        assert http.get("/v2/registries/reg-ngc").status_code == 200
    assert sb.app.data.ssh_keys == before


def test_a_body_shorter_than_its_content_length_is_a_400(sb: Sandbox) -> None:
    status, headers, body = raw(sb, put_request(b"Content-Length: 500\r\n"), half_close=True)
    assert_problem(status, headers, body, 400)


def test_chunked_bodies_are_refused_with_411(sb: Sandbox) -> None:
    request = put_request(b"Transfer-Encoding: chunked\r\n", b"5\r\nhello\r\n0\r\n\r\n")
    status, headers, body = raw(sb, request)
    assert_problem(status, headers, body, 411)


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_deeply_nested_json_is_a_400(sb: Sandbox, depth: int) -> None:
    before = list(sb.app.data.ssh_keys)
    deep = b"[" * depth + b"]" * depth
    with httpx.Client(base_url=sb.url, headers=AUTH) as http:
        r = http.put(KEYS, content=deep, headers={"Content-Type": "application/json"})
        problem = assert_problem(r.status_code, dict(r.headers), r.content, 400)
        assert "nested" in problem["detail"]
        assert http.get("/v2/registries/reg-ngc").status_code == 200  # still serving
    assert sb.app.data.ssh_keys == before


@pytest.mark.parametrize(
    "ctype", [None, "text/plain", "application/x-www-form-urlencoded", "application/jsonx"]
)
def test_put_with_a_non_json_content_type_is_a_415_and_changes_nothing(
    sb: Sandbox, ctype: str | None
) -> None:
    before = list(sb.app.data.ssh_keys)
    assert before != [ED25519]
    headers = {} if ctype is None else {"Content-Type": ctype}
    with httpx.Client(base_url=sb.url, headers=AUTH) as http:
        r = http.put(KEYS, content=NEW_KEYS, headers=headers)
    assert_problem(r.status_code, dict(r.headers), r.content, 415)
    assert sb.app.data.ssh_keys == before


@pytest.mark.parametrize("ctype", ["application/json", "Application/JSON; charset=utf-8"])
def test_put_with_json_content_types_is_applied(sb: Sandbox, ctype: str) -> None:
    with httpx.Client(base_url=sb.url, headers=AUTH) as http:
        r = http.put(KEYS, content=NEW_KEYS, headers={"Content-Type": ctype})
    assert r.status_code == 200 and r.json() == {"keys": [ED25519]}
    assert sb.app.data.ssh_keys == [ED25519]


def test_in_process_transport_refuses_the_same_way() -> None:
    transport = SandboxTransport()
    before = list(transport.app.data.ssh_keys)
    with httpx.Client(transport=transport, base_url=IN_PROCESS_URL, headers=AUTH) as http:
        plain = http.put(KEYS, content=NEW_KEYS, headers={"Content-Type": "text/plain"})
        big = http.put(
            KEYS, content=b" " * (MAX_BODY_BYTES + 1), headers={"Content-Type": "application/json"}
        )
        deep = http.put(
            KEYS,
            content=b"[" * 100_000 + b"]" * 100_000,
            headers={"Content-Type": "application/json"},
        )
    assert [plain.status_code, big.status_code, deep.status_code] == [415, 413, 400]
    assert transport.app.data.ssh_keys == before


@pytest.mark.parametrize("method", ["HEAD", "OPTIONS", "TRACE", "CONNECT", "BREW"])
def test_every_method_gets_problem_json_with_allow(sb: Sandbox, method: str) -> None:
    request = (
        f"{method} /v2/clusters/cl-etl-cpu/pods HTTP/1.1\r\nHost: sandbox\r\n"
        f"Authorization: Bearer {FULL_ACCESS_KEY}\r\nConnection: close\r\n\r\n"
    ).encode()
    status, headers, body = raw(sb, request)
    assert status == 405 and headers["allow"] == "GET"
    assert headers["content-type"] == "application/problem+json"
    if method == "HEAD":
        assert body == b""  # a HEAD answer has no body
    else:
        assert json.loads(body)["status"] == 405


def test_405_on_the_key_endpoint_allows_put(sb: Sandbox) -> None:
    r = httpx.get(sb.url + KEYS, headers=AUTH)
    assert r.status_code == 405 and r.headers["Allow"] == "PUT"


def test_a_long_running_sandbox_keeps_only_its_newest_requests() -> None:
    """The request log is for tests and fault stories, not an archive: a sandbox left
    serving a collector for months must not grow with every request. Its counters
    (``stats``, ``statuses``) still count every request."""
    app = SandboxApp(request_log_size=5)
    for i in range(12):
        app.handle("GET", f"/v2/registries/reg-{i}", AUTH, b"")
    assert [path for _, _, path, _ in app.requests] == [
        f"/v2/registries/reg-{i}" for i in range(7, 12)
    ]
    assert sum(app.statuses.values()) == 12
    assert app.count("GET", "/v2/registries/reg-0") == 1


def test_the_default_request_log_is_bounded() -> None:
    app = SandboxApp()
    assert 100 <= app.request_log_size <= 10_000

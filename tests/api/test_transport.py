"""The sync client's own transport: the deadline through httpcore's public
``network_backend=`` seam, with every setting httpx's own transport had.

Over real loopback sockets: keep-alive, proxies from the environment, TLS checks,
and a server that drips its headers through a proxy.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import datetime as dt
import inspect
import ipaddress
import socket
import ssl
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import httpcore
import httpx
import pytest
from loopback import connection_server, raw_server

from ccanalytics import ApiConnectionError, ApiTimeoutError, AsyncClient, Client
from ccanalytics.api._deadline import READ_SIZE, _DeadlineStream
from ccanalytics.api._transport import DEFAULT_LIMITS, environment_proxies, httpcore_errors_as_httpx
from ccanalytics.errors import InsecureTransportWarning

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = b'{"id": "reg-x", "name": "x", "type": "docker"}'
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sets the proxy variables it means (the runner's must not leak in)."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


# -- no private seam of httpx or httpcore ------------------------------------------------


def _private_uses(source: str, where: str) -> list[str]:
    """Reaches into httpx's transport (``._pool``), httpcore's pool (``._network_backend``)
    or a private module of either, in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ("_pool", "_network_backend"):
            found.append(f"{where}:{node.lineno}: .{node.attr}")
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found += [
            f"{where}:{node.lineno}: import {name}"
            for name in names
            if name.split(".")[0] in ("httpx", "httpcore") and "._" in name
        ]
    return found


def test_nothing_reaches_into_a_private_attribute_of_httpx_or_httpcore() -> None:
    files = [*(ROOT / "ccanalytics").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    found = [
        use
        for path in files
        for use in _private_uses(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert found == []
    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "ccanalytics").rglob("*.py"))
    assert "_network_backend" not in text  # not even through getattr


def test_the_guard_sees_the_old_seam() -> None:
    """The test above would fail if the private access came back."""
    old = "pool = transport._pool\npool._network_backend = None\nfrom httpx._utils import x\n"
    assert len(_private_uses(old, "old.py")) == 3


# -- what httpx's transport did, kept ----------------------------------------------------


def test_the_pool_sizes_are_httpx_defaults() -> None:
    default = inspect.signature(httpx.HTTPTransport).parameters["limits"].default
    assert default == DEFAULT_LIMITS


#: The exceptions both packages name alike: the ones httpx's transport maps.
SHARED_ERRORS = [
    name
    for name in dir(httpcore)
    if isinstance(getattr(httpcore, name), type)
    and issubclass(getattr(httpcore, name), Exception)
    and hasattr(httpx, name)
]


def test_every_httpcore_error_httpx_maps_is_mapped() -> None:
    assert len(SHARED_ERRORS) == 14  # as httpx 0.28's table


@pytest.mark.parametrize("name", SHARED_ERRORS)
def test_httpcore_errors_become_the_httpx_errors_httpx_raises(name: str) -> None:
    core, mapped = getattr(httpcore, name), getattr(httpx, name)
    with pytest.raises(mapped) as info, httpcore_errors_as_httpx():
        raise core("why")
    assert type(info.value) is mapped and str(info.value) == "why"
    assert isinstance(info.value.__cause__, core)


def keep_alive_server(connections: list[int]) -> contextlib.AbstractContextManager[str]:
    """A loopback server answering every request of a connection; counts connections."""
    return listing_server(REGISTRY, connections)


def test_calls_reuse_one_kept_alive_connection() -> None:
    connections: list[int] = []
    with keep_alive_server(connections) as url, Client("k", url, max_retries=0) as client:
        for _ in range(3):
            assert client.get_registry("reg-x").id == "reg-x"
    assert len(connections) == 1


class _AskedStream(httpcore.NetworkStream):
    """A stream that records how many bytes each read asks for, and has none."""

    def __init__(self, asked: list[int]) -> None:
        self.asked = asked

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.asked.append(max_bytes)
        return b""


def test_reads_ask_for_read_size_where_httpcore_asks_for_less() -> None:
    asked: list[int] = []
    stream = _DeadlineStream(_AskedStream(asked))
    stream.read(64 * 1024)  # what httpcore's HTTP/1.1 connection asks for
    stream.read(4096)  # what its SOCKS handshake asks for
    stream.read(4 * READ_SIZE)
    assert asked == [READ_SIZE, READ_SIZE, 4 * READ_SIZE]
    assert READ_SIZE > 64 * 1024


def listing_server(
    body: bytes, connections: list[int] | None = None
) -> contextlib.AbstractContextManager[str]:
    """A loopback server answering every request of a connection with ``body`` at once;
    each connection it accepts is counted in ``connections``, when given."""

    def answer(conn: socket.socket, _stop: threading.Event) -> None:
        if connections is not None:
            connections.append(1)
        with conn, contextlib.suppress(OSError):
            while conn.recv(65536):  # one small request per recv
                head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                conn.sendall(head.encode() + body)

    return connection_server(answer)


def test_large_reads_give_every_body_whole_on_one_connection() -> None:
    # Bodies of several reads' worth each, back to back on one kept-alive connection:
    # a read that takes more than httpcore asked for must not lose or mix a byte.
    body = b'{"pods": [' + b",".join(b'{"id": "pod-%07d"}' % i for i in range(200_000)) + b"]}"
    assert len(body) > 3 * READ_SIZE
    with listing_server(body) as url, Client("k", url, max_retries=0) as client:
        for _ in range(3):
            assert client.list_cluster_pods_raw("c").content == body


def proxy_server(seen: list[bytes]) -> contextlib.AbstractContextManager[str]:
    """A loopback "proxy" that records each request's first line, then drips its headers."""

    def serve(conn: socket.socket, stop: threading.Event) -> None:
        with conn, contextlib.suppress(OSError):
            seen.append(conn.recv(65536).split(b"\r\n")[0])
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            end = time.monotonic() + 30.0
            while time.monotonic() < end and not stop.is_set():
                conn.sendall(b"a")
                time.sleep(0.05)

    return connection_server(serve)


def test_a_proxy_from_the_environment_is_used_and_the_deadline_bounds_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bytes] = []
    with proxy_server(seen) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy)
        with warnings.catch_warnings():  # http:// to another host (warned once per host)
            warnings.simplefilter("ignore", InsecureTransportWarning)
            c = Client("k", "http://api.example.test", timeout=0.5, max_retries=0, deadline=1.0)
        with c:
            start = time.monotonic()
            with pytest.raises(ApiTimeoutError, match="deadline"):
                c.get_registry("reg-x")
            assert time.monotonic() - start < 10.0  # the proxy would drip for 30 s
    assert seen == [b"GET http://api.example.test/v2/registries/reg-x HTTP/1.1"]


def test_no_proxy_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bytes] = []
    with proxy_server(seen) as proxy, raw_server(_registry) as url:
        monkeypatch.setenv("HTTP_PROXY", proxy)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        with Client("k", url, max_retries=0) as c:
            assert c.get_registry("reg-x").id == "reg-x"
    assert seen == []


def _registry(conn: socket.socket) -> None:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(REGISTRY)}\r\n\r\n"
    conn.sendall(head.encode() + REGISTRY)


@pytest.mark.parametrize(
    ("variables", "mounts"),
    [
        ({"HTTP_PROXY": "proxy:3128"}, {"http://": "http://proxy:3128"}),
        (
            {"ALL_PROXY": "http://p", "NO_PROXY": ".corp, ::1,localhost,10.0.0.1,x.org"},
            {
                "all://": "http://p",
                "all://*.corp": None,
                "all://[::1]": None,
                "all://localhost": None,
                "all://10.0.0.1": None,
                "all://*x.org": None,
            },
        ),
        ({"HTTPS_PROXY": "http://p", "NO_PROXY": "a.org,*"}, {}),
    ],
)
def test_proxy_variables_are_read_by_httpx_rules(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], mounts: dict[str, str | None]
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert environment_proxies() == mounts


# -- TLS: certificates are checked, against SSL_CERT_FILE when set ---------------------------


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.IPv4Address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def tls_server(cert_file: Path, key_file: Path) -> contextlib.AbstractContextManager[str]:
    """A loopback HTTPS server answering one registry per connection."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)

    def serve(conn: socket.socket, _stop: threading.Event) -> None:
        with contextlib.suppress(OSError, ssl.SSLError):
            conn.settimeout(5.0)
            with context.wrap_socket(conn, server_side=True) as tls:
                tls.recv(65536)
                _registry(tls)

    return connection_server(serve, scheme="https")


@pytest.fixture
def certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, no CA variable set yet."""
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    return _self_signed(tmp_path)


def test_an_unknown_certificate_is_refused_and_ssl_cert_file_is_trusted(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert_file, key_file = certificate
    with tls_server(cert_file, key_file) as url:
        with Client("k", url, max_retries=0) as c, pytest.raises(ApiConnectionError) as info:
            c.get_registry("reg-x")
        assert "CERTIFICATE_VERIFY_FAILED" in str(info.value)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))  # as httpx's trust_env reads it
        with Client("k", url, max_retries=0) as c:
            assert c.get_registry("reg-x").id == "reg-x"


# -- one TLS context per certificate setting ----------------------------------------------


def test_clients_share_one_tls_context_per_certificate_setting(
    certificate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building a context reads and parses the whole CA bundle (20 ms here): each Client,
    AsyncClient and fleet load's async twin built one, and a collect paid it every time.
    Now one per process and setting: a changed ``SSL_CERT_FILE`` still gets its own."""
    built: list[str | None] = []
    real = ssl.SSLContext.load_verify_locations

    def counting(context: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        # Every httpx reads the CA bundle here (SSL_CERT_FILE's, when it is set).
        built.append(kwargs.get("cafile", args[0] if args else None))
        real(context, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    cert_file, _ = certificate
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))  # a setting no other test has used
    for _ in range(3):
        with Client("k", "https://127.0.0.1:9") as client:
            client.as_async()
        AsyncClient("k", "https://127.0.0.1:9")
    assert built == [str(cert_file)]
    other = tmp_path / "other.pem"
    other.write_bytes(cert_file.read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(other))
    Client("k", "https://127.0.0.1:9").close()
    assert built == [str(cert_file), str(other)]


def test_an_async_client_trusts_ssl_cert_file_too(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert_file, key_file = certificate

    async def registry(url: str) -> str:
        async with AsyncClient("k", url, max_retries=0) as c:
            return (await c.get_registry("reg-x")).id

    with tls_server(cert_file, key_file) as url:
        with pytest.raises(ApiConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
            asyncio.run(registry(url))
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
        assert asyncio.run(registry(url)) == "reg-x"

"""The client under hostile input and unlucky operators: secrets, hangs, lost data.

Each test reproduces one failure of the client as it was, over real loopback HTTP
(the sandbox, or a raw socket server when the wire itself must misbehave), or
with an ``httpx.MockTransport`` playing an echoing proxy.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import json
import multiprocessing
import pickle
import socket
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from loopback import raw_server

import ccanalytics
import ccanalytics.errors
from ccanalytics import (
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    AsyncClient,
    CCAnalyticsError,
    Client,
    ConfigurationError,
    MalformedResponseError,
    NotFoundError,
    RateLimitError,
    ServerError,
    aload_cluster_pods,
)
from ccanalytics.sandbox import FULL_ACCESS_KEY, SECRET_PREFIX, Sandbox

#: A key with every character that an escaped form changes: \ / + = "
ODD_KEY = 'sk-live\\9f/2c+8e=7d"6b'
ENV_SECRET = SECRET_PREFIX + "env-value-in-a-listing-0c4d"


def escaped_forms(key: str) -> list[str]:
    """How an echoing proxy or a careless log may show ``key``."""
    percent = quote(key, safe="")
    return [
        key,
        repr(key)[1:-1],
        repr(key.encode())[2:-1],
        repr(f"Bearer {key}".encode())[2:-1],
        json.dumps(key)[1:-1],
        json.dumps(key)[1:-1].replace("/", "\\/"),
        percent,
        percent.lower(),
    ]


def exception_texts(err: BaseException) -> list[str]:
    """What an error shows anywhere: its chain's messages, reprs, fields, and frames' locals.

    The first frame of the traceback is the test's own (it caught the error, and its
    locals hold what the test fed the server): the frames below it are the library's.
    """
    assert err.__traceback__ is not None
    below_the_test = err.__traceback__.tb_next
    report = traceback.TracebackException(type(err), err, below_the_test, capture_locals=True)
    texts = ["".join(report.format())]
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        texts += [str(current), repr(current), repr(vars(current)), repr(current.args)]
        current = current.__cause__ or current.__context__
    return texts


def chain(err: BaseException) -> list[BaseException]:
    links = []
    current: BaseException | None = err
    while current is not None:
        links.append(current)
        current = current.__cause__ or current.__context__
    return links


def mock_client(handler: Callable[[httpx.Request], httpx.Response], **kw: Any) -> Client:
    kw.setdefault("max_retries", 0)
    return Client(
        kw.pop("api_key", FULL_ACCESS_KEY),
        "http://proxy.invalid",
        transport=httpx.MockTransport(handler),
        **kw,
    )


# -- 1. the key is checked when the client is built -----------------------------------------


@pytest.mark.parametrize("stray", ["\n", "\r\n", " ", "\t", " \t\r\n"])
def test_surrounding_whitespace_of_a_key_is_stripped(sandbox: Sandbox, stray: str) -> None:
    with Client(stray + FULL_ACCESS_KEY + stray, sandbox.url) as c:
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5


@pytest.mark.parametrize(
    ("bad", "kind"),
    [
        ("\n", "U+000A line feed"),
        ("\r", "U+000D carriage return"),
        ("\t", "U+0009 tab"),
        ("\x00", "U+0000 NUL"),
        ("\x1b", "control character (U+001B)"),
        (" ", "a space"),
        ("\xa0", "non-ASCII character (U+00A0 NO-BREAK SPACE)"),
        ("\ufeff", "non-ASCII character (U+FEFF ZERO WIDTH NO-BREAK SPACE)"),
        ("é", "non-ASCII character (U+00E9 LATIN SMALL LETTER E WITH ACUTE)"),
    ],
)
def test_a_character_no_header_can_carry_is_a_configuration_error(bad: str, kind: str) -> None:
    head, tail = "sk-live-4f1c9e", "0b7a2d4c88"
    with pytest.raises(ConfigurationError) as info:
        Client(head + bad + tail, "https://api.example.com")
    message = str(info.value)
    assert kind in message and f"position {len(head) + 1} of" in message
    assert "api_key=" in message
    err = info.value
    for text in (message, repr(err), repr(err.args), repr(vars(err))):
        assert head not in text and tail not in text


def test_a_bad_key_from_the_environment_names_the_variable(monkeypatch) -> None:
    monkeypatch.setenv("CCANALYTICS_API_KEY", "sk-live-abc\x7fdef")
    monkeypatch.setenv("CCANALYTICS_BASE_URL", "https://api.example.com")
    with pytest.raises(ConfigurationError, match=r"CCANALYTICS_API_KEY\) has a control") as info:
        Client()
    assert "abc" not in str(info.value)


def test_an_empty_key_after_stripping_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="empty"):
        Client(" \n", "https://api.example.com")


def test_escaped_and_encoded_echoes_of_the_key_are_scrubbed() -> None:
    forms = escaped_forms(ODD_KEY)

    def handler(request: httpx.Request) -> httpx.Response:
        echo = " | ".join(forms)
        headers = {"X-Request-Id": echo, "Via": forms[3], "Server": forms[6]}
        problem = {"title": f"Bad {forms[1]}", "status": 500, "detail": echo, "errors": forms}
        return httpx.Response(500, json=problem, headers=headers)

    with mock_client(handler, api_key=ODD_KEY) as c, pytest.raises(ServerError) as info:
        c.get_registry("reg-x")
    err = info.value
    assert err.detail.count("***") == len(forms)
    texts = [*exception_texts(err), repr(err.headers), repr(err.errors), err.title]
    for form in forms:
        for text in texts:
            assert form not in text, f"{form!r} leaked in {text[:200]!r}"


# -- 2. headers are scrubbed for every error, the success path's too ----------------------


def test_a_malformed_2xx_does_not_keep_an_echoed_key_in_its_headers() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        echo = request.headers["authorization"]
        headers = {"X-Request-Id": echo, "Via": f"1.1 proxy ({echo})", "Content-Type": "text/html"}
        return httpx.Response(200, content=b"<html>maintenance</html>", headers=headers)

    with mock_client(handler) as c, pytest.raises(MalformedResponseError) as info:
        c.list_cluster_pods("cl-x")
    assert info.value.headers["x-request-id"] == "Bearer ***"
    assert info.value.headers["via"] == "1.1 proxy (Bearer ***)"
    for text in exception_texts(info.value):
        assert FULL_ACCESS_KEY not in text


# -- 3. no error holds a body: not in its chain, fields or frames' locals ------------------

SECRET_LISTING = json.dumps({"pods": [{"id": "p", "env": {"HF_TOKEN": ENV_SECRET}}]}).encode()


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (200, SECRET_LISTING + b"<!-- cut"),  # invalid JSON
        (200, json.dumps({"pods": {"env": {"HF_TOKEN": ENV_SECRET}}}).encode()),  # wrong shape
        (200, json.dumps([{"env": {"HF_TOKEN": ENV_SECRET}}]).encode()),  # not an object
        (500, b"<html>" + b" " * 5000 + SECRET_LISTING + b"</html>"),  # past the excerpt
    ],
    ids=["invalid-json", "pods-not-a-list", "not-an-object", "error-page"],
)
def test_no_error_keeps_the_body_in_its_chain_fields_or_locals(status: int, body: bytes) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"Content-Type": "application/json"})

    with mock_client(handler) as c, pytest.raises(ApiError) as info:
        c.list_cluster_pods("cl-x")
    assert not any(isinstance(link, ValueError) for link in chain(info.value)[1:])
    for text in exception_texts(info.value):
        assert ENV_SECRET not in text, text[:300]


@pytest.mark.parametrize(
    "body",
    [SECRET_LISTING + b"<!-- cut", json.dumps({"pods": {"env": ENV_SECRET}}).encode()],
    ids=["invalid-json", "pods-not-a-list"],
)
def test_the_frame_paths_decoding_keeps_no_body_in_its_errors(body: bytes) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body)

    async def main() -> CCAnalyticsError:
        async with AsyncClient(
            FULL_ACCESS_KEY, "http://proxy.invalid", transport=httpx.MockTransport(handler)
        ) as c:
            try:
                await aload_cluster_pods("cl-x", client=c)
            except CCAnalyticsError as err:
                return err
        raise AssertionError("no error")

    err = asyncio.run(main())
    assert isinstance(err, MalformedResponseError) and err.host == "proxy.invalid"
    for text in exception_texts(err):
        assert ENV_SECRET not in text, text[:300]


# -- 4. a bearer key over plain http to another machine -------------------------------------


def _warnings_of(make: Callable[[], object]) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
    return list(caught)


def test_plain_http_to_another_host_warns_once_naming_the_host() -> None:
    warning = ccanalytics.errors.InsecureTransportWarning
    assert issubclass(warning, UserWarning) and ccanalytics.InsecureTransportWarning is warning
    host = f"api-{time.monotonic_ns()}.example.com"
    first = _warnings_of(lambda: Client("sk-live-7d1f0c2e", f"http://{host}"))
    assert [w.category for w in first] == [warning]
    message = str(first[0].message)
    assert host in message and "sk-live" not in message and "clear text" in message
    assert first[0].filename == __file__  # points at the caller's line
    assert _warnings_of(lambda: Client("sk-live-7d1f0c2e", f"http://{host}:8080")) == []


@pytest.mark.parametrize(
    "url",
    [
        "https://api.example.com",
        "http://127.0.0.1:8765",
        "http://127.8.9.10",
        "http://localhost:8000",
        "http://[::1]:8000",
        "http://sandbox.invalid",
    ],
)
def test_https_and_loopback_do_not_warn(url: str) -> None:
    assert _warnings_of(lambda: Client("k", url)) == []


# -- 6. a total deadline per call, and a maximum response size ----------------------------


def dripping(seconds: float, *, every: float = 0.05) -> Callable[[socket.socket], None]:
    """A 200 that announces a large body, then sends one byte every ``every`` seconds."""

    def respond(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        conn.sendall(b"Content-Length: 100000\r\n\r\n")
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            conn.sendall(b" ")
            time.sleep(every)

    return respond


def test_the_default_deadline_is_derived_from_the_timeout() -> None:
    from ccanalytics.api import _config

    client = Client("k", "https://api.example.com", timeout=2.0, max_retries=3)
    assert client.deadline == 4 * 2 * 2.0 + 3 * _config.MAX_RETRY_DELAY
    assert client.max_response_size == _config.DEFAULT_MAX_RESPONSE_SIZE
    assert Client("k", "https://api.example.com", timeout=None).deadline is None
    assert Client("k", "https://api.example.com", deadline=5).deadline == 5.0


def test_a_server_that_drips_cannot_hold_a_call_past_its_deadline() -> None:
    """One byte every 50 ms never trips a 0.5 s read timeout; the deadline (1 s) ends it."""
    with raw_server(dripping(30.0)) as url, Client("k", url, timeout=0.5, max_retries=0) as c:
        start = time.monotonic()
        with pytest.raises(ApiTimeoutError, match="deadline") as info:
            c.get_registry("reg-x")
        assert time.monotonic() - start < 10.0  # the server would drip for 30 s
    assert info.value.host == url.removeprefix("http://")


def test_the_deadline_also_bounds_the_raw_listing_path_and_async_calls() -> None:
    async def main(url: str) -> None:
        async with AsyncClient("k", url, timeout=0.5, max_retries=0, deadline=1.0) as c:
            with pytest.raises(ApiTimeoutError, match="deadline") as info:
                await c.list_cluster_pods_raw("cl-x")
            assert info.value.host == url.removeprefix("http://")

    with raw_server(dripping(30.0)) as url:
        start = time.monotonic()
        asyncio.run(main(url))
        assert time.monotonic() - start < 10.0


def test_the_deadline_covers_retries(make_sandbox, fast_retries) -> None:
    sb = make_sandbox()
    sb.app.add_fault("slow", seconds=1.0, times=None)
    with (
        sb.client(timeout=0.3, max_retries=50, deadline=1.0) as c,
        pytest.raises(ApiTimeoutError),
    ):
        c.get_registry("reg-ngc")
    # 0.3 s per attempt: a 1 s deadline leaves room for at most four of the 51 allowed.
    assert 1 <= sb.app.count("GET", "/v2/registries/reg-ngc") <= 4


def endless_chunked(
    sent: list[int], cap: int = 64 * 1024 * 1024
) -> Callable[[socket.socket], None]:
    """A 200 with a chunked body that does not end (until ``cap`` bytes); counts what it sent."""

    def respond(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        conn.sendall(b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b" " * 65536
        frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
        sent.append(0)
        while sent[-1] < cap:
            conn.sendall(frame)
            sent[-1] += len(chunk)
        conn.sendall(b"0\r\n\r\n")

    return respond


@pytest.mark.parametrize("raw", [False, True], ids=["models", "raw-listing"])
def test_an_endless_body_ends_in_a_typed_error_without_being_buffered(raw: bool) -> None:
    too_large = ccanalytics.errors.ResponseTooLargeError
    sent: list[int] = []
    limit = 1024 * 1024

    async def load_raw(url: str) -> None:
        async with AsyncClient("k", url, max_retries=2, max_response_size=limit) as c:
            await c.list_cluster_pods_raw("cl-x")

    def load(url: str) -> None:
        if raw:
            asyncio.run(load_raw(url))
        else:
            with Client("k", url, max_retries=2, max_response_size=limit) as c:
                c.list_cluster_pods("cl-x")

    with raw_server(endless_chunked(sent)) as url:
        with pytest.raises(too_large) as info:
            load(url)
        time.sleep(0.2)  # let the server notice the hang-up
    err = info.value
    assert isinstance(err, ApiError) and err.status == 200
    assert str(limit) in str(err) and err.host == url.removeprefix("http://")
    assert len(sent) == 1  # not retried
    # What the server got out before the client hung up: the limit plus socket buffers.
    assert sent[0] < 16 * limit


def test_a_body_announced_past_the_limit_is_refused_before_reading() -> None:
    too_large = ccanalytics.errors.ResponseTooLargeError

    def respond(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n")
        time.sleep(30)  # never sends the body: a client reading it would hang

    with raw_server(respond) as url, Client("k", url, max_retries=0, timeout=20) as c:
        start = time.monotonic()
        with pytest.raises(too_large, match="announces 10000000000 bytes"):
            c.list_cluster_pods("cl-x")
        assert time.monotonic() - start < 10.0


def test_the_default_size_limit_holds_a_listing_of_100000_pods() -> None:
    from ccanalytics.api._config import DEFAULT_MAX_RESPONSE_SIZE
    from ccanalytics.sandbox import make_cluster_pods

    sample = make_cluster_pods("cl-measure", 2000, seed=3)
    # Pretty-printed is the largest form a server could reasonably send.
    per_pod = len(json.dumps({"pods": sample}, indent=2).encode()) / len(sample)
    assert per_pod * 100_000 < DEFAULT_MAX_RESPONSE_SIZE
    assert per_pod * 100_000 > DEFAULT_MAX_RESPONSE_SIZE / 4  # and the limit is not absurd


# -- 7. dot segments never change the path ------------------------------------------------


@pytest.mark.parametrize("dots", [".", ".."])
@pytest.mark.parametrize("method", ["list_cluster_pods", "get_registry"])
def test_dot_segment_ids_are_refused_before_any_request(client, sandbox, method, dots) -> None:
    with pytest.raises(ValueError, match="dot segment"):
        getattr(client, method)(dots)
    assert sum(sandbox.app.stats.values()) == 0  # GET /v2/pods was never sent


@pytest.mark.parametrize("dotted", ["...", ".hidden", "a..b"])
def test_ids_with_dots_that_are_not_dot_segments_stay_one_segment(client, sandbox, dotted) -> None:
    with pytest.raises(NotFoundError):
        client.list_cluster_pods(dotted)
    assert sandbox.app.count("GET", f"/v2/clusters/{dotted}/pods") == 1


# -- 9. an unusable host is a configuration error at construction --------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://api..example.com",
        f"https://{'a' * 64}.example.com",
        f"https://{'a.' * 130}com",
        "https://ex%20ample.com",
        "https://user:hunter2@api.example.com",
        "https://api.example.com/?token=abc",
    ],
)
def test_an_unusable_base_url_is_a_configuration_error_at_construction(url: str) -> None:
    with pytest.raises(ConfigurationError, match="base URL") as info:
        Client("k", url)
    assert "hunter2" not in str(info.value) and "token=abc" not in str(info.value)


def test_an_internationalised_host_is_accepted() -> None:
    assert Client("k", "https://bücher.example.com").base_url == "https://xn--bcher-kva.example.com"


# -- 10. every library exception survives pickle and deepcopy -------------------------------


def _instances() -> dict[type[BaseException], BaseException]:
    import pandas as pd

    e = ccanalytics.errors
    api = {
        "status": 503,
        "title": "Service Unavailable",
        "detail": "down",
        "errors": ["$.keys[1]: bad"],
        "headers": {"Retry-After": "3", "X-Request-Id": "r-1"},
        "method": "GET",
        "path": "/v2/registries/x",
        "url": "https://api.example.com/v2/registries/x",
        "host": "api.example.com",
    }
    located = {k: api[k] for k in ("method", "path", "url", "host")}
    return {
        e.CCAnalyticsError: e.CCAnalyticsError("base"),
        e.ApiError: e.ApiError(**api),
        e.AuthenticationError: e.AuthenticationError(**{**api, "status": 401}),
        e.PermissionDeniedError: e.PermissionDeniedError(**{**api, "status": 403}),
        e.NotFoundError: e.NotFoundError(**{**api, "status": 404}),
        e.UnprocessableEntityError: e.UnprocessableEntityError(**{**api, "status": 422}),
        e.RateLimitError: e.RateLimitError(retry_after=2.5, **{**api, "status": 429}),
        e.ServerError: e.ServerError("explicit message", **api),
        e.MalformedResponseError: e.MalformedResponseError(**{**api, "status": 200}),
        e.ResponseTooLargeError: e.ResponseTooLargeError(**{**api, "status": 200}),
        e.ApiConnectionError: e.ApiConnectionError("connection failed", **located),
        e.ApiTimeoutError: e.ApiTimeoutError("timed out", **located),
        e.InvalidSshKeysError: e.InvalidSshKeysError(["$.keys[0]: bad", "$.keys[2]: bad"]),
        e.KeyNormalizationError: e.KeyNormalizationError(["line 3: not a key"]),
        e.ConfigurationError: e.ConfigurationError("no API key"),
        e.FleetLoadError: e.FleetLoadError(
            {"cl-a": e.NotFoundError(**{**api, "status": 404})},
            pd.DataFrame({"cluster_id": ["cl-b"], "pod_id": ["p1"]}),
            asked=3,
        ),
        e.ScheduleError: e.ScheduleError("3 clusters every 1s is over budget"),
        e.StoreError: e.StoreError("corrupt file", path=Path("store/pods/x.parquet")),
        e.EngineError: e.EngineError("the Spark session is stopped", question="spend"),
        e.KeyFileError: e.KeyFileError("cannot read keys: not a regular file"),
        e.PolicyError: e.PolicyError(
            "p.toml, line 3: bad", path=Path("p.toml"), line=3, key="max_spend"
        ),
        e.NoDataError: e.NoDataError("nothing to draw: no GPU metrics"),
        e.ReportLoadError: e.ReportLoadError({"cl-a": "404 not found"}),
        e.ReportOutputError: e.ReportOutputError("cannot write report.html: read-only"),
        e.InsecureTransportWarning: e.InsecureTransportWarning("http:// to api.example.com"),
        e.CheckOutputError: e.CheckOutputError("cannot write x.prom", path=Path("x.prom")),
        e.ClockSkewWarning: e.ClockSkewWarning("the service's clock reads 2099-06-01"),
        e.ArgumentsError: e.ArgumentsError(
            "{window} needs {store}", "window", "store", python={"store": "a store"}
        ),
        e.TeamsError: e.TeamsError("t.toml, line 2: bad", path=Path("t.toml"), line=2, key="pods"),
        e.ExportOutputError: e.ExportOutputError("out.csv exists", path=Path("out.csv")),
        e.GpuTypesError: e.GpuTypesError("types.toml: memory_gb of 'H100' is not positive"),
    }


def _fields(err: BaseException) -> dict[str, Any]:
    fields = {k: v for k, v in vars(err).items() if k not in ("errors", "frame")}
    fields["errors"] = repr(getattr(err, "errors", None))
    frame = getattr(err, "frame", None)
    fields["frame"] = None if frame is None else frame.to_dict()
    return fields


def test_every_library_exception_round_trips_through_pickle_and_deepcopy() -> None:
    instances = _instances()
    public = {getattr(ccanalytics.errors, n) for n in ccanalytics.errors.__all__}
    assert set(instances) == public  # a new class must be added here too
    for cls, err in instances.items():
        for copied in (pickle.loads(pickle.dumps(err)), copy.deepcopy(err)):
            assert type(copied) is cls
            assert (str(copied), copied.args) == (str(err), err.args), cls
            assert _fields(copied) == _fields(err), cls


def _raise_in_worker() -> None:
    raise NotFoundError(status=404, title="Not Found", method="GET", path="/v2/x", host="h")


def test_an_error_raised_in_a_process_pool_worker_arrives_whole() -> None:
    # Spawned, not forked: a fork would copy the locks pytest-xdist's threads hold, and
    # a child stuck on one hangs the pool's shutdown past any test timeout.
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=spawn) as pool:
        future = pool.submit(_raise_in_worker)
        with pytest.raises(NotFoundError) as info:
            future.result()
    assert (info.value.status, info.value.path, info.value.host) == (404, "/v2/x", "h")


# -- 11. a trailing /v2, and errors that name the host ----------------------------------


@pytest.mark.parametrize("suffix", ["/v2", "/v2/"])
def test_a_trailing_v2_in_the_base_url_is_stripped(sandbox: Sandbox, suffix: str) -> None:
    with Client(FULL_ACCESS_KEY, sandbox.url + suffix) as c:
        assert c.base_url == sandbox.url
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5
    assert sandbox.app.count("GET", "/v2/clusters/cl-etl-cpu/pods") == 1


def test_a_path_prefix_before_v2_is_kept() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(200, json={"id": "r", "name": "R"})

    transport = httpx.MockTransport(handler)
    with Client("k", "https://gw.example.com/cc/v2", transport=transport) as c:
        c.get_registry("r")
    assert seen == ["/cc/v2/registries/r"]


def test_api_and_connection_errors_name_the_host(sandbox: Sandbox, fast_retries) -> None:
    host = sandbox.url.removeprefix("http://")
    found: list[CCAnalyticsError] = []
    with sandbox.client(max_retries=0) as c:
        for call in (
            lambda: c.get_registry("reg-missing"),
            lambda: (
                sandbox.app.add_fault("invalid_json", path="/v2/registries/"),
                c.get_registry("reg-ngc"),
            ),
            lambda: (sandbox.app.add_fault("reset"), c.get_registry("reg-ngc")),
        ):
            with pytest.raises(CCAnalyticsError) as info:
                call()
            found.append(info.value)
        c._pacer.block_for(3600.0)  # a window known to be exhausted for an hour
        with pytest.raises(RateLimitError) as info:
            c.get_registry("reg-ngc")
        found.append(info.value)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        refused = f"127.0.0.1:{s.getsockname()[1]}"
    with Client(FULL_ACCESS_KEY, f"http://{refused}", max_retries=0) as c:
        with pytest.raises(ApiConnectionError) as info:
            c.get_registry("reg-ngc")
        found.append(info.value)
    kinds = [NotFoundError, MalformedResponseError, ApiConnectionError, RateLimitError]
    assert [type(e) for e in found[:4]] == kinds
    for err in found[:4]:
        assert err.host == host, err  # type: ignore[attr-defined]
        assert str(err).startswith(f"GET http://{host}/v2/registries/"), str(err)
    assert found[4].host == refused and refused in str(found[4])  # type: ignore[attr-defined]
    for err in found:
        assert FULL_ACCESS_KEY not in str(err)


@pytest.mark.parametrize("url", ["https://user:hunter2@[::1", "https://user:hunter2@h.example:x"])
def test_an_unparseable_base_url_is_refused_without_quoting_it(url: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        Client("k", url)
    assert chain(info.value) == [info.value]  # not even a hidden __context__
    assert "hunter2" not in str(info.value) + repr(info.value.args)


def test_an_id_that_is_not_valid_unicode_keeps_no_chain(client: Client) -> None:
    with pytest.raises(ValueError, match="not valid Unicode") as info:
        client.list_cluster_pods("bad\ud800id")
    assert chain(info.value) == [info.value]


def dripping_headers(seconds: float, *, every: float = 0.05) -> Callable[[socket.socket], None]:
    """A status line, then header bytes one at a time: the header block never ends."""

    def respond(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            conn.sendall(b"a")
            time.sleep(every)

    return respond


def test_headers_that_drip_cannot_hold_a_call_past_its_deadline() -> None:
    async def load(url: str) -> None:
        async with AsyncClient("k", url, timeout=0.5, max_retries=0, deadline=1.0) as c:
            await c.list_cluster_pods("cl-x")

    with raw_server(dripping_headers(30.0)) as url:
        for call in (
            lambda: Client("k", url, timeout=0.5, max_retries=0, deadline=1.0).get_registry("r"),
            lambda: asyncio.run(load(url)),
        ):
            start = time.monotonic()
            with pytest.raises(ApiTimeoutError, match="deadline"):
                call()
            assert time.monotonic() - start < 10.0  # the server would drip for 30 s


def test_a_raw_listing_never_shows_its_body() -> None:
    """Frames that hold a listing (the loader's) are reported with their locals' reprs."""
    from datetime import UTC, datetime

    from ccanalytics.api import RawListing, observed_at

    listing = RawListing(SECRET_LISTING, datetime(2026, 1, 1, tzinfo=UTC), "/v2/clusters/c/pods")
    assert ENV_SECRET not in repr(listing) and f"<{len(SECRET_LISTING)} bytes>" in repr(listing)
    assert listing.content == SECRET_LISTING  # still the whole body for the frames
    response = httpx.Response(200, headers={"Date": "Thu, 01 Jan 2026 00:00:00 GMT"})
    assert observed_at(response, trust_service_clock=True) == datetime(2026, 1, 1, tzinfo=UTC)

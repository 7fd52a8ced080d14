"""Property-based tests: hostile and malformed input never escapes as a foreign exception.

Everything here runs in process (``httpx.MockTransport``) with small hypothesis
budgets, so the whole module takes a few seconds.
"""

from __future__ import annotations

import copy
import json
import math
import os
import unicodedata
from contextlib import nullcontext
from typing import Any

import httpx
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st
from typed_decoder import typed_decoder_refused

from ccanalytics import (
    AsyncClient,
    AuthenticationError,
    CCAnalyticsError,
    Client,
    NotFoundError,
    PermissionDeniedError,
    Pod,
    RateLimitError,
    Registry,
    ServerError,
    SshKeys,
    UnprocessableEntityError,
    gpus_frame,
    parse_rate_limit,
    pods_frame,
)
from ccanalytics.api._retry import parse_retry_after
from ccanalytics.frames import GPU_COLUMNS, POD_COLUMNS
from ccanalytics.sandbox import SandboxApp

#: Examples per property: the Hypothesis profile's (tests/conftest.py: 25, or 500 with
#: HYPOTHESIS_PROFILE=thorough); ``CCANALYTICS_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py``
#: digs deeper still.
EXAMPLES = int(os.environ.get("CCANALYTICS_FUZZ_EXAMPLES", settings.default.max_examples))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
URL = "http://fuzz.invalid"
KEY = "fuzz-api-key"
ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINajBoYvNIvnWWRi5fvEHCRN+YGrlS3KI3xqQ4uhGGlr a@b"

_APP = SandboxApp()
#: One pod of each kind the sandbox has (GPU training, inference, CPU, pending, exited...).
BASE_PODS: list[dict[str, Any]] = [
    pods[i] for pods in _APP.data.clusters.values() for i in (0, len(pods) - 1)
] + _APP.data.clusters["cl-bringup"]
SECRETS = _APP.data.secrets()

# -- strategies ---------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.sampled_from(["", "0", "13", "1e309", "2026-11-20T11:17:00Z", "0001-01-01T00:00:00Z"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
#: Object keys that could collide with pydantic's own attributes.
odd_keys = st.sampled_from(
    ["model_config", "model_fields", "__dict__", "__class__", "copy", "json", "_private", "id"]
)


@st.composite
def mutated_pod(draw: st.DrawFn) -> Any:
    """A sandbox pod with random JSON values set at (or deleted from) random places."""
    pod = copy.deepcopy(draw(st.sampled_from(BASE_PODS)))
    for _ in range(draw(st.integers(1, 6))):
        node: Any = pod
        # Walk down a random path of existing keys/indices, then change what is there.
        while True:
            children = list(node) if isinstance(node, dict) else list(range(len(node)))  # type: ignore[arg-type]
            if not children:
                break
            key = draw(st.sampled_from(children))
            child = node[key]
            if isinstance(child, dict | list) and child and draw(st.booleans()):
                node = child
                continue
            action = draw(st.sampled_from(["set", "set", "delete", "odd"]))
            if action == "delete" and isinstance(node, dict):
                del node[key]
            elif action == "odd" and isinstance(node, dict):
                node[draw(odd_keys)] = draw(json_values)
            else:
                node[key] = draw(json_values)
            break
    return pod


pod_elements = st.one_of(mutated_pod(), mutated_pod(), json_values)
listings = st.lists(pod_elements, max_size=5)


def _encode(value: Any) -> bytes:
    # json (not orjson) so integers beyond 64 bits are encoded too.
    return json.dumps(value).encode()


response_bodies = st.one_of(
    listings.map(lambda pods: _encode({"pods": pods})),
    json_values.map(lambda pods: _encode({"pods": pods})),
    json_values.map(_encode),
    st.binary(max_size=200),
    listings.map(lambda pods: _encode({"pods": pods})[:-3]),  # cut short
)


def _client(handler: Any, **kw: Any) -> Client:
    return Client(KEY, URL, max_retries=0, transport=httpx.MockTransport(handler), **kw)


def _ok(body: bytes, content_type: str = "application/json") -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"Content-Type": content_type})

    return handler


def _check_pod(pod: Pod) -> None:
    """A returned Pod is what the annotations say, whatever the response held."""
    assert isinstance(pod, Pod)
    for name in ("id", "name", "image", "registry", "data_center_id", "cuda_version"):
        assert getattr(pod, name) is None or isinstance(getattr(pod, name), str)
    assert pod.cost is None or isinstance(pod.cost, float)
    assert pod.disk is None or (isinstance(pod.disk, int) and not isinstance(pod.disk, bool))
    assert pod.ports is None or all(isinstance(p, str) for p in pod.ports)
    if pod.cluster is not None:
        assert pod.cluster.rank is None or isinstance(pod.cluster.rank, int)
    if pod.runtime is not None and pod.runtime.gpus is not None:
        assert all(g.util is None or isinstance(g.util, float) for g in pod.runtime.gpus)
    text = repr(pod) + str(pod) + pod.model_dump_json()
    assert not any(s in text for s in SECRETS)


# -- the client on mutated and wrongly typed bodies ------------------------------------


@FUZZ
@given(body=response_bodies)
def test_listing_body_gives_pods_or_a_library_error(body: bytes) -> None:
    with _client(_ok(body)) as client:
        try:
            pods = client.list_cluster_pods("cl-x")
        except CCAnalyticsError as err:
            event(f"error: {type(err).__name__}")
            str(err)  # renders, whatever the body was
            return
    event(f"pods: {min(len(pods), 2)}")
    assert isinstance(pods, list)
    for pod in pods:
        _check_pod(pod)
    frame = pods_frame(pods)  # the models' path to a frame must hold as well
    assert len(frame) == len(pods)


@FUZZ
@given(body=response_bodies)
def test_async_listing_body_gives_pods_or_a_library_error(body: bytes) -> None:
    import asyncio

    async def main() -> list[Pod] | None:
        transport = httpx.MockTransport(_ok(body))
        async with AsyncClient(KEY, URL, max_retries=0, transport=transport) as client:
            try:
                return await client.list_cluster_pods("cl-x")
            except CCAnalyticsError:
                return None

    pods = asyncio.run(main())
    for pod in pods or []:
        _check_pod(pod)


registry_bodies = st.one_of(
    st.dictionaries(
        st.sampled_from(["id", "name", "username", "password", "Password", "extra"]),
        json_values,
    ).map(_encode),
    json_values.map(_encode),
    st.binary(max_size=100),
)


@FUZZ
@given(body=registry_bodies)
def test_registry_body_gives_a_registry_or_a_library_error(body: bytes) -> None:
    with _client(_ok(body)) as client:
        try:
            reg = client.get_registry("reg-x")
        except CCAnalyticsError:
            return
    assert isinstance(reg, Registry)
    assert reg.id is None or isinstance(reg.id, str)
    dumped = {k.lower() for k in reg.model_dump()}
    assert "username" not in dumped and "password" not in dumped


ssh_key_bodies = st.one_of(
    st.lists(json_values, max_size=4).map(lambda keys: _encode({"keys": keys})),
    json_values.map(lambda keys: _encode({"keys": keys})),
    json_values.map(_encode),
    st.binary(max_size=100),
)


@FUZZ
@given(body=ssh_key_bodies)
def test_ssh_keys_body_gives_a_key_list_or_a_library_error(body: bytes) -> None:
    with _client(_ok(body)) as client:
        try:
            result = client.update_ssh_keys([ED25519])
        except CCAnalyticsError:
            return
    # After a destructive PUT the caller must get a real list back, never None.
    assert isinstance(result, SshKeys)
    assert isinstance(result.keys, list) and all(isinstance(k, str) for k in result.keys)


# -- frames on mutated pods -------------------------------------------------------------


def _check_dtypes(frame: pd.DataFrame, columns: Any) -> None:
    assert list(frame.columns) == list(columns)
    for name, spec in columns.items():
        assert str(frame[name].dtype) == spec.dtype, name


@FUZZ
@given(pods=listings)
def test_frames_of_mutated_pods_have_the_documented_dtypes(pods: list[Any]) -> None:
    # A listing as parsed: its elements may be anything the server sent.
    if not all(isinstance(p, dict) for p in pods):  # not a pod: refused by name
        with pytest.raises(ValueError, match="not a pod object"):
            pods_frame({"pods": pods}, cluster_id="cl-fuzz")
        return
    frame = pods_frame({"pods": pods}, cluster_id="cl-fuzz")
    gpus = gpus_frame({"pods": pods}, cluster_id="cl-fuzz")
    _check_dtypes(frame, POD_COLUMNS)
    _check_dtypes(gpus, GPU_COLUMNS)
    assert len(frame) == len(pods)
    # Missing values are <NA>, never NaN hiding in a Float64 column or None in a string one.
    for name in frame.columns:
        values = frame[name].array
        if str(values.dtype) == "Float64":
            assert not any(v is not pd.NA and math.isnan(v) for v in values), name
    text = frame.to_csv() + gpus.to_csv()
    assert not any(s in text for s in SECRETS)


@pytest.mark.parametrize("path", ["typed", "fallback"])
@FUZZ
@given(pods=listings)
def test_raw_json_reads_as_the_parsed_listing_on_both_paths(path: str, pods: list[Any]) -> None:
    """Bytes (the loader's path) give exactly the frames of the same listing parsed."""
    body = _encode({"pods": pods})
    parsed = json.loads(body)
    if not all(isinstance(p, dict) for p in parsed["pods"]):  # refused alike
        with pytest.raises(ValueError) as as_parsed:
            pods_frame(parsed, cluster_id="cl-fuzz")
        with pytest.raises(ValueError) as as_bytes:
            pods_frame(body, cluster_id="cl-fuzz")
        assert str(as_bytes.value) == str(as_parsed.value)
        return
    expected = pods_frame(parsed, cluster_id="cl-fuzz"), gpus_frame(parsed, cluster_id="cl-fuzz")
    with typed_decoder_refused() if path == "fallback" else nullcontext() as refusing:
        pd.testing.assert_frame_equal(pods_frame(body, cluster_id="cl-fuzz"), expected[0])
        pd.testing.assert_frame_equal(gpus_frame(body, cluster_id="cl-fuzz"), expected[1])
    if refusing is not None and any(isinstance(p, dict) for p in parsed["pods"]):
        assert refusing.refused, "no pod took the fallback"


@FUZZ
@given(pods=st.lists(mutated_pod(), max_size=4))
def test_frames_of_mutated_pod_models_have_the_documented_dtypes(pods: list[Any]) -> None:
    models = [Pod.model_validate(p) for p in pods]
    _check_dtypes(pods_frame(models), POD_COLUMNS)
    _check_dtypes(gpus_frame(models), GPU_COLUMNS)


# -- error responses: every status, junk bodies and headers ------------------------------

EXPECTED_CLASS = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}

header_bytes = st.binary(max_size=60).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))
error_bodies = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=200).map(str.encode),
    st.just(b"<html><head><title>502</title><script>x()</script></head><body>Bad</body></html>"),
    st.fixed_dictionaries(
        {},
        optional={
            "title": json_values,
            "status": json_values,
            "detail": json_values,
            "errors": json_values,
            "type": json_values,
        },
    ).map(_encode),
    json_values.map(_encode),
)
error_headers = st.dictionaries(
    st.sampled_from(
        ["Content-Type", "Retry-After", "RateLimit", "RateLimit-Policy", "X-Request-Id", "Server"]
    ),
    st.one_of(
        header_bytes,
        st.sampled_from(
            [
                b"application/problem+json",
                b"text/html",
                b"9" * 400,
                b"1" * 5000,
                b'"minute";r=0;t=99999999999',
                b"Sat, 21 Nov 2026 12:00:10 GMT",
            ]
        ),
    ),
)


def _is_one_readable_line(text: str) -> bool:
    return not any(c in "\r\n\u2028\u2029\x85" or unicodedata.category(c) == "Cc" for c in text)


@FUZZ
@given(
    status=st.integers(400, 599),
    body=error_bodies,
    headers=error_headers,
)
def test_error_status_maps_to_its_class_whatever_the_body(
    status: int, body: bytes, headers: dict[str, bytes]
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers=list(headers.items()))

    with _client(handler) as client, pytest.raises(CCAnalyticsError) as info:
        client.get_registry("reg-x")
    err = info.value
    assert type(err) is EXPECTED_CLASS.get(status, ServerError)
    assert err.status == status
    message = str(err)
    assert str(status) in message
    assert _is_one_readable_line(message), repr(message)
    assert KEY not in message + repr(err)
    if isinstance(err, RateLimitError):
        assert err.retry_after is None or (math.isfinite(err.retry_after) and err.retry_after >= 0)


JUNK_ERROR_BODIES: list[tuple[bytes, dict[str, str]]] = [
    (b"", {}),
    (b"<html><body><h1>oops</h1></body></html>", {"Content-Type": "text/html"}),
    (b'{"title": 7, "errors": "nope"}', {"Content-Type": "application/problem+json"}),
    (b"\xff\xfe\x00garbage", {"Content-Type": "application/octet-stream", "Retry-After": "x"}),
]


def test_every_status_from_400_to_599_maps_to_its_class() -> None:
    for status in range(400, 600):
        for body, headers in JUNK_ERROR_BODIES:

            def handler(
                request: httpx.Request,
                status: int = status,
                body: bytes = body,
                headers: Any = headers,
            ) -> Any:
                return httpx.Response(status, content=body, headers=headers)

            with _client(handler) as client, pytest.raises(CCAnalyticsError) as info:
                client.list_cluster_pods("cl-x")
            err = info.value
            assert type(err) is EXPECTED_CLASS.get(status, ServerError), (status, body)
            assert err.status == status and str(status) in str(err)
            assert _is_one_readable_line(str(err)), repr(str(err))


def test_error_message_flattens_a_multi_line_problem_detail() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        problem = {"title": "Bad\nGateway", "status": 502, "detail": "one\r\ntwo\x1b[31m"}
        return httpx.Response(502, json=problem)

    with _client(handler) as client, pytest.raises(ServerError) as info:
        client.get_registry("reg-x")
    url = "http://fuzz.invalid/v2/registries/reg-x"
    assert str(info.value) == f"GET {url}: 502 Bad Gateway: one two [31m"
    assert info.value.detail == "one\r\ntwo\x1b[31m"  # the attribute keeps what was sent


# -- header parsers ----------------------------------------------------------------------

sf_names = st.one_of(
    st.sampled_from(["minute", "hour", "day", "burst"]).map(lambda n: f'"{n}"'),
    st.from_regex(r"[a-z*][a-z0-9_\-.*]{0,8}", fullmatch=True),
)
sf_values = st.one_of(
    st.integers(-(10**16), 10**16).map(str),
    st.decimals(-(10**6), 10**6, places=3, allow_nan=False).map(str),
    st.sampled_from(["?1", "?0", '"text"', "token", ":AAAA:", "@1700000000", '%"x"']),
)
sf_member = st.builds(
    lambda name, params: name + "".join(f";{k}={v}" for k, v in params),
    sf_names,
    st.lists(st.tuples(st.sampled_from(["r", "t", "q", "w", "x"]), sf_values), max_size=5),
)
sf_lists = st.lists(sf_member, max_size=4).map(", ".join)
header_texts = st.one_of(st.none(), st.text(max_size=80), sf_lists)


@settings(max_examples=2 * EXAMPLES, deadline=None)
@given(ratelimit=header_texts, policy=header_texts)
def test_parse_rate_limit_never_raises_and_never_goes_negative(
    ratelimit: str | None, policy: str | None
) -> None:
    status = parse_rate_limit(ratelimit, policy)
    if ratelimit is None and policy is None:
        assert status is None
    if status is None:
        return
    for window in status.windows.values():
        for count in (window.remaining, window.quota):
            assert count is None or (type(count) is int and count >= 0)
        for seconds in (window.reset, window.window):
            assert seconds is None or (
                isinstance(seconds, float) and math.isfinite(seconds) and seconds >= 0
            )
    status.tightest  # noqa: B018 -- must not raise either


retry_after_texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet="0123456789", min_size=1, max_size=6000),
    st.from_regex(r"\s*-?[0-9]{0,400}(\.[0-9]{0,5})?([eE][+-]?[0-9]{1,4})?\s*", fullmatch=True),
    st.datetimes().map(lambda d: d.strftime("%a, %d %b %Y %H:%M:%S GMT")),
)


@settings(max_examples=2 * EXAMPLES, deadline=None)
@given(value=retry_after_texts)
def test_parse_retry_after_is_none_or_a_finite_non_negative_number(value: str) -> None:
    seconds = parse_retry_after(value)
    assert seconds is None or (math.isfinite(seconds) and seconds >= 0)


@pytest.mark.parametrize("digits", ["9" * 400, "1" * 5000])
def test_a_huge_retry_after_is_a_long_wait_not_a_crash(digits: str) -> None:
    seconds = parse_retry_after(digits)
    assert seconds is not None and math.isfinite(seconds) and seconds > 10**300


def test_a_429_with_a_huge_retry_after_is_raised_not_waited_for() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "9" * 400})

    with (
        Client(KEY, URL, max_retries=3, transport=httpx.MockTransport(handler)) as client,
        pytest.raises(RateLimitError) as info,
    ):
        client.get_registry("reg-x")
    assert info.value.retry_after is not None and info.value.retry_after > 10**300


# -- body size/depth extremes (one-off, not fuzzed) --------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 5000 + b"]" * 5000,
        b'{"pods": ' + b"[" * 2000 + b"]" * 2000 + b"}",
        orjson.dumps({"pods": [{"cluster": {"rank": 2**63}, "cost": 1e308}] * 3}),
        b'{"pods": [{"id": "a", "id": 3}]}',  # duplicate key: last wins, as in JSON.parse
        b"\xef\xbb\xbf{}",  # a UTF-8 BOM
    ],
)
def test_extreme_bodies_give_a_result_or_a_library_error(body: bytes) -> None:
    with _client(_ok(body)) as client:
        try:
            pods = client.list_cluster_pods("cl-x")
        except CCAnalyticsError:
            return
    for pod in pods:
        _check_pod(pod)


# -- SSH key parsing (ccanalytics.keys) ---------------------------------------------------

REAL_KEYS = [
    ED25519,
    "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBM4KLE+pqL/dptWR5W9AKd1L"
    "0m61CSmZB4tAoYyxwOrdE3FHs6Y0UvGSwDDM2LxqVbhcL7yh2fdeyZkkIibVK5M= ci-deploy",
]


@st.composite
def near_keys(draw: st.DrawFn) -> str:
    """A real key line with a few characters inserted, deleted or replaced."""
    line = draw(st.sampled_from(REAL_KEYS))
    prefix = draw(st.sampled_from(["", "no-pty ", 'environment="A=b" ', 'command="x",from="*" ']))
    line = prefix + line
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(line)))
        junk = draw(st.text(max_size=3))
        cut = draw(st.integers(0, 2))
        line = line[:at] + junk + line[at + cut :]
    return line


key_texts = st.one_of(st.text(max_size=200), near_keys())


@settings(max_examples=EXAMPLES, deadline=None)
@given(line=key_texts)
def test_parse_authorized_key_never_raises_on_any_text(line: str) -> None:
    from ccanalytics.keys import parse_authorized_key

    key = parse_authorized_key(line)
    assert isinstance(key.problems, list) and all(isinstance(p, str) for p in key.problems)
    assert isinstance(key.api_valid, bool) and isinstance(key.key_valid, bool)
    from ccanalytics.keys.api_rule import matches_api_pattern

    assert key.api_valid == matches_api_pattern(line)
    repr(key)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    source=st.one_of(
        st.lists(key_texts, max_size=4).map("\n".join).map(lambda t: t + "\n"),
        st.binary(max_size=300),
        st.lists(key_texts, max_size=4).map(
            lambda ls: "\r\n".join(ls).encode("utf-8", "surrogatepass")
        ),
        st.lists(st.one_of(key_texts, st.binary(max_size=60)), max_size=4),
    )
)
def test_audit_keys_never_raises_on_any_text_or_bytes(source: Any) -> None:
    """Any text or bytes is audited; only a list whose first item names a file (the
    keys' one rule, :func:`ccanalytics.keys._source.names_a_file`) is a list of files,
    and then a missing file or a key line among them is a KeyFileError."""
    from ccanalytics.errors import KeyFileError
    from ccanalytics.keys import audit_keys
    from ccanalytics.keys._source import names_a_file

    names_files = (
        isinstance(source, list)
        and bool(source)
        and isinstance(source[0], str)
        and names_a_file(source[0])
    )
    try:
        frame = audit_keys(source)
    except KeyFileError:
        assert names_files, source
        return
    assert {"line_no", "status", "api_valid", "key_valid", "problems"} <= set(frame.columns)
    assert set(frame["status"].dropna()) <= {"ok", "warning", "error"}

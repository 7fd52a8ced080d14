"""Fault injection over real loopback HTTP: each fault, what the server saw, what the caller got.

Every test injects one kind of fault into the sandbox, then checks on the server's
own counts (``app.count``) that exactly the retries or the pacing that should
happen happened, that what cannot succeed ends in the right typed error with a
readable message, and that it ends within the configured timeouts (wall time,
with generous bounds: the test machine is small and noisy).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from ccanalytics import (
    ApiConnectionError,
    ApiTimeoutError,
    MalformedResponseError,
    RateLimitError,
    ServerError,
)
from ccanalytics.sandbox import Sandbox

PODS = "/v2/clusters/cl-etl-cpu/pods"
REGISTRY = "/v2/registries/reg-ngc"
SSH_KEYS = "/v2/account/ssh-keys"
ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINajBoYvNIvnWWRi5fvEHCRN+YGrlS3KI3xqQ4uhGGlr a@b"

MakeSandbox = Callable[..., Sandbox]


class Stopwatch:
    seconds: float = 0.0


@contextmanager
def stopwatch() -> Iterator[Stopwatch]:
    watch = Stopwatch()
    start = time.monotonic()
    try:
        yield watch
    finally:
        watch.seconds = time.monotonic() - start


def _one_line(message: str) -> bool:
    return "\n" not in message and "<" not in message and len(message) < 400


# -- 5xx ------------------------------------------------------------------------------


def test_a_burst_of_5xx_is_retried_then_succeeds(make_sandbox: MakeSandbox, fast_retries) -> None:
    sb = make_sandbox()
    for status in (500, 502, 504):
        sb.app.add_fault("status", status=status, path=PODS)
    sb.app.add_fault("empty", status=503, path=PODS)
    with sb.client(max_retries=4) as c, stopwatch() as watch:
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5
    assert sb.app.count("GET", PODS) == 5
    assert [sb.app.statuses[s] for s in (500, 502, 503, 504, 200)] == [1, 1, 1, 1, 1]
    assert watch.seconds < 3.0


def test_persistent_5xx_is_a_server_error_after_max_retries_plus_one_attempts(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("status", status=503, times=None)
    with sb.client(max_retries=3) as c, stopwatch() as watch, pytest.raises(ServerError) as info:
        c.get_registry("reg-ngc")
    assert sb.app.count("GET", REGISTRY) == 4
    assert info.value.status == 503
    assert str(info.value) == f"GET {sb.url}{REGISTRY}: 503 Service Unavailable: injected fault"
    assert watch.seconds < 3.0


def test_max_retries_zero_sends_exactly_once(make_sandbox: MakeSandbox) -> None:
    sb = make_sandbox()
    sb.app.add_fault("status", status=500, times=None)
    with sb.client(max_retries=0) as c, pytest.raises(ServerError):
        c.list_cluster_pods("cl-etl-cpu")
    assert sb.app.count("GET", PODS) == 1


# -- a proxy's HTML error page -----------------------------------------------------------


def test_proxy_html_502_is_retried_then_succeeds(make_sandbox: MakeSandbox, fast_retries) -> None:
    sb = make_sandbox()
    sb.app.add_fault("html", status=502, times=2)
    with sb.client(max_retries=3) as c:
        assert c.get_registry("reg-ngc").name == "NVIDIA NGC"
    assert sb.app.count("GET", REGISTRY) == 3
    assert sb.app.statuses[502] == 2


def test_persistent_proxy_html_502_gives_a_readable_message_without_tags(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("html", status=502, times=None)
    with sb.client(max_retries=2) as c, pytest.raises(ServerError) as info:
        c.update_ssh_keys([ED25519])
    assert sb.app.count("PUT", SSH_KEYS) == 3
    message = str(info.value)
    assert _one_line(message), message
    assert message.startswith(
        f"PUT {sb.url}{SSH_KEYS}: 502 Bad Gateway: non-JSON error body (text/html)"
    )
    assert "nginx/1.25.3" in message and "html" not in info.value.detail.split(")", 1)[1]


# -- connection resets -----------------------------------------------------------------


def test_persistent_connection_reset_is_api_connection_error_after_retries(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("reset", times=None)
    with (
        sb.client(max_retries=2) as c,
        stopwatch() as watch,
        pytest.raises(ApiConnectionError) as info,
    ):
        c.list_cluster_pods("cl-etl-cpu")
    assert not isinstance(info.value, ApiTimeoutError)
    assert sb.app.count("GET", PODS) == 3
    assert f"GET {sb.url}{PODS}: connection failed" in str(info.value)
    assert _one_line(str(info.value))
    # No raw httpx exception (it holds the request, headers included) hangs off ours.
    assert not isinstance(info.value.__cause__, httpx.HTTPError)
    assert not isinstance(info.value.__context__, httpx.HTTPError)
    assert watch.seconds < 3.0


def test_a_single_connection_reset_is_retried_transparently(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("reset", times=1, path=PODS)
    with sb.client(max_retries=1) as c:
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5
    assert sb.app.count("GET", PODS) == 2


# -- slow responses past the timeout ----------------------------------------------------


def test_slow_responses_time_out_without_hanging(make_sandbox: MakeSandbox, fast_retries) -> None:
    sb = make_sandbox()
    sb.app.add_fault("slow", seconds=3.0, times=None)
    timeout, retries = 0.3, 2
    with (
        sb.client(timeout=timeout, max_retries=retries) as c,
        stopwatch() as watch,
        pytest.raises(ApiTimeoutError) as info,
    ):
        c.get_registry("reg-ngc")
    assert sb.app.count("GET", REGISTRY) == retries + 1
    # (max_retries + 1) x timeout plus small backoffs, never the server's 3 s per attempt.
    assert (retries + 1) * timeout * 0.9 <= watch.seconds < (retries + 1) * timeout + 1.5
    assert str(info.value) == f"GET {sb.url}{REGISTRY}: timed out (ReadTimeout) after 0.3s"


def test_one_slow_response_is_retried_and_succeeds(make_sandbox: MakeSandbox, fast_retries) -> None:
    sb = make_sandbox()
    sb.app.add_fault("slow", seconds=2.0, times=1)
    with sb.client(timeout=0.3, max_retries=1) as c, stopwatch() as watch:
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5
    assert sb.app.count("GET", PODS) == 2
    assert watch.seconds < 1.5


# -- truncated bodies ------------------------------------------------------------------


def test_truncated_bodies_are_connection_errors_after_retries(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("truncate", times=None)
    with (
        sb.client(max_retries=2) as c,
        stopwatch() as watch,
        pytest.raises(ApiConnectionError) as info,
    ):
        c.list_cluster_pods("cl-etl-cpu")
    assert sb.app.count("GET", PODS) == 3
    assert "RemoteProtocolError" in str(info.value) or "ReadError" in str(info.value)
    assert watch.seconds < 3.0


def test_a_single_truncated_body_is_retried_transparently(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("truncate", times=1)
    with sb.client(max_retries=1) as c:
        assert c.get_registry("reg-ngc").id == "reg-ngc"
    assert sb.app.count("GET", REGISTRY) == 2


# -- bodies that break the spec ---------------------------------------------------------


OPERATIONS: dict[str, tuple[str, str, Callable[[Any], Any]]] = {
    "pods": ("GET", PODS, lambda c: c.list_cluster_pods("cl-etl-cpu")),
    "registry": ("GET", REGISTRY, lambda c: c.get_registry("reg-ngc")),
    "ssh-keys": ("PUT", SSH_KEYS, lambda c: c.update_ssh_keys([ED25519])),
}


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_invalid_json_200_is_malformed_response_and_not_retried(
    make_sandbox: MakeSandbox, fast_retries, operation: str
) -> None:
    method, path, call = OPERATIONS[operation]
    sb = make_sandbox()
    sb.app.add_fault("invalid_json", times=None)
    with sb.client(max_retries=3) as c, pytest.raises(MalformedResponseError) as info:
        call(c)
    assert sb.app.count(method, path) == 1
    assert info.value.status == 200
    assert f"{method} {sb.url}{path}: 200 response is not valid JSON (application/json" in str(
        info.value
    )


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_wrong_shape_200_is_malformed_response_and_not_retried(
    make_sandbox: MakeSandbox, fast_retries, operation: str
) -> None:
    method, path, call = OPERATIONS[operation]
    sb = make_sandbox()
    sb.app.add_fault("wrong_shape", times=None)
    with sb.client(max_retries=3) as c, pytest.raises(MalformedResponseError) as info:
        call(c)
    assert sb.app.count(method, path) == 1
    assert "expected an object" in str(info.value) and "got list" in str(info.value)


@pytest.mark.parametrize("operation", ["registry", "ssh-keys"])
def test_json_under_a_wrong_content_type_is_still_read_once(
    make_sandbox: MakeSandbox, operation: str
) -> None:
    method, path, call = OPERATIONS[operation]
    sb = make_sandbox()
    sb.app.add_fault("wrong_content_type", times=None)
    with sb.client() as c:
        result = call(c)
    assert result.model_dump()  # parsed into its model
    assert sb.app.count(method, path) == 1


# -- RateLimit headers ------------------------------------------------------------------


def test_malformed_ratelimit_headers_are_ignored_and_earlier_knowledge_is_kept(
    make_sandbox: MakeSandbox,
) -> None:
    sb = make_sandbox(rate_limits={"minute": (3, 2.0)})
    with sb.client() as c:
        c.list_cluster_pods("cl-etl-cpu")  # learns: 2 left in this window
        assert c.rate_limit is not None and c.rate_limit["minute"].remaining == 2
        sb.app.add_fault("malformed_ratelimit", times=2)
        for _ in range(4):  # the third and fourth must wait for the next window
            c.list_cluster_pods("cl-etl-cpu")
        assert c.rate_limit is not None  # the last response's headers were fine again
    assert sb.app.statuses[429] == 0
    assert sb.app.statuses[200] == 5


def test_malformed_ratelimit_headers_never_slow_requests_down(make_sandbox: MakeSandbox) -> None:
    sb = make_sandbox()
    sb.app.add_fault("malformed_ratelimit", times=None)
    with sb.client() as c, stopwatch() as watch:
        for _ in range(5):
            c.get_registry("reg-ngc")
        assert c.rate_limit is None
    assert sb.app.count("GET", REGISTRY) == 5
    assert watch.seconds < 2.0


def _arrivals(sb: Sandbox, path: str) -> list[float]:
    return [t for t, _, p, _ in sb.app.requests if p == path]


def test_an_exhausted_window_holds_the_next_request_until_its_reset(
    make_sandbox: MakeSandbox,
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("exhausted_ratelimit", seconds=1.0, times=1)
    with sb.client() as c:
        c.list_cluster_pods("cl-etl-cpu")
        assert c.rate_limit is not None and c.rate_limit["minute"].exhausted
        c.get_registry("reg-ngc")
    first, second = _arrivals(sb, PODS)[0], _arrivals(sb, REGISTRY)[0]
    assert 0.95 <= second - first < 3.0  # measured where it counts: at the server
    assert sb.app.statuses[429] == 0


def test_an_exhausted_window_holds_concurrent_async_requests(make_sandbox: MakeSandbox) -> None:
    sb = make_sandbox()
    sb.app.add_fault("exhausted_ratelimit", seconds=1.0, times=1)

    async def main() -> None:
        async with sb.async_client() as c:
            await c.list_cluster_pods("cl-etl-cpu")
            await asyncio.gather(*(c.get_registry("reg-ngc") for _ in range(3)))

    asyncio.run(main())
    first = _arrivals(sb, PODS)[0]
    held = _arrivals(sb, REGISTRY)
    assert len(held) == 3 and all(t - first >= 0.95 for t in held)


def test_a_window_exhausted_past_the_pacing_cap_raises_without_sending(
    make_sandbox: MakeSandbox,
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("exhausted_ratelimit", seconds=30.0, times=1)
    with sb.client() as c:
        c._pacer.max_wait = 1.0
        c.list_cluster_pods("cl-etl-cpu")
        with stopwatch() as watch, pytest.raises(RateLimitError) as info:
            c.get_registry("reg-ngc")
    assert sb.app.count("GET", REGISTRY) == 0
    assert watch.seconds < 0.5
    assert info.value.retry_after is not None and 25 < info.value.retry_after <= 30
    assert "no request was sent" in str(info.value)


# -- 429 --------------------------------------------------------------------------------


def test_persistent_429_is_rate_limit_error_after_max_retries_plus_one_attempts(
    make_sandbox: MakeSandbox,
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("rate_limited", seconds=0.0, times=None)  # Retry-After: 0
    with sb.client(max_retries=3) as c, stopwatch() as watch, pytest.raises(RateLimitError) as info:
        c.list_cluster_pods("cl-etl-cpu")
    assert sb.app.count("GET", PODS) == 4
    assert info.value.retry_after == 0.0 and info.value.status == 429
    assert str(info.value) == (
        f"GET {sb.url}{PODS}: 429 Too Many Requests: rate limit exceeded for the minute window"
    )
    assert watch.seconds < 2.0


def test_429_waits_retry_after_between_every_attempt(make_sandbox: MakeSandbox) -> None:
    sb = make_sandbox()
    sb.app.add_fault("rate_limited", seconds=1.0, times=2)  # Retry-After: 1, twice
    with sb.client(max_retries=2) as c:
        assert c.get_registry("reg-ngc").id == "reg-ngc"
    arrivals = _arrivals(sb, REGISTRY)
    assert len(arrivals) == 3
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert all(0.95 <= g < 2.5 for g in gaps), gaps


def test_429_without_retry_after_backs_off_and_retries(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("status", status=429, times=2)  # problem body, no Retry-After
    with sb.client(max_retries=2) as c, stopwatch() as watch:
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5
    assert sb.app.count("GET", PODS) == 3
    assert watch.seconds < 2.0


def test_retry_after_beyond_the_cap_is_raised_at_once(
    make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ccanalytics.api._config as config

    monkeypatch.setattr(config, "MAX_RETRY_AFTER", 0.5)
    sb = make_sandbox()
    sb.app.add_fault("rate_limited", seconds=3.0, times=None)  # Retry-After: 3 > 0.5
    with sb.client(max_retries=3) as c, stopwatch() as watch, pytest.raises(RateLimitError) as info:
        c.get_registry("reg-ngc")
    assert sb.app.count("GET", REGISTRY) == 1
    assert info.value.retry_after == 3.0
    assert watch.seconds < 0.5


# -- the same faults through AsyncClient -------------------------------------------------


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_async_persistent_reset_is_api_connection_error_after_retries(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("reset", times=None)

    async def main() -> None:
        async with sb.async_client(max_retries=2) as c:
            with pytest.raises(ApiConnectionError) as info:
                await c.get_registry("reg-ngc")
            assert not isinstance(info.value, ApiTimeoutError)

    _run(main())
    assert sb.app.count("GET", REGISTRY) == 3


def test_async_single_reset_is_retried(make_sandbox: MakeSandbox, fast_retries) -> None:
    sb = make_sandbox()
    sb.app.add_fault("reset", times=1)

    async def main() -> int:
        async with sb.async_client(max_retries=1) as c:
            return len(await c.list_cluster_pods("cl-etl-cpu"))

    assert _run(main()) == 5
    assert sb.app.count("GET", PODS) == 2


def test_async_slow_responses_time_out_without_hanging(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("slow", seconds=3.0, times=None)

    async def main() -> None:
        async with sb.async_client(timeout=0.3, max_retries=2) as c:
            with pytest.raises(ApiTimeoutError):
                await c.list_cluster_pods("cl-etl-cpu")

    with stopwatch() as watch:
        _run(main())
    assert sb.app.count("GET", PODS) == 3
    assert 0.8 <= watch.seconds < 2.4


def test_async_5xx_burst_then_success_and_persistent_5xx(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("status", status=502, times=2, path=PODS)
    sb.app.add_fault("status", status=500, times=None, path=REGISTRY)

    async def main() -> None:
        async with sb.async_client(max_retries=2) as c:
            assert len(await c.list_cluster_pods("cl-etl-cpu")) == 5
            with pytest.raises(ServerError) as info:
                await c.get_registry("reg-ngc")
            assert info.value.status == 500

    _run(main())
    assert sb.app.count("GET", PODS) == 3
    assert sb.app.count("GET", REGISTRY) == 3


def test_async_truncated_body_is_retried_then_a_connection_error(
    make_sandbox: MakeSandbox, fast_retries
) -> None:
    sb = make_sandbox()
    sb.app.add_fault("truncate", times=None)

    async def main() -> None:
        async with sb.async_client(max_retries=1) as c:
            with pytest.raises(ApiConnectionError):
                await c.get_registry("reg-ngc")

    _run(main())
    assert sb.app.count("GET", REGISTRY) == 2

"""RateLimit headers, the pacer, retries on 429/5xx, and the retry-delay policy."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import httpx
import pytest

from ccanalytics import Client, RateLimitError, parse_rate_limit
from ccanalytics.api._config import INITIAL_RETRY_DELAY, MAX_RETRY_DELAY, RETRY_JITTER
from ccanalytics.api._ratelimit import Pacer, RateLimitWindow
from ccanalytics.api._retry import backoff_delay, parse_retry_after

POLICY = '"minute";q=60;w=60, "hour";q=1000;w=3600, "day";q=10000;w=86400'
CURRENT = '"minute";r=59;t=42, "hour";r=998;t=3342, "day";r=9990;t=80000'


# -- header parsing ---------------------------------------------------------------


def test_both_headers_parse_into_windows() -> None:
    status = parse_rate_limit(CURRENT, POLICY)
    assert status is not None
    assert status.windows == {
        "minute": RateLimitWindow(remaining=59, reset=42.0, quota=60, window=60.0),
        "hour": RateLimitWindow(remaining=998, reset=3342.0, quota=1000, window=3600.0),
        "day": RateLimitWindow(remaining=9990, reset=80000.0, quota=10000, window=86400.0),
    }


def test_tokens_and_unknown_window_names_are_kept() -> None:
    status = parse_rate_limit("burst;r=2;t=1", "burst;q=5;w=1")
    assert status is not None and status["burst"] == RateLimitWindow(2, 1.0, 5, 1.0)


def test_absent_headers_mean_exempt() -> None:
    assert parse_rate_limit(None, None) is None


@pytest.mark.parametrize(
    ("ratelimit", "policy", "expected"),
    [
        ("{{", "{{", None),  # both malformed: ignored
        ('"minute";r=oops', None, {"minute": RateLimitWindow()}),  # token, not an integer
        ('"minute";r=-3;t=5', None, {"minute": RateLimitWindow(reset=5.0)}),  # negative dropped
        ('"minute";r=3;t=?1', None, {"minute": RateLimitWindow(remaining=3)}),
        ('"minute";r=3.5;t=2.5', None, {"minute": RateLimitWindow(reset=2.5)}),  # r must be int
        ('"minute";r=1;t=1', "bad policy ((", {"minute": RateLimitWindow(1, 1.0)}),
        ('(1 2), 3, "m";r=4', None, {"m": RateLimitWindow(remaining=4)}),  # non-string members
    ],
)
def test_malformed_values_are_ignored(ratelimit, policy, expected) -> None:
    status = parse_rate_limit(ratelimit, policy)
    assert (status.windows if status else None) == expected


# -- the pacer --------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_pacer_books_requests_up_to_the_remaining_count() -> None:
    clock = FakeClock()
    pacer = Pacer(clock=clock)
    assert pacer.try_acquire() == (0.0, None)
    pacer.release(parse_rate_limit('"minute";r=2;t=3', '"minute";q=3;w=3'))
    assert pacer.try_acquire() == (0.0, None)
    assert pacer.try_acquire() == (0.0, None)
    delay, window = pacer.try_acquire()
    assert (delay, window) == (3.0, "minute")
    clock.now += 3.0  # the window resets: the full quota again
    assert [pacer.try_acquire()[0] for _ in range(3)] == [0.0, 0.0, 0.0]
    assert pacer.try_acquire() == (3.0, "minute")


def test_pacer_counts_in_flight_requests_against_a_new_window() -> None:
    clock = FakeClock()
    pacer = Pacer(clock=clock)
    for _ in range(3):
        pacer.try_acquire()
    # The first response says 5 remain; two other requests are still in flight.
    pacer.release(parse_rate_limit('"minute";r=5;t=10', '"minute";q=8;w=10'))
    assert [pacer.try_acquire()[0] for _ in range(3)] == [0.0, 0.0, 0.0]
    assert pacer.try_acquire()[0] == 10.0


def test_pacer_never_trusts_a_higher_count_for_the_same_window() -> None:
    clock = FakeClock()
    pacer = Pacer(clock=clock)
    pacer.try_acquire()
    pacer.release(parse_rate_limit('"minute";r=1;t=10', None))
    pacer.try_acquire()
    pacer.release(parse_rate_limit('"minute";r=7;t=10', None))  # stale or lying: keep 0
    assert pacer.try_acquire() == (10.0, "minute")


def test_pacer_gives_up_past_its_cap_with_a_local_rate_limit_error() -> None:
    pacer = Pacer(clock=FakeClock(), max_wait=5.0)
    pacer.try_acquire()
    pacer.release(parse_rate_limit('"hour";r=0;t=1800', '"hour";q=100;w=3600'))
    with pytest.raises(RateLimitError) as info:
        pacer.acquire(sleep=lambda s: pytest.fail("must not sleep"))
    assert info.value.retry_after == 1800.0
    assert "hour" in str(info.value) and "no request was sent" in str(info.value)


def test_pacer_ignores_windows_without_reset() -> None:
    pacer = Pacer(clock=FakeClock())
    pacer.try_acquire()
    pacer.release(parse_rate_limit('"minute";r=0', None))
    assert pacer.try_acquire() == (0.0, None)


# -- the client paces itself against the sandbox -----------------------------------


def test_client_waits_for_the_reset_instead_of_provoking_429(make_sandbox) -> None:
    sb = make_sandbox(rate_limits={"minute": (3, 2.0)})
    with sb.client() as c:
        start = time.monotonic()
        for _ in range(5):
            c.list_cluster_pods("cl-etl-cpu")
        elapsed = time.monotonic() - start
    assert sb.app.statuses[429] == 0
    assert sb.app.statuses[200] == 5
    assert elapsed >= 0.5  # it had to wait for a window boundary at least once


def test_client_rate_limit_reflects_the_last_response(make_sandbox) -> None:
    sb = make_sandbox(rate_limits={"minute": (10, 60.0), "hour": (100, 3600.0)})
    with sb.client() as c:
        c.list_cluster_pods("cl-etl-cpu")
        c.list_cluster_pods("cl-etl-cpu")
        rl = c.rate_limit
    assert rl is not None
    assert (rl["minute"].remaining, rl["minute"].quota, rl["minute"].window) == (8, 10, 60.0)
    assert (rl["hour"].remaining, rl["hour"].quota) == (98, 100)
    assert 0 < (rl["minute"].reset or 0) <= 60


def test_malformed_headers_do_not_break_requests(make_sandbox) -> None:
    sb = make_sandbox()
    sb.app.add_fault("malformed_ratelimit", times=None)
    with sb.client() as c:
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5
        status = c.rate_limit
    assert status is None or all(
        w.remaining is None or w.remaining >= 0 for w in status.windows.values()
    )


def test_announced_exhausted_window_holds_the_next_request(make_sandbox) -> None:
    sb = make_sandbox()
    sb.app.add_fault("exhausted_ratelimit", seconds=1.0, times=1)
    with sb.client() as c:
        c.list_cluster_pods("cl-etl-cpu")
        start = time.monotonic()
        c.list_cluster_pods("cl-etl-cpu")
        assert time.monotonic() - start >= 0.9


def test_429_waits_retry_after_and_retries(make_sandbox) -> None:
    sb = make_sandbox()
    sb.app.add_fault("rate_limited", seconds=1.0, times=1)
    with sb.client() as c:
        start = time.monotonic()
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5
        assert time.monotonic() - start >= 0.9
    assert sb.app.statuses[429] == 1 and sb.app.statuses[200] == 1


def test_persistent_429_ends_in_rate_limit_error_after_max_retries(make_sandbox) -> None:
    sb = make_sandbox()
    sb.app.add_fault("rate_limited", seconds=0.01, times=None)  # Retry-After: 1
    with sb.client(max_retries=1) as c, pytest.raises(RateLimitError) as info:
        c.list_cluster_pods("cl-etl-cpu")
    assert info.value.retry_after == 1.0 and info.value.status == 429
    assert "minute window" in info.value.detail
    assert sb.app.count("GET", "/v2/clusters/cl-etl-cpu/pods") == 2


def test_5xx_is_retried_then_succeeds(make_sandbox, fast_retries) -> None:
    sb = make_sandbox()
    sb.app.add_fault("status", status=503, times=2)
    with sb.client(max_retries=3) as c:
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5
    assert sb.app.count("GET", "/v2/clusters/cl-etl-cpu/pods") == 3


def test_put_is_retried_on_connection_reset(make_sandbox, fast_retries) -> None:
    sb = make_sandbox()
    sb.app.add_fault("reset", times=1, path="/v2/account/ssh-keys")
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINajBoYvNIvnWWRi5fvEHCRN+YGrlS3KI3xqQ4uhGGlr a"
    with sb.client() as c:
        assert c.update_ssh_keys([key]).keys == [key]
    assert sb.app.count("PUT", "/v2/account/ssh-keys") == 2


def test_4xx_is_not_retried(make_sandbox, fast_retries) -> None:
    sb = make_sandbox()
    with sb.client() as c, pytest.raises(Exception, match="404"):
        c.list_cluster_pods("missing")
    assert sb.app.count("GET", "/v2/clusters/missing/pods") == 1


def test_async_fan_out_stays_inside_the_quota(make_sandbox) -> None:
    sb = make_sandbox(rate_limits={"minute": (5, 2.0)})

    async def main() -> None:
        async with sb.async_client() as c:
            await c.list_cluster_pods("cl-etl-cpu")  # learn the quota
            await asyncio.gather(*(c.list_cluster_pods("cl-etl-cpu") for _ in range(9)))

    asyncio.run(main())
    assert sb.app.statuses[429] == 0 and sb.app.statuses[200] == 10


# -- the retry policy as a table ----------------------------------------------------


@pytest.mark.parametrize(
    ("attempt", "rand", "expected"),
    [
        (0, 0.0, INITIAL_RETRY_DELAY),
        (1, 0.0, INITIAL_RETRY_DELAY * 2),
        (2, 0.0, INITIAL_RETRY_DELAY * 4),
        (3, 0.0, min(INITIAL_RETRY_DELAY * 8, MAX_RETRY_DELAY)),
        (10, 0.0, MAX_RETRY_DELAY),
        (1000, 0.0, MAX_RETRY_DELAY),
        (0, 1.0, INITIAL_RETRY_DELAY * (1 - RETRY_JITTER)),
        (10, 1.0, MAX_RETRY_DELAY * (1 - RETRY_JITTER)),
        (2, 0.5, INITIAL_RETRY_DELAY * 4 * (1 - RETRY_JITTER / 2)),
    ],
)
def test_backoff_delay(attempt: int, rand: float, expected: float) -> None:
    assert backoff_delay(attempt, rand=lambda: rand) == pytest.approx(expected)


NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("", None),
        ("0", 0.0),
        ("7", 7.0),
        (" 30 ", 30.0),
        ("1.5", 1.5),
        ("-1", None),
        ("soon", None),
        ("inf", None),
        ("nan", None),
        ("Sat, 21 Nov 2026 12:00:10 GMT", 10.0),
        ("Sat, 21 Nov 2026 11:59:00 GMT", 0.0),  # a date in the past: retry now
    ],
)
def test_parse_retry_after(header: str | None, expected: float | None) -> None:
    assert parse_retry_after(header, now=NOW) == expected


def test_retry_after_past_the_cap_also_holds_the_next_call(make_sandbox, monkeypatch) -> None:
    import ccanalytics.api._config as config

    monkeypatch.setattr(config, "MAX_RETRY_AFTER", 5.0)
    sb = make_sandbox()
    sb.app.add_fault("rate_limited", seconds=600, times=1)
    with sb.client() as c:
        with pytest.raises(RateLimitError):
            c.list_cluster_pods("cl-etl-cpu")
        with pytest.raises(RateLimitError, match="no request was sent"):
            c.list_cluster_pods("cl-etl-cpu")
    assert sb.app.count("GET", "/v2/clusters/cl-etl-cpu/pods") == 1


# -- policies the client cannot honour never hold a call forever -------------------------


def _finishes(work: Callable[[], object], seconds: float = 10.0) -> bool:
    """Whether ``work`` returns within ``seconds`` (run on a daemon thread: a spin cannot hang us)."""
    done = threading.Event()

    def run() -> None:
        work()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(seconds)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ('"m";q=5;w=0', RateLimitWindow(0, 1.0, quota=5, window=None)),  # never resets
        ('"m";q=0;w=60', RateLimitWindow(0, 1.0, quota=None, window=60.0)),  # nothing to wait for
        ('"m";q=0;w=0', RateLimitWindow(0, 1.0)),
    ],
)
def test_a_policy_no_client_could_honour_is_dropped_as_malformed(policy, expected) -> None:
    status = parse_rate_limit('"m";r=0;t=1', policy)
    assert status is not None and status["m"] == expected


def test_a_zero_length_window_does_not_spin_the_pacer() -> None:
    clock = FakeClock()
    pacer = Pacer(clock=clock)
    pacer.try_acquire()
    pacer.release(parse_rate_limit('"m";r=0;t=0', '"m";q=5;w=0'))
    clock.now += 1.0
    assert _finishes(pacer.try_acquire), "the pacer spun on a window of length 0"


def test_a_tiny_window_announced_long_ago_is_caught_up_in_one_step() -> None:
    clock = FakeClock()
    pacer = Pacer(clock=clock)
    pacer.try_acquire()
    pacer.release(parse_rate_limit('"m";r=0;t=1', '"m";q=5;w=0.001'))
    clock.now += 1e7  # ten billion windows later
    result: list[tuple[float, str | None]] = []
    assert _finishes(lambda: result.append(pacer.try_acquire()))
    assert result == [(0.0, None)]  # a new window, with its full quota


def test_a_quota_of_nothing_ends_in_rate_limit_error_within_the_pacing_cap() -> None:
    """The server keeps announcing r=0 window after window: the waits add up to the cap."""
    clock = FakeClock()
    pacer = Pacer(clock=clock, max_wait=120.0)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        if len(waits) > 1000:
            pytest.fail("the pacer kept waiting window after window")
        waits.append(seconds)
        clock.now += seconds
        pacer.release(parse_rate_limit('"m";r=0;t=30', '"m";q=0;w=30'))  # another empty window

    pacer.try_acquire()
    pacer.release(parse_rate_limit('"m";r=0;t=30', '"m";q=0;w=30'))
    with pytest.raises(RateLimitError, match="no request was sent"):
        pacer.acquire(sleep=sleep)
    assert sum(waits) <= 120.0
    assert waits  # it did wait for the resets it could honour


def test_a_client_facing_a_zero_length_window_keeps_working() -> None:
    """End to end: a server announcing w=0 once made the next call spin forever."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        headers = {"RateLimit": '"m";r=0;t=0', "RateLimit-Policy": '"m";q=5;w=0'}
        return httpx.Response(200, json={"id": "reg-x", "name": "X"}, headers=headers)

    client = Client("k", "http://api.invalid", transport=httpx.MockTransport(handler))
    with client:
        assert _finishes(lambda: [client.get_registry("reg-x") for _ in range(3)])
    assert len(calls) == 3

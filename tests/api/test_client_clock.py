"""The client's ``observed_at`` and the service's clock.

A live load's ``observed_at`` is the service's ``Date`` only when it is within
``CLOCK_SKEW`` (5 minutes) of the local clock, or when the client is made with
``trust_service_clock=True`` (a simulated-clock sandbox, whose ``Date`` is its own
time). Otherwise the local clock at receipt times it, with one ``ClockSkewWarning``
per client. Over real loopback HTTP: a sandbox whose ``Date`` reads 2099.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from ccanalytics import AsyncClient, Client, aload_cluster_pods, load_cluster_pods
from ccanalytics.api import CLOCK_SKEW, observed_at
from ccanalytics.errors import ClockSkewWarning
from ccanalytics.sandbox import EXEMPT_KEY, FULL_ACCESS_KEY, Sandbox, SandboxApp, SimulatedClock

FUTURE = datetime(2099, 6, 1, tzinfo=UTC)
CLUSTER = "cl-infer-prod"


@contextmanager
def service_at(start: datetime) -> Iterator[Sandbox]:
    """A loopback sandbox whose ``Date`` reads ``start``: a live service's clock, skewed.

    Its clients are made as a user makes one for a live service (``Client(key, url)``):
    ``Sandbox.client()`` would trust a simulated clock.
    """
    with Sandbox(SandboxApp(clock=SimulatedClock(start))) as sb:
        yield sb


def near_now(when: Any) -> bool:
    when = when.to_pydatetime() if hasattr(when, "to_pydatetime") else when
    return abs(when - datetime.now(UTC)) < timedelta(minutes=1)


@contextmanager
def skew_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Every ClockSkewWarning raised in the block (each one, not once per location)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ClockSkewWarning)
        yield caught
    caught[:] = [w for w in caught if issubclass(w.category, ClockSkewWarning)]


@contextmanager
def no_skew_warning() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClockSkewWarning)
        yield


def test_the_bound_is_five_minutes() -> None:
    assert timedelta(minutes=5) == CLOCK_SKEW


def test_a_date_in_2099_is_not_trusted_by_default_and_warned_once() -> None:
    with service_at(FUTURE) as sb, Client(EXEMPT_KEY, sb.url) as client, skew_warnings() as caught:
        first = client.list_cluster_pods_raw(CLUSTER).observed_at
        second = client.list_cluster_pods_raw(CLUSTER).observed_at
    assert near_now(first) and near_now(second)
    assert len(caught) == 1  # once per client: a skewed clock stays skewed
    assert "2099" in str(caught[0].message)
    assert "trust_service_clock" in str(caught[0].message)


def test_trust_service_clock_keeps_the_service_date_silently() -> None:
    with service_at(FUTURE) as sb, Client(EXEMPT_KEY, sb.url, trust_service_clock=True) as client:
        assert client.trust_service_clock is True
        with no_skew_warning():
            listing = client.list_cluster_pods_raw(CLUSTER)
    assert listing.observed_at.year == 2099


def test_a_load_follows_the_client_rule() -> None:
    with service_at(FUTURE) as sb:
        with Client(EXEMPT_KEY, sb.url) as client, pytest.warns(ClockSkewWarning):
            frame = load_cluster_pods(CLUSTER, client=client, progress=False)
        assert len(frame) and all(near_now(t) for t in frame["observed_at"])
        with Client(EXEMPT_KEY, sb.url, trust_service_clock=True) as client, no_skew_warning():
            frame = load_cluster_pods(CLUSTER, client=client, progress=False)
        assert len(frame) and set(frame["observed_at"].dt.year) == {2099}


def test_the_async_client_has_the_option_too() -> None:
    async def load(sb: Sandbox, trust: bool) -> Any:
        async with AsyncClient(EXEMPT_KEY, sb.url, trust_service_clock=trust) as client:
            return await aload_cluster_pods(CLUSTER, client=client, progress=False)

    with service_at(FUTURE) as sb:
        with pytest.warns(ClockSkewWarning):
            untrusted = asyncio.run(load(sb, False))
        with no_skew_warning():
            trusted = asyncio.run(load(sb, True))
    assert all(near_now(t) for t in untrusted["observed_at"])
    assert set(trusted["observed_at"].dt.year) == {2099}


def test_a_date_within_the_bound_is_the_observation_time() -> None:
    near = datetime.now(UTC) - timedelta(minutes=2)
    with service_at(near) as sb, Client(EXEMPT_KEY, sb.url) as client, no_skew_warning():
        when = client.list_cluster_pods_raw(CLUSTER).observed_at
    assert abs(when - near) < timedelta(seconds=5)


def test_twins_keep_the_option_and_share_the_warning() -> None:
    with service_at(FUTURE) as sb, Client(FULL_ACCESS_KEY, sb.url) as client:
        assert client.trust_service_clock is False
        assert client.as_async().trust_service_clock is False
        trusting = client.with_options(trust_service_clock=True)
        assert trusting.trust_service_clock is True and client.trust_service_clock is False
        assert trusting.as_async().trust_service_clock is True
        with no_skew_warning():
            assert trusting.list_cluster_pods_raw(CLUSTER).observed_at.year == 2099
        assert client.rate_limit is not None  # what the twin learnt: one pacer, one status
        assert client.rate_limit == trusting.rate_limit
        with skew_warnings() as caught:
            load_cluster_pods(CLUSTER, client=client, progress=False)  # through an as_async twin
            client.list_cluster_pods_raw(CLUSTER)
        assert len(caught) == 1


def test_the_option_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="trust_service_clock"):
        Client("k", "http://127.0.0.1:1", trust_service_clock="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="trust_service_clock"):
        AsyncClient("k", "http://127.0.0.1:1", trust_service_clock=1)  # type: ignore[arg-type]


def test_the_public_observed_at_applies_the_same_rule() -> None:
    response = httpx.Response(200, headers={"Date": "Tue, 01 Jun 2099 00:00:00 GMT"})
    assert near_now(observed_at(response))
    assert observed_at(response, trust_service_clock=True) == FUTURE


def test_what_a_twin_of_a_twin_learns_of_the_rate_limit_reaches_the_client() -> None:
    """``collect`` loads through ``with_options`` and the load through ``as_async``: the
    caller's client must still see the policy (its schedule is judged by it)."""
    with service_at(FUTURE) as sb, Client(FULL_ACCESS_KEY, sb.url) as client:
        trusting = client.with_options(trust_service_clock=True)
        load_cluster_pods(CLUSTER, client=trusting, progress=False)
        assert client.rate_limit is not None and client.rate_limit == trusting.rate_limit

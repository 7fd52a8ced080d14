"""Fleet loads under failure: partial results, typed errors, and nothing left behind.

A fleet load fans out concurrently; when some clusters fail (404, 403, timeout)
the good ones must still arrive and the bad ones be reported, and afterwards no
task, thread or socket of the load may survive. Connections are counted from
``/proc`` (Linux), the concurrency on the server side by a counting sandbox app.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from loopback import client_side_threads, threads_started_since

from ccanalytics import (
    ApiTimeoutError,
    FleetLoadError,
    NotFoundError,
    PermissionDeniedError,
    aload_cluster_pods,
    load_cluster_pods,
)
from ccanalytics.sandbox import LIMITED_KEY, Sandbox, SandboxApp

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux /proc")

MakeSandbox = Callable[..., Sandbox]

GOOD = ["cl-infer-prod", "cl-etl-cpu"]
#: cluster -> what goes wrong with it for the limited key
BAD = {
    "cl-missing": NotFoundError,  # no such cluster
    "cl-llama70b-train": PermissionDeniedError,  # outside the limited key's scope
    "cl-finetune-7b": ApiTimeoutError,  # in scope, but the server is too slow
}
FLEET = ["cl-infer-prod", "cl-missing", "cl-llama70b-train", "cl-finetune-7b", "cl-etl-cpu"]
GOOD_PODS = {"cl-infer-prod": 12, "cl-etl-cpu": 5}


@pytest.fixture
def fleet_sandbox(make_sandbox: MakeSandbox) -> Sandbox:
    sb = make_sandbox(limited_clusters=frozenset({*GOOD, "cl-finetune-7b"}))
    sb.app.add_fault("slow", seconds=1.5, times=None, path="/v2/clusters/cl-finetune-7b/pods")
    return sb


def _limited_client(sb: Sandbox) -> Any:
    return sb.client(LIMITED_KEY, timeout=0.3, max_retries=1)


# -- what the caller gets --------------------------------------------------------------


def test_collect_returns_the_good_clusters_and_reports_the_bad_ones(
    fleet_sandbox: Sandbox, fast_retries
) -> None:
    with _limited_client(fleet_sandbox) as client:
        frame = load_cluster_pods(FLEET, client=client, errors="collect")
    assert frame["cluster_id"].value_counts().to_dict() == GOOD_PODS
    assert list(frame["cluster_id"].unique()) == GOOD  # in the order asked for
    errors = frame.attrs["errors"]
    assert set(errors) == set(BAD)
    assert all(isinstance(message, str) for message in errors.values())
    assert "404 Not Found" in errors["cl-missing"]
    assert "403 Forbidden" in errors["cl-llama70b-train"]
    assert "timed out" in errors["cl-finetune-7b"]
    # Timeouts are retried, 4xx are not.
    app = fleet_sandbox.app
    assert app.count("GET", "/v2/clusters/cl-finetune-7b/pods") == 2
    assert app.count("GET", "/v2/clusters/cl-missing/pods") == 1
    assert app.count("GET", "/v2/clusters/cl-llama70b-train/pods") == 1


def test_raise_gives_a_fleet_load_error_with_the_frame_and_typed_errors(
    fleet_sandbox: Sandbox, fast_retries
) -> None:
    with _limited_client(fleet_sandbox) as client, pytest.raises(FleetLoadError) as info:
        load_cluster_pods(FLEET, client=client)
    err = info.value
    assert list(err.errors) == [cid for cid in FLEET if cid in BAD]  # order asked for
    assert {cid: type(e) for cid, e in err.errors.items()} == BAD
    assert err.frame["cluster_id"].value_counts().to_dict() == GOOD_PODS
    message = str(err)
    assert message.startswith("3 of 5 clusters failed to load")
    assert all(cid in message for cid in BAD)


def test_a_fleet_where_everything_fails_still_gives_a_typed_frame(
    fleet_sandbox: Sandbox, fast_retries
) -> None:
    with _limited_client(fleet_sandbox) as client:
        frame = load_cluster_pods(
            ["cl-missing", "cl-llama70b-train"], client=client, errors="collect"
        )
    assert len(frame) == 0 and "cluster_id" in frame.columns
    assert str(frame["cluster_id"].dtype) == "string"
    assert set(frame.attrs["errors"]) == {"cl-missing", "cl-llama70b-train"}


# -- what is left behind ----------------------------------------------------------------


def _socket_inodes() -> set[str]:
    """Inodes of the sockets this process has open (``socket:[123]`` fd links)."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed while we looked
            continue
        if link.startswith("socket:["):
            out.add(link[8:-1])
    return out


def _client_sockets(server_port: int) -> int:
    """Open sockets of this process connected *to* ``server_port`` (the client side)."""
    inodes = _socket_inodes()
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == server_port and fields[9] in inodes:
                count += 1
    return count


def _port(sb: Sandbox) -> int:
    return int(sb.url.rsplit(":", 1)[1])


def _eventually(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_socket_probe_sees_a_kept_alive_connection(sandbox: Sandbox) -> None:
    # Validates the probe the leak tests rely on.
    client = sandbox.client()
    client.get_registry("reg-ngc")
    assert _client_sockets(_port(sandbox)) == 1
    client.close()
    assert _client_sockets(_port(sandbox)) == 0


def test_a_failing_fleet_load_leaks_no_connection_and_no_thread(
    fleet_sandbox: Sandbox, fast_retries
) -> None:
    baseline = len(_socket_inodes())
    threads = client_side_threads()
    with _limited_client(fleet_sandbox) as client:
        frame = load_cluster_pods(FLEET, client=client, errors="collect")
        assert len(frame) == 17
        # The load's own connections are closed as soon as it returns.
        assert _client_sockets(_port(fleet_sandbox)) == 0
    assert threads_started_since(threads) == set()
    # Server-side ends close once their handlers notice (the slow one sleeps first).
    assert _eventually(lambda: len(_socket_inodes()) <= baseline), (
        len(_socket_inodes()),
        baseline,
    )


def test_a_fleet_load_from_a_running_loop_leaves_no_worker_thread(
    fleet_sandbox: Sandbox, fast_retries
) -> None:
    threads = client_side_threads()

    async def notebook_cell() -> Any:
        # As in Jupyter: a loop is running, so the load runs on a worker thread.
        with _limited_client(fleet_sandbox) as client:
            return load_cluster_pods(FLEET, client=client, errors="collect")

    frame = asyncio.run(notebook_cell())
    assert set(frame.attrs["errors"]) == set(BAD)
    assert threads_started_since(threads) == set()
    assert _client_sockets(_port(fleet_sandbox)) == 0


def test_aload_in_our_own_loop_leaves_no_task_running(fleet_sandbox: Sandbox, fast_retries) -> None:
    async def main() -> tuple[Any, set[asyncio.Task[Any]]]:
        async with fleet_sandbox.async_client(LIMITED_KEY, timeout=0.3, max_retries=1) as c:
            with pytest.raises(FleetLoadError) as info:
                await aload_cluster_pods(FLEET, client=c)
            return info.value, asyncio.all_tasks() - {asyncio.current_task()}

    err, leftover = asyncio.run(main())
    assert leftover == set()
    assert {cid: type(e) for cid, e in err.errors.items()} == BAD
    assert _client_sockets(_port(fleet_sandbox)) == 0


def test_a_cancelled_fleet_load_leaves_nothing_running_and_the_client_usable(
    make_sandbox: MakeSandbox,
) -> None:
    sb = make_sandbox()
    # The first cluster (loaded alone) answers; the fan-out behind it hangs.
    slow = [
        sb.app.add_fault("slow", seconds=1.0, times=None, path=f"/v2/clusters/{cid}/")
        for cid in FLEET[1:]
    ]

    async def main() -> tuple[set[asyncio.Task[Any]], int, int]:
        async with sb.async_client(timeout=5.0) as c:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(aload_cluster_pods(FLEET, client=c), 0.3)
            leftover = asyncio.all_tasks() - {asyncio.current_task()}
            in_flight = c._pacer._in_flight  # every booked slot was given back
            for fault in slow:
                fault.times = 0
            pods = await c.list_cluster_pods("cl-research-dev")
            return leftover, in_flight, len(pods)

    start = time.monotonic()
    leftover, in_flight, n = asyncio.run(main())
    assert time.monotonic() - start < 1.0  # cancelled, not waited out
    assert (leftover, in_flight, n) == (set(), 0, 6)
    assert sb.app.count("GET", f"/v2/clusters/{FLEET[0]}/pods") == 1
    assert all(sb.app.count("GET", f"/v2/clusters/{cid}/pods") == 1 for cid in FLEET[1:])
    assert _client_sockets(_port(sb)) == 0


# -- how many connections at once -------------------------------------------------------


class InFlightApp(SandboxApp):
    """A sandbox that records how many requests it is handling at the same time."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._gauge = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def handle(self, *args: Any, **kwargs: Any) -> Any:
        with self._gauge:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(0.05)  # long enough for concurrent requests to overlap
            return super().handle(*args, **kwargs)
        finally:
            with self._gauge:
                self.in_flight -= 1


@pytest.fixture
def counting_sandbox() -> Iterator[Sandbox]:
    with Sandbox(InFlightApp()) as sb:
        yield sb


@pytest.mark.parametrize("max_connections", [2, 6])
def test_concurrency_never_exceeds_the_connection_limit(
    counting_sandbox: Sandbox, max_connections: int
) -> None:
    app = counting_sandbox.app
    assert isinstance(app, InFlightApp)
    clusters = sorted(app.data.clusters)
    limits = httpx.Limits(max_connections=max_connections)

    async def main() -> None:
        async with counting_sandbox.async_client(limits=limits) as c:
            frame = await aload_cluster_pods(clusters, client=c)
            assert frame["cluster_id"].nunique() == len(clusters)
            await asyncio.gather(*(c.get_registry("reg-ngc") for _ in range(10)))

    asyncio.run(main())
    assert sum(app.stats.values()) == len(clusters) + 10
    # Exactly the limit: requests did run concurrently, and never more than allowed.
    assert app.peak == max_connections
    assert app.in_flight == 0

"""Loading clusters into one frame: single, fleet, within the rate limit, partial failures."""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest
from loopback import client_side_threads, threads_started_since

import ccanalytics
from ccanalytics import FleetLoadError, NotFoundError, PermissionDeniedError
from ccanalytics.frames._build import pods_frame
from ccanalytics.sandbox import LIMITED_KEY


def test_one_cluster_loads_into_a_pods_frame(client, sandbox) -> None:
    frame = ccanalytics.load_cluster_pods("cl-llama70b-train", client=client)
    assert len(frame) == 32
    assert set(frame["cluster_id"]) == {"cl-llama70b-train"}
    expected = pods_frame(sandbox.app.data.clusters["cl-llama70b-train"])
    pd.testing.assert_frame_equal(frame.drop(columns="observed_at"), expected)


def test_fleet_load_concatenates_in_the_order_asked(client, sandbox) -> None:
    ids = ["cl-etl-cpu", "cl-infer-prod", "cl-bringup"]
    frame = ccanalytics.load_cluster_pods(ids, client=client)
    assert list(dict.fromkeys(frame["cluster_id"])) == ids
    assert len(frame) == sum(len(sandbox.app.data.clusters[c]) for c in ids)
    assert frame.index.equals(pd.RangeIndex(len(frame)))


def test_repeated_ids_are_loaded_once(client, sandbox) -> None:
    frame = ccanalytics.load_cluster_pods(["cl-etl-cpu", "cl-etl-cpu"], client=client)
    assert len(frame) == 5
    assert sandbox.app.count("GET", "/v2/clusters/cl-etl-cpu/pods") == 1


def test_fleet_load_under_a_small_quota_never_provokes_429(make_sandbox) -> None:
    sb = make_sandbox(rate_limits={"minute": (4, 2.0)})
    ids = [f"c{i}" for i in range(10)]
    sb.app.data.clusters.update(dict.fromkeys(ids, sb.app.data.clusters["cl-etl-cpu"]))
    with sb.client() as c:
        frame = ccanalytics.load_cluster_pods(ids, client=c)
    assert len(frame) == 50
    assert sb.app.statuses[429] == 0
    assert sb.app.statuses[200] == 10


def test_fleet_load_runs_requests_concurrently(make_sandbox) -> None:
    sb = make_sandbox(latency=0.3)
    ids = sorted(sb.app.data.clusters)
    import time

    with sb.client() as c:
        start = time.monotonic()
        ccanalytics.load_cluster_pods(ids, client=c)
        elapsed = time.monotonic() - start
    # The first goes alone, the other five together: about two latencies, not six.
    assert elapsed < 0.3 * len(ids) - 0.4


def test_a_failing_cluster_does_not_lose_the_others(make_sandbox) -> None:
    sb = make_sandbox()
    with sb.client(LIMITED_KEY) as c:
        with pytest.raises(FleetLoadError) as info:
            ccanalytics.load_cluster_pods(["cl-etl-cpu", "cl-llama70b-train", "nope"], client=c)
        frame = ccanalytics.load_cluster_pods(
            ["cl-etl-cpu", "cl-llama70b-train", "nope", "cl-infer-prod"], client=c, errors="collect"
        )
    err = info.value
    assert set(err.errors) == {"cl-llama70b-train", "nope"}
    assert isinstance(err.errors["cl-llama70b-train"], PermissionDeniedError)
    assert isinstance(err.errors["nope"], NotFoundError)
    assert set(err.frame["cluster_id"]) == {"cl-etl-cpu"}
    assert "2 of 3 clusters failed" in str(err)
    assert set(frame["cluster_id"]) == {"cl-etl-cpu", "cl-infer-prod"}
    assert set(frame.attrs["errors"]) == {"cl-llama70b-train", "nope"}


def test_a_single_failing_cluster_raises_its_own_error(client) -> None:
    with pytest.raises(NotFoundError):
        ccanalytics.load_cluster_pods("nope", client=client)


@pytest.mark.parametrize("bad", [[], "", [""], [3]])
def test_bad_cluster_ids_are_a_value_error(client, bad) -> None:
    with pytest.raises(ValueError):
        ccanalytics.load_cluster_pods(bad, client=client)


def test_all_failing_with_collect_gives_an_empty_frame_with_columns(client) -> None:
    frame = ccanalytics.load_cluster_pods(["x", "y"], client=client, errors="collect")
    # The columns of any load, observed_at included: a frame concatenated with it keeps
    # its dtypes.
    assert frame.empty and list(frame.columns) == [*pods_frame([]).columns, "observed_at"]
    assert frame["observed_at"].dtype == "datetime64[ns, UTC]"
    assert set(frame.attrs["errors"]) == {"x", "y"}


def test_loads_from_inside_a_running_event_loop(client) -> None:
    # What a notebook does: the kernel already runs a loop in this thread.
    async def in_notebook() -> int:
        return len(ccanalytics.load_cluster_pods("cl-etl-cpu", client=client))

    assert asyncio.run(in_notebook()) == 5


def test_async_load_with_an_async_client(sandbox) -> None:
    async def main() -> pd.DataFrame:
        async with sandbox.async_client() as c:
            return await ccanalytics.aload_cluster_pods(["cl-etl-cpu", "cl-finetune-7b"], client=c)

    assert len(asyncio.run(main())) == 9


def test_client_from_the_environment(sandbox, monkeypatch) -> None:
    monkeypatch.setenv("CCANALYTICS_API_KEY", sandbox.api_key)
    monkeypatch.setenv("CCANALYTICS_BASE_URL", sandbox.url)
    assert len(ccanalytics.load_cluster_pods("cl-etl-cpu")) == 5


def test_no_threads_left_behind(client) -> None:
    before = client_side_threads()
    ccanalytics.load_cluster_pods(["cl-etl-cpu", "cl-infer-prod"], client=client)
    assert threads_started_since(before) == set()


def test_progress_bar_counts_clusters(client, capsys) -> None:
    ccanalytics.load_cluster_pods(
        sorted(["cl-etl-cpu", "cl-infer-prod"]), client=client, progress=True
    )
    err = capsys.readouterr().err
    assert "2/2" in err and "clusters" in err


def test_progress_is_off_by_default_in_tests(client, capsys) -> None:
    ccanalytics.load_cluster_pods(
        ["cl-etl-cpu", "cl-infer-prod", "cl-bringup", "cl-finetune-7b"], client=client
    )
    assert "clusters" not in capsys.readouterr().err


def test_load_cluster_frames_gives_both_frames_from_one_request_each(client, sandbox) -> None:
    from ccanalytics.frames._build import gpus_frame

    ids = ["cl-finetune-7b", "cl-etl-cpu"]
    frames = ccanalytics.load_cluster_frames(ids, client=client)
    expected = pd.concat(
        [gpus_frame(sandbox.app.data.clusters[c], cluster_id=c) for c in ids], ignore_index=True
    )
    pd.testing.assert_frame_equal(frames.gpus.drop(columns="observed_at"), expected)
    assert len(frames.pods) == 9
    assert sum(sandbox.app.count("GET", f"/v2/clusters/{c}/pods") for c in ids) == 2


def test_loads_stamp_observed_at_from_the_date_header(sandbox) -> None:
    """``observed_at`` is the service's clock (its Date header), not the local one
    (trusted: this fixed ``Date`` is more than ``CLOCK_SKEW`` from the local clock)."""
    from datetime import UTC, datetime

    import httpx

    sent = "Tue, 03 Nov 2026 04:05:06 GMT"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"pods": [{"id": "p1"}]}, headers={"Date": sent})

    transport = httpx.MockTransport(handler)
    with ccanalytics.Client(
        "k", "http://api.test", transport=transport, trust_service_clock=True
    ) as c:
        frames = ccanalytics.load_cluster_frames("cl", client=c)
    expected = pd.Timestamp(datetime(2026, 11, 3, 4, 5, 6, tzinfo=UTC))
    assert frames.pods["observed_at"].tolist() == [expected]
    assert str(frames.pods["observed_at"].dtype) == "datetime64[ns, UTC]"


@pytest.mark.parametrize("date", [None, "not a date", "Mon, 01 Jan 1900 00:00:00 GMT"])
def test_observed_at_falls_back_to_the_local_clock(date) -> None:
    from datetime import UTC, datetime

    import httpx

    headers = {"Date": date} if date else {}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"pods": [{"id": "p1"}]}, headers=headers)

    before = pd.Timestamp(datetime.now(UTC))
    with ccanalytics.Client("k", "http://api.test", transport=httpx.MockTransport(handler)) as c:
        frame = ccanalytics.load_cluster_pods("cl", client=c)
    after = pd.Timestamp(datetime.now(UTC))
    assert before <= frame["observed_at"].iloc[0] <= after


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_the_clients_rate_limit_is_the_loads_last(sandbox, kind) -> None:
    """The load runs on an async twin; the client passed in must show what it learned."""
    if kind == "sync":
        with sandbox.client() as c:
            assert c.rate_limit is None
            ccanalytics.load_cluster_pods(["cl-etl-cpu", "cl-infer-prod"], client=c)
            status = c.rate_limit
    else:

        async def fresh():
            return sandbox.async_client()

        c = asyncio.run(fresh())
        assert c.rate_limit is None
        ccanalytics.load_cluster_frames("cl-etl-cpu", client=c)
        status = c.rate_limit
    assert status is not None
    assert status.windows  # the sandbox announces its quota on every response


def test_a_fleet_load_defers_full_collections_until_it_ends(client, monkeypatch) -> None:
    """During the load the oldest generation's threshold is out of reach, so no
    collection traverses every object of the process; afterwards it is as it was."""
    import gc

    from ccanalytics.frames._build import FleetFrames

    seen: list[tuple[int, int, int]] = []
    add = FleetFrames.add

    def spying_add(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(gc.get_threshold())
        return add(self, *args, **kwargs)

    monkeypatch.setattr(FleetFrames, "add", spying_add)
    before = gc.get_threshold()
    gc.set_threshold(500, 7, 9)  # a caller's own settings: kept, and given back
    try:
        ccanalytics.load_cluster_pods(["cl-etl-cpu", "cl-infer-prod"], client=client)
        assert seen and all(t[:2] == (500, 7) and t[2] >= 1_000_000 for t in seen)
        assert gc.get_threshold() == (500, 7, 9)
    finally:
        gc.set_threshold(*before)

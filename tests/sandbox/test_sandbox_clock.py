"""The sandbox on a simulated clock: Date headers, the timeline fleet, windows in simulated time."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from statistics import median
from typing import Any

import httpx
import pytest

from ccanalytics.sandbox import (
    EXEMPT_KEY,
    FULL_ACCESS_KEY,
    IN_PROCESS_URL,
    SECRET_PREFIX,
    Sandbox,
    SandboxApp,
    SandboxTransport,
    SimulatedClock,
)

START = datetime(2026, 11, 2, tzinfo=UTC)
AUTH = {"Authorization": f"Bearer {FULL_ACCESS_KEY}"}
EXEMPT = {"Authorization": f"Bearer {EXEMPT_KEY}"}


def at(hh: int, mm: int = 0, day: int = 0) -> datetime:
    return START + timedelta(days=day, hours=hh, minutes=mm)


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock()


@pytest.fixture
def http(clock: SimulatedClock) -> Iterator[httpx.Client]:
    """An httpx client on an in-process timeline sandbox (exempt key: no windows)."""
    app = SandboxApp(clock=clock)
    with httpx.Client(
        transport=SandboxTransport(app), base_url=IN_PROCESS_URL, headers=EXEMPT
    ) as c:
        yield c


def pods_at(http: httpx.Client, clock: SimulatedClock, when: datetime, cluster: str) -> Any:
    clock.advance_to(when)
    r = http.get(f"/v2/clusters/{cluster}/pods")
    return r.status_code, (r.json().get("pods") if r.status_code == 200 else r.json())


def mean_gpu(pod: dict[str, Any]) -> float:
    gpus = pod["runtime"]["gpus"]
    return sum(g["util"] for g in gpus) / len(gpus)


# -- the clock --------------------------------------------------------------------


def test_clock_starts_at_the_default_and_advances() -> None:
    clock = SimulatedClock()
    assert clock.now() == START and clock.now().tzinfo is not None
    clock.advance(timedelta(minutes=5))
    clock.advance(30)
    clock.advance(0.5)
    assert clock.now() == START + timedelta(minutes=5, seconds=30.5)


@pytest.mark.parametrize("bad", [-1, timedelta(seconds=-1), float("nan")])
def test_clock_never_goes_backwards(bad: Any) -> None:
    clock = SimulatedClock()
    with pytest.raises(ValueError):
        clock.advance(bad)
    assert clock.now() == START


def test_clock_refuses_a_naive_start() -> None:
    with pytest.raises(ValueError):
        SimulatedClock(datetime(2026, 11, 2))


# -- Date ---------------------------------------------------------------------------


def test_every_response_carries_the_simulated_date(clock: SimulatedClock) -> None:
    """Over real loopback HTTP: 200, 401, 404 and 405 all say the simulated time."""
    clock.advance(timedelta(hours=9, minutes=7, seconds=3))
    with Sandbox(SandboxApp(clock=clock)) as sb:
        answers = [
            httpx.get(f"{sb.url}/v2/clusters/cl-etl-cpu/pods", headers=AUTH),
            httpx.get(f"{sb.url}/v2/clusters/cl-etl-cpu/pods"),
            httpx.get(f"{sb.url}/v2/clusters/nope/pods", headers=AUTH),
            httpx.delete(f"{sb.url}/v2/clusters/cl-etl-cpu/pods", headers=AUTH),
        ]
    assert [r.status_code for r in answers] == [200, 401, 404, 405]
    for r in answers:
        assert r.headers.get_list("Date") == ["Mon, 02 Nov 2026 09:07:03 GMT"]
        assert parsedate_to_datetime(r.headers["Date"]) == clock.now()


def test_without_a_clock_the_snapshot_is_served_as_before() -> None:
    app = SandboxApp()
    with httpx.Client(transport=SandboxTransport(app), base_url=IN_PROCESS_URL) as c:
        r = c.get("/v2/clusters/cl-bringup/pods", headers=AUTH)
    assert r.json()["pods"] == app.data.clusters["cl-bringup"]
    assert "Date" not in r.headers  # in process, no clock: nothing to stamp
    assert app.rate_limits == {
        "minute": (600, 60.0),
        "hour": (20_000, 3600.0),
        "day": (200_000, 86400.0),
    }


# -- same seed, same history -----------------------------------------------------------


def listing_bytes(seed: int, when: datetime, cluster: str) -> bytes:
    clock = SimulatedClock()
    clock.advance_to(when)
    app = SandboxApp(clock=clock, seed=seed)
    with httpx.Client(transport=SandboxTransport(app), base_url=IN_PROCESS_URL) as c:
        return c.get(f"/v2/clusters/{cluster}/pods", headers=EXEMPT).content


@pytest.mark.parametrize("cluster", ["cl-llama70b-train", "cl-infer-prod", "cl-bringup"])
def test_same_seed_same_bytes_at_equal_times(cluster: str) -> None:
    when = at(11, 42)
    assert listing_bytes(0, when, cluster) == listing_bytes(0, when, cluster)
    assert listing_bytes(0, when, cluster) != listing_bytes(1, when, cluster)


def test_history_does_not_depend_on_the_path_taken() -> None:
    """Reaching 11:42 in one step or in 5-minute steps gives the same listing."""
    clock = SimulatedClock()
    app = SandboxApp(clock=clock)
    with httpx.Client(transport=SandboxTransport(app), base_url=IN_PROCESS_URL) as c:
        while clock.now() < at(11, 40):
            c.get("/v2/clusters/cl-llama70b-train/pods", headers=EXEMPT)
            clock.advance(300)
        clock.advance_to(at(11, 42))
        stepped = c.get("/v2/clusters/cl-llama70b-train/pods", headers=EXEMPT).content
    assert stepped == listing_bytes(0, at(11, 42), "cl-llama70b-train")


# -- the events at their times ---------------------------------------------------------


def straggling_ranks(pods: list[dict[str, Any]]) -> list[int]:
    """Ranks below 70 % of the cluster's median GPU utilization."""
    typical = median(mean_gpu(p) for p in pods)
    return [p["cluster"]["rank"] for p in pods if mean_gpu(p) < 0.7 * typical]


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        (at(0), [13]),
        (at(9, 59), [13]),
        (at(10), [5, 13]),
        (at(13, 59), [5, 13]),
        (at(14), [13]),
        (at(23, 30), [13]),
        (at(10, 30, day=1), [5, 13]),  # the day repeats
    ],
)
def test_training_stragglers(http: httpx.Client, clock: SimulatedClock, when, expected) -> None:
    status, pods = pods_at(http, clock, when, "cl-llama70b-train")
    assert status == 200 and len(pods) == 32
    assert all(p["gpu"] == {"id": "NVIDIA H100 80GB HBM3", "count": 8} for p in pods)
    assert straggling_ranks(pods) == expected


@pytest.mark.parametrize(
    ("when", "busy"),
    [
        (at(3), False),
        (at(6, 59), False),
        (at(7), True),
        (at(14, 30), True),
        (at(21, 59), True),
        (at(22), False),
        (at(7, 30, day=1), True),
    ],
)
def test_inference_pods_idle_at_night(http, clock, when, busy: bool) -> None:
    status, pods = pods_at(http, clock, when, "cl-infer-prod")
    assert status == 200 and len(pods) == 12
    diurnal = [p for p in pods if p["cluster"]["rank"] in (4, 9, 10)]
    utils = [g["util"] for p in diurnal for g in p["runtime"]["gpus"]]
    if busy:
        assert all(40 <= u <= 90 for u in utils), utils
    else:
        assert all(u < 5 for u in utils), utils
    assert all(p["cost"] > 0 and p["status"] == "RUNNING" for p in diurnal)  # paid for
    others = [g["util"] for p in pods if p not in diurnal for g in p["runtime"]["gpus"]]
    assert min(others) >= 40


@pytest.mark.parametrize(
    ("when", "statuses"),
    [
        (at(7, 59), []),
        (at(8), ["PROVISIONING"] * 4),
        (at(8, 10), ["STARTING"] * 4),
        (at(8, 20), ["RUNNING"] * 4),
        (at(12), ["RUNNING"] * 3 + ["ERROR"]),
        (at(16), ["EXITED"] * 4),
        (at(18), ["TERMINATED"] * 4),
        (at(18, 30), []),
        (at(8, 20, day=1), ["RUNNING"] * 4),
    ],
)
def test_bringup_lifecycle(http, clock, when, statuses: list[str]) -> None:
    status, pods = pods_at(http, clock, when, "cl-bringup")
    assert status == 200 and [p["status"] for p in pods] == statuses
    for pod in pods:
        assert (pod["runtime"] is not None) == (pod["status"] == "RUNNING")
        assert (pod["cost"] == 0.0) == (pod["status"] in ("EXITED", "TERMINATED"))
        assert (pod["cluster"]["rank"] is None) == (pod["status"] == "PROVISIONING")
        if pod["status"] == "RUNNING":
            uptime = (when - at(8, 20, day=(when - START).days)).total_seconds()
            assert pod["runtime"]["uptime"] == uptime


def test_bringup_pods_are_new_every_day(http, clock) -> None:
    _, today = pods_at(http, clock, at(9), "cl-bringup")
    _, tomorrow = pods_at(http, clock, at(9, day=1), "cl-bringup")
    assert not {p["id"] for p in today} & {p["id"] for p in tomorrow}


def test_afternoon_cluster_is_created_at_14(http, clock) -> None:
    status, body = pods_at(http, clock, at(13, 59), "cl-eval-afternoon")
    assert status == 404 and body["status"] == 404
    status, pods = pods_at(http, clock, at(14), "cl-eval-afternoon")
    assert status == 200 and [p["status"] for p in pods] == ["PROVISIONING"] * 4
    status, pods = pods_at(http, clock, at(14, 10), "cl-eval-afternoon")
    assert [p["status"] for p in pods] == ["RUNNING"] * 4
    status, pods = pods_at(http, clock, at(2, day=1), "cl-eval-afternoon")
    assert status == 200 and pods[0]["runtime"]["uptime"] == 11 * 3600 + 50 * 60


def test_uptime_grows_with_the_clock(http, clock) -> None:
    _, before = pods_at(http, clock, at(1), "cl-finetune-7b")
    _, after = pods_at(http, clock, at(1, 5), "cl-finetune-7b")
    assert [b["runtime"]["uptime"] + 300 for b in before] == [a["runtime"]["uptime"] for a in after]


def test_app_lists_the_clusters_of_the_moment(clock: SimulatedClock) -> None:
    app = SandboxApp(clock=clock)
    assert "cl-eval-afternoon" not in app.cluster_ids()
    assert {"cl-slurm-hpc", "cl-etl-cpu", "cl-bringup"} <= set(app.cluster_ids())
    clock.advance_to(at(15))
    assert "cl-eval-afternoon" in app.cluster_ids()


# -- rate-limit windows on the simulated clock -------------------------------------


def test_document_policy_counted_in_simulated_time(clock: SimulatedClock) -> None:
    app = SandboxApp(clock=clock)
    with httpx.Client(transport=SandboxTransport(app), base_url=IN_PROCESS_URL, headers=AUTH) as c:
        clock.advance(30)  # 00:00:30: the minute window resets at 00:01:00
        first = c.get("/v2/registries/reg-ngc")
        assert first.headers["RateLimit-Policy"] == (
            '"minute";q=60;w=60, "hour";q=3000;w=3600, "day";q=50000;w=86400'
        )
        assert first.headers["RateLimit"] == (
            '"minute";r=59;t=30, "hour";r=2999;t=3570, "day";r=49999;t=86370'
        )
        for _ in range(59):
            assert c.get("/v2/registries/reg-ngc").status_code == 200
        refused = c.get("/v2/registries/reg-ngc")
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "30"
        clock.advance(29)
        assert c.get("/v2/registries/reg-ngc").status_code == 429  # no real time counts
        clock.advance(1)  # 00:01:00: a new minute
        again = c.get("/v2/registries/reg-ngc")
        assert again.status_code == 200
        assert again.headers["RateLimit"].startswith('"minute";r=59;t=60, "hour";r=2939;')


def test_rate_limits_option_wins_on_a_simulated_clock(clock: SimulatedClock) -> None:
    app = SandboxApp(clock=clock, rate_limits={"minute": (2, 60.0)})
    with httpx.Client(transport=SandboxTransport(app), base_url=IN_PROCESS_URL, headers=AUTH) as c:
        codes = [c.get("/v2/registries/reg-ngc").status_code for _ in range(3)]
        clock.advance(timedelta(minutes=1))
        codes.append(c.get("/v2/registries/reg-ngc").status_code)
    assert codes == [200, 200, 429, 200]


def test_speed_runs_the_clock_with_real_time() -> None:
    clock = SimulatedClock(speed=3600.0)
    first = clock.now()
    second = clock.now()
    assert START <= first <= second  # it moves forward by itself, never back


def test_every_secret_of_the_timeline_has_the_prefix(clock: SimulatedClock) -> None:
    app = SandboxApp(clock=clock)
    clock.advance_to(at(15))
    secrets = app.secrets()
    served = [
        v
        for c in app.cluster_ids()
        for pod in app.cluster_pods(c) or []
        for v in pod["env"].values()
    ]
    assert served and set(served) <= set(secrets)
    assert all(s.startswith(SECRET_PREFIX) for s in secrets)


# -- the command --------------------------------------------------------------------


def test_sandbox_command_runs_on_a_simulated_clock() -> None:
    """``--simulated-start 2026-11-02T09:00Z --speed 60``: Date is simulated and moves 60x."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "ccanalytics", "sandbox", "--port", str(port)]
    command += ["--simulated-start", "2026-11-02T09:00Z", "--speed", "60"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert f"127.0.0.1:{port}" in proc.stdout.readline()
        assert "simulated clock: 2026-11-02T09:00" in proc.stdout.readline()
        r = httpx.get(f"http://127.0.0.1:{port}/v2/clusters/cl-llama70b-train/pods", headers=AUTH)
        served_at = parsedate_to_datetime(r.headers["Date"])
        # The process started moments ago: at 60x, a few simulated minutes at most.
        assert at(9) <= served_at < at(9, 30)
        assert r.status_code == 200 and len(r.json()["pods"]) == 32
        assert r.headers["RateLimit-Policy"].startswith('"minute";q=60;w=60')
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize(
    "args", [["--speed", "0"], ["--speed", "-1"], ["--speed", "nan"], ["--simulated-start", "x"]]
)
def test_sandbox_command_refuses_a_bad_clock(args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ccanalytics", "sandbox", "--port", "0", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"argument {args[0]}" in proc.stderr.strip().splitlines()[-1]  # names the option


def test_documented_levels_hold_every_half_hour_of_a_day(http, clock) -> None:
    """The timeline's levels (ccanalytics.sandbox): GPUs within 3 points of their level (1 when idle)."""
    levels = {
        "cl-finetune-7b": lambda rank, hour: 81,
        "cl-slurm-hpc": lambda rank, hour: 72,
        "cl-research-dev": lambda rank, hour: 0 if rank in (0, 2, 3) else 46,
        "cl-llama70b-train": lambda rank, hour: (
            46.5 if rank == 13 or (rank == 5 and 10 <= hour < 14) else 93
        ),
    }
    for step in range(48):
        when = START + timedelta(minutes=30 * step)
        for cluster, level in levels.items():
            _, pods = pods_at(http, clock, when, cluster)
            for pod in pods:
                rank = pod["cluster"]["rank"]
                if pod.get("gpu"):
                    expected = level(rank, when.hour)
                    spread = 1 if expected == 0 else 3
                    utils = [g["util"] for g in pod["runtime"]["gpus"]]
                    assert len(utils) == pod["gpu"]["count"]
                    assert all(abs(u - expected) <= spread + 0.5 for u in utils), (
                        cluster,
                        rank,
                        when,
                        utils,
                    )
                else:
                    assert "gpu" not in pod and pod["cpu"]["vcpuCount"] == 16
                cpu_level = 35 if pod.get("gpu") else 70
                assert abs(pod["runtime"]["cpu"]["util"] - cpu_level) <= 5.5
                assert abs(pod["runtime"]["memory"]["util"] - 55) <= 8.5


def test_a_simulated_sandboxs_clients_trust_its_clock() -> None:
    """Its Date is its simulated time by design: its clients keep it, and say nothing."""
    import asyncio
    import warnings

    from ccanalytics import aload_cluster_pods, load_cluster_pods
    from ccanalytics.errors import ClockSkewWarning

    async def load_async(sb: Sandbox) -> Any:
        async with sb.async_client(EXEMPT_KEY) as client:
            return await aload_cluster_pods("cl-infer-prod", client=client, progress=False)

    with Sandbox(SandboxApp(clock=SimulatedClock(START))) as sb, warnings.catch_warnings():
        warnings.simplefilter("error", ClockSkewWarning)
        with sb.client(EXEMPT_KEY) as client:
            assert client.trust_service_clock is True
            frame = load_cluster_pods("cl-infer-prod", client=client, progress=False)
        later = asyncio.run(load_async(sb))
        with sb.client(EXEMPT_KEY, trust_service_clock=False) as client:
            assert client.trust_service_clock is False  # asked for: the local clock
    assert set(frame["observed_at"]) == {START} and set(later["observed_at"]) == {START}
    with Sandbox() as sb, sb.client() as client:
        assert client.trust_service_clock is False  # a sandbox on the real clock

"""The optional forgotten pod: cl-research-dev gains an idle 8x H100 box from a chosen instant."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ccanalytics import pods_frame
from ccanalytics.sandbox import EXEMPT_KEY, SandboxApp, SandboxTransport, SimulatedClock

START = datetime(2026, 11, 1, tzinfo=UTC)
FORGOTTEN = START + timedelta(days=11, hours=9)


def _listing(app: SandboxApp) -> object:
    from ccanalytics import Client

    with Client(EXEMPT_KEY, "http://sandbox.invalid", transport=SandboxTransport(app)) as c:
        return pods_frame(c.list_cluster_pods("cl-research-dev"))


def test_the_forgotten_pod_runs_idle_from_its_instant_only() -> None:
    clock = SimulatedClock(START)
    app = SandboxApp(clock=clock, forgotten_pod_at=FORGOTTEN)
    clock.advance_to(FORGOTTEN - timedelta(minutes=1))
    before = _listing(app)
    clock.advance_to(FORGOTTEN)
    after = _listing(app)
    assert len(before) == 6  # type: ignore[arg-type]
    assert len(after) == 7  # type: ignore[arg-type]
    pod = after[after["rank"] == 6].iloc[0]  # type: ignore[index]
    assert (pod["status"], pod["gpu_type"], pod["gpu_count"]) == (
        "RUNNING",
        "NVIDIA H100 80GB HBM3",
        8,
    )
    assert pod["cost"] == 23.92
    assert pod["gpu_util_max"] <= 1.0


def test_without_the_option_the_fleet_is_unchanged() -> None:
    clock = SimulatedClock(START)
    clock.advance_to(FORGOTTEN + timedelta(days=1))
    assert len(_listing(SandboxApp(clock=clock))) == 6  # type: ignore[arg-type]

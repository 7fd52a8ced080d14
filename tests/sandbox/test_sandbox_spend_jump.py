"""The optional spend jump: a burst of pods in one cluster, for a while, then gone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ccanalytics import Client, pods_frame
from ccanalytics.sandbox import EXEMPT_KEY, SandboxApp, SandboxTransport, SimulatedClock, SpendJump

START = datetime(2026, 11, 1, tzinfo=UTC)
JUMP = datetime(2026, 11, 24, 14, tzinfo=UTC)  # a Tuesday


def _cost(app: SandboxApp, cluster: str = "cl-infer-prod") -> tuple[int, float]:
    with Client(EXEMPT_KEY, "http://sandbox.invalid", transport=SandboxTransport(app)) as c:
        frame = pods_frame(c.list_cluster_pods(cluster))
    return len(frame), round(float(frame["cost"].sum()), 2)


def test_a_jump_adds_its_burst_pods_for_its_hours_only() -> None:
    clock = SimulatedClock(START)
    app = SandboxApp(clock=clock, spend_jumps=[SpendJump(JUMP)])
    seen = []
    for when in (
        JUMP - timedelta(minutes=1),
        JUMP,
        JUMP + timedelta(minutes=59),
        JUMP + timedelta(hours=1),
    ):
        clock.advance_to(when)
        seen.append(_cost(app))
    # 6 x 3.78 + 6 x 0.86 = 27.84 USD/h; with three 8x H100 at 23.92 more: 99.60.
    assert seen == [(12, 27.84), (15, 99.60), (15, 99.60), (12, 27.84)]
    assert _cost(app, "cl-research-dev") == (6, 2.94)  # only the jump's cluster


def test_the_burst_pods_are_busy_h100s_after_the_clusters_ranks() -> None:
    clock = SimulatedClock(START)
    app = SandboxApp(
        clock=clock, spend_jumps=[SpendJump(JUMP, hours=2, cluster="cl-research-dev", pods=2)]
    )
    clock.advance_to(JUMP + timedelta(hours=1))
    with Client(EXEMPT_KEY, "http://sandbox.invalid", transport=SandboxTransport(app)) as c:
        first = pods_frame(c.list_cluster_pods("cl-research-dev"))
        again = pods_frame(c.list_cluster_pods("cl-research-dev"))
    burst = first[first["rank"] >= 6]
    assert list(burst["rank"]) == [6, 7]
    assert set(burst["gpu_type"]) == {"NVIDIA H100 80GB HBM3"} and set(burst["cost"]) == {23.92}
    assert set(burst["status"]) == {"RUNNING"} and (burst["gpu_util_mean"] > 80).all()
    assert first.equals(again)  # deterministic: the same instant, the same listing


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"start": datetime(2026, 11, 24, 14)}, "aware"),
        ({"start": JUMP, "hours": 0}, "more than 0 hours"),
        ({"start": JUMP, "pods": 0}, "1 pod or more"),
        ({"start": JUMP, "cluster": "cl-bringup"}, "steady cluster"),
    ],
)
def test_a_bad_jump_is_refused(given: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        SpendJump(**given)  # type: ignore[arg-type]

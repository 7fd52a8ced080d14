"""Budgets on the simulated-clock sandbox: rules fire and clear at the hand-computed snapshots.

``cl-research-dev`` costs 6 x 0.49 = 2.94 USD/h; from Nov 12 09:00 a forgotten 8x H100
box adds 23.92 USD/h (26.86 in all). One snapshot every 30 minutes, Nov 12 00:00 to
Nov 13 05:00, each judged with the policy right after it is collected, as cron would:

- ``max_spend.day = 100``: on Nov 12 the day has spent 9 h x 2.94 = 26.46 USD by 09:00,
  then 26.86 USD/h: 93.61 at 11:30 (fine), 107.04 at 12:00 (breached). At midnight the
  day starts over (fine again); Nov 13 reaches 94.01 at 03:30 and 107.44 at 04:00
  (breached again).
- ``max_projected_spend.day = 150``: until 08:30 Nov 12 projects 24 h x 2.94 = 70.56
  (fine); at 09:00 it projects 26.46 + 26.86 x 15 = 429.36 (breached, three hours before
  the spend), and stays breached.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ccanalytics import Client, collect
from ccanalytics.history import check_policy, notify_on_change, parse_policy
from ccanalytics.sandbox import (
    EXEMPT_KEY,
    IN_PROCESS_URL,
    SandboxApp,
    SandboxTransport,
    SimulatedClock,
)

START = datetime(2026, 11, 12, tzinfo=UTC)
POLICY = """
[[rule]]
name = "research"
clusters = "cl-research-dev"
max_spend = { day = 100 }
max_projected_spend = { day = 150 }
notify = "https://hooks.example.com/research"
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_rules_fire_and_clear_exactly_at_the_hand_computed_snapshots(tmp_path: Path) -> None:
    clock = SimulatedClock(START)
    app = SandboxApp(clock=clock, forgotten_pod_at=datetime(2026, 11, 12, 9, tzinfo=UTC))
    policy = parse_policy(POLICY)
    sent: list[tuple[str, str, bool]] = []

    def post(url: str, text: str) -> None:
        cluster = re.search(r"cl-[a-z-]+", text)
        sent.append((f"{clock.now():%d %H:%M}", cluster and cluster.group(), "fine again" in text))

    # In process: the loopback path is tests/history/collector/test_collect_simulated_day.py's to check.
    transport = SandboxTransport(app)
    with Client(
        EXEMPT_KEY, IN_PROCESS_URL, transport=transport, trust_service_clock=True
    ) as client:
        while clock.now() <= START + timedelta(hours=29):
            collect(["cl-research-dev"], tmp_path, client=client, trust_service_clock=True)
            report = check_policy(tmp_path, policy)
            assert report.now == clock.now()
            notify_on_change(tmp_path, report.alerts(policy), now=clock.now(), post=post)
            clock.advance(timedelta(minutes=30))
    # (when, cluster, cleared?) per message; projected first, then the spend.
    assert [(when, cleared) for when, _, cleared in sent] == [
        ("12 09:00", False),  # the projection: 429.36 > 150
        ("12 12:00", False),  # the spend: 107.04 > 100
        ("13 00:00", True),  # a new day: the spend starts over
        ("13 04:00", False),  # 107.44 > 100 again
    ]
    assert {cluster for _, cluster, _ in sent} == {"cl-research-dev"}

"""A simulated month with a forgotten box and a spend jump: tiers, breach date, anomaly.

The sandbox from Sunday Nov 1 2026 00:00, a snapshot every 30 minutes of two clusters
(tests/simulated_month.py writes them a day at a time through the collector's writer):

- ``cl-research-dev`` costs 6 x 0.49 = 2.94 USD/h; from Thursday Nov 12 09:00 a
  forgotten 8x H100 box adds 23.92 USD/h (26.86 in all). By Nov 12 09:00 the month has
  spent 273 h x 2.94 = 802.62 USD; then 26.86 USD/h.
- ``cl-infer-prod`` costs 6 x 3.78 + 6 x 0.86 = 27.84 USD/h; on Tuesday Nov 24 from
  14:00 to 15:00 a spend jump (``SpendJump``) adds three 8x H100 boxes: 99.60 USD/h.

The month's budget for cl-research-dev is 4,000 USD, warning at half and at 80 %:
2,000 is passed (802.62 + 26.86 x 44.58 h) on Nov 14 at 05:35, 3,200 (89.26 h) on Nov 16
at 02:15, 4,000 (119.04 h) on Nov 17 at 08:02.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import ts
from simulated_month import write_month

from ccanalytics import History
from ccanalytics.history import notify_on_change, parse_policy
from ccanalytics.history.alerts._judge import judge_policy
from ccanalytics.sandbox import SandboxApp, SimulatedClock, SpendJump

START = datetime(2026, 11, 1, tzinfo=UTC)
POLICY = """
[[rule]]
name = "research budget"
clusters = "cl-research-dev"
max_spend = { month = 4000 }
max_projected_spend = { month = 4000 }
warn_at = [0.5, 0.8]
notify = "https://hooks.example.com/research"

[[rule]]
name = "spikes"
max_spend_anomaly_z = 3.5
"""


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> Path:
    app = SandboxApp(
        clock=SimulatedClock(START),
        forgotten_pod_at=datetime(2026, 11, 12, 9, tzinfo=UTC),
        spend_jumps=[SpendJump(datetime(2026, 11, 24, 14, tzinfo=UTC))],
    )
    store = tmp_path_factory.mktemp("month")
    return write_month(
        store, app, ["cl-research-dev", "cl-infer-prod"], datetime(2026, 11, 24, 15, 1, tzinfo=UTC)
    )


@pytest.mark.slow
def test_the_spend_tiers_warn_then_breach_at_the_hand_computed_checks(
    month: Path, tmp_path: Path
) -> None:
    policy = parse_policy(POLICY.split('[[rule]]\nname = "spikes"')[0])
    sent: list[tuple[str, str]] = []
    with History(month) as h:
        for at in pd.date_range("2026-11-13T18:00Z", "2026-11-17T12:00Z", freq="6h"):
            report = judge_policy(policy, h, at=at)
            spend = [j for j in report.judgements if j.threshold.figure == "max_spend"]
            notify_on_change(
                tmp_path,  # the alert states: the module's store is shared, never written
                [a for a in report.alerts(policy) if "max_spend." in a.key],
                now=at.to_pydatetime(),
                post=lambda url, text, at=at, spent=spend[0].value: sent.append(
                    (f"{at:%d %H:%M}", f"{spent:,.2f} {text[:42]}")
                ),
            )
    # Checked every six hours: 802.62 + 26.86 x 45 h = 2,011.32 at Nov 14 06:00;
    # x 93 h = 3,300.60 at Nov 16 06:00; x 123 h = 4,106.40 at Nov 17 12:00.
    assert sent == [
        ("14 06:00", "2,011.32 ccanalytics check: warning, past 50% of a "),
        ("16 06:00", "3,300.60 ccanalytics check: warning, past 80% of a "),
        ("17 12:00", "4,106.40 ccanalytics check: cl-research-dev: 4,106."),
    ]


@pytest.mark.slow
def test_the_projection_says_the_day_the_budget_runs_out(month: Path) -> None:
    policy = parse_policy(POLICY)
    at = ts("2026-11-12T12:00")
    with History(month) as h:
        row = h.spend(at, limit={"month": 4000}).set_index(["cluster_id", "period"])
        report = judge_policy(policy, h, at=at)
    research = row.loc[("cl-research-dev", "month")]
    # 802.62 + 26.86 x 3 h = 883.20 spent; (4000 - 883.20) / 26.86 = 116.04 h later:
    # Nov 17 08:02. The projection: 883.20 + 26.86 x 444 h = 12,809.04.
    assert round(research["spent"], 2) == 883.20
    assert round(research["projected"], 2) == 12809.04
    expected = at + pd.Timedelta(hours=(4000 - 883.20) / 26.86)
    assert abs(research["breach_at"] - expected) < pd.Timedelta(milliseconds=1)
    assert f"{research['breach_at']:%Y-%m-%d %H:%M}" == "2026-11-17 08:02"
    assert pd.isna(row.loc[("cl-infer-prod", "month"), "breach_at"])  # no limit given: NULL
    (projected,) = [
        j
        for j in report.judgements
        if j.key == "research budget/max_projected_spend.month@cl-research-dev"
    ]
    assert projected.breached and projected.tier == 1.0
    assert projected.sentence.startswith(
        "cl-research-dev: 12,809.04 USD projected for the month (883.20 USD spent since "
        "2026-11-01, then 26.86 USD/h to its end), over the limit of 4,000.00 USD"
    )
    assert projected.sentence.endswith(
        " cl-research-dev reaches its 4,000 USD month on 2026-11-17."
    )


@pytest.mark.slow
def test_the_spend_jump_is_an_anomaly_against_its_tuesdays(month: Path) -> None:
    policy = parse_policy(POLICY)
    with History(month) as h:
        found = h.spend_anomalies().set_index("cluster_id")
        report = judge_policy(policy, h)
        week_before = h.spend_anomalies("2026-11-17T15:00").set_index("cluster_id")
    infer = found.loc["cl-infer-prod"]
    # 14:00-15:00: 27.84 + 3 x 23.92 = 99.60 USD/h; the Tuesdays before (Nov 17, 10, 3):
    # 27.84 each: median 27.84, MAD 0, so z = +inf and the ratio decides: 3.58x.
    assert infer["hour"] == ts("2026-11-24T14:00")
    assert round(infer["spend"], 2) == 99.60 and round(infer["usual"], 2) == 27.84
    assert infer["weeks"] == 3 and infer["mad"] == 0 and bool(infer["unusual"])
    (judged,) = [
        j for j in report.judgements if j.key == "spikes/max_spend_anomaly_z@cl-infer-prod"
    ]
    assert judged.sentence == (
        "cl-infer-prod spent 3.6x its usual Tuesday 14:00 UTC (99.60 USD/h in the hour from "
        "2026-11-24 14:00; usually 27.84, the median of 3 weeks; robust z inf), over the "
        "limit of z 3.5 (rule 'spikes')."
    )
    # cl-research-dev at that hour: 26.86 against 26.86 (Nov 17), 2.94, 2.94: the
    # forgotten box is itself unusual once three weeks of baseline exist (9.1x).
    research = found.loc["cl-research-dev"]
    assert round(research["usual"], 2) == 2.94 and round(research["ratio"], 1) == 9.1
    # A week earlier two Tuesdays of baseline only: not judged, no alarm.
    assert week_before.loc["cl-infer-prod", "weeks"] == 2
    assert not week_before["unusual"].any()

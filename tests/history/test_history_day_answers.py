"""The answers against a simulated day: 288 five-minute snapshots collected over loopback.

The sandbox's timeline (ccanalytics.sandbox's docstring, shown on the docs site): in cl-llama70b-train
rank 13 straggles all day and rank 5 only 10:00-14:00; in cl-infer-prod ranks 4, 9 and
10 are idle 22:00-07:00. History must tell the chronic straggler from the transient
one, its idle cost must equal the computation by hand from the stored rows, and the
report's window section and ``check`` must print History's figures to the cent.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from ccanalytics import History, collect
from ccanalytics.cli import main
from ccanalytics.report import write_report
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

START = datetime(2026, 11, 2, tzinfo=UTC)
STEP = timedelta(minutes=5)
SNAPSHOTS = 288
CLUSTERS = ["cl-infer-prod", "cl-llama70b-train"]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("day")
    clock = SimulatedClock(START)
    # The exempt key: the client paces in real seconds, the simulated quota in simulated.
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        for _ in range(SNAPSHOTS):
            collect(CLUSTERS, store, client=client, trust_service_clock=True)
            clock.advance(STEP)
    return store


def test_the_chronic_straggler_is_told_from_the_transient_one(day: Path) -> None:
    with History(day) as h:
        slow = h.stragglers(min_share=0.0).set_index(["cluster_id", "rank"])
        chronic = h.stragglers()  # min_share=0.5
    assert chronic[["cluster_id", "rank"]].values.tolist() == [["cl-llama70b-train", 13]]
    assert slow.loc[("cl-llama70b-train", 13), "share"] == 1.0
    transient = slow.loc[("cl-llama70b-train", 5)]
    assert transient["flagged"] == 48  # 10:00 .. 13:55, every 5 minutes
    assert transient["first_flagged"] == pd.Timestamp("2026-11-02 10:00", tz="UTC")
    assert transient["last_flagged"] == pd.Timestamp("2026-11-02 13:55", tz="UTC")


def test_the_night_idle_pods_idle_cost_equals_the_hand_computation(day: Path) -> None:
    with History(day) as h:
        rows = h.pods(cluster_ids="cl-infer-prod")
        ours = h.idle_cost(by="pod").set_index("pod_id")
    # By hand: every snapshot but the last stands for the 5 minutes to the next.
    times = sorted(rows["observed_at"].unique())
    gaps = [b - a for a, b in itertools.pairwise(times)]
    span = dict(zip(times, [*gaps, pd.Timedelta(0)], strict=True))
    rows = rows.assign(hours=rows["observed_at"].map(span) / pd.Timedelta(hours=1))
    idle = rows[
        (rows["status"] == "RUNNING") & (rows["gpu_count"] > 0) & (rows["gpu_util_max"] < 10)
    ]
    by_pod = (idle["cost"] * idle["hours"]).groupby(idle["pod_id"]).sum()
    assert sorted(rows.loc[idle.index, "rank"].unique()) == [4, 9, 10]
    for pod_id, cost in by_pod.items():
        assert round(ours.loc[pod_id, "idle_cost"], 2) == round(cost, 2)
    # And the story: 00:00-07:00 and 22:00-23:55 idle, 8 h 55 min, at 3.78 + 2 x 0.86 USD/h.
    assert round(by_pod.sum(), 2) == round((3.78 + 2 * 0.86) * (7 + 115 / 60), 2)
    with History(day) as h:
        infer = h.idle_cost(by="cluster").set_index("cluster_id").loc["cl-infer-prod"]
    assert round(infer["idle_cost"], 2) == round(by_pod.sum(), 2)
    assert infer["unobserved_hours"] == 0


def test_the_lifetimes_say_when_the_inference_pods_were_idle(day: Path) -> None:
    with History(day) as h:
        life = h.pod_lifetimes()
        util = h.utilization(freq="1h", by="pod")
    idle = life[life["cluster_id"] == "cl-infer-prod"].head(3)
    assert sorted(idle["rank"]) == [4, 9, 10]
    assert idle["idle_hours"].tolist() == pytest.approx([7 + 115 / 60] * 3)
    mine = util[util["pod_id"].isin(idle["pod_id"])]
    by_hour = mine.groupby(mine["time"].dt.hour)["gpu_util_mean"]
    assert (by_hour.max().loc[[0, 3, 6, 22, 23]] < 5).all()
    assert (by_hour.min().loc[7:21] >= 40).all()


def test_check_and_the_report_print_historys_figures(
    day: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with History(day) as h:
        totals = h.idle_cost(timedelta(hours=24), by=None).iloc[0]
    code = main(
        [
            "check",
            "--store",
            str(day),
            "--window",
            "24h",
            "--max-idle-cost",
            "1",
            "--max-stragglers",
            "0",
        ]
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 3
    assert out[0].startswith(f"Idle GPUs cost {totals['idle_cost']:,.2f} USD in the last 24 h")
    assert out[1].startswith("1 rank straggled") and "cl-llama70b-train rank 13" in out[1]
    with Sandbox() as sb, sb.client() as client:
        summary = write_report(
            ["cl-infer-prod"], tmp_path / "r.html", client=client, store=day, window="24h"
        )
    assert (
        f"the fleet spent {totals['total_cost']:,.2f} USD: {totals['idle_cost']:,.2f} USD"
        in summary
    )
    assert "Chronic stragglers, flagged in at least half of their snapshots: " in summary
    assert "cl-llama70b-train rank 13 (100% of 288 snapshots)" in summary
    # The real run of flagged snapshots (10:00 to 13:55, each standing until the next).
    assert (
        "Straggled for a stretch only: cl-llama70b-train rank 5: flagged in 48 of 288 "
        "snapshots, 10:00 to 14:00 UTC (4 h)" in summary
    )

"""The answers against a simulated day: 288 five-minute snapshots (tests/simulated_day.py).

The sandbox's timeline (ccanalytics.sandbox's docstring, shown on the docs site): in cl-llama70b-train
rank 13 straggles all day and rank 5 only 10:00-14:00; in cl-infer-prod ranks 4, 9 and
10 are idle 22:00-07:00. History must tell the chronic straggler from the transient
one, and its idle cost must equal the computation by hand from the stored rows (that
``check`` and the report print these figures to the cent: tests/cli/test_check_day.py
and tests/report/test_report_day.py).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd
import pytest
from simulated_day import SimulatedDay

from ccanalytics import History

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def day(simulated_day: SimulatedDay) -> Path:
    """The simulated day's store (tests/simulated_day.py), read only."""
    return simulated_day.store


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

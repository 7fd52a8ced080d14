"""The cost plots draw the registry's measures: each bar of cost_breakdown is split into
in_use_cost, idle_cost and unjudged_cost, its length total_cost and the share at its end
idle_cost_share; the scatter's legend gives idle_pod_hours and idle_cost over the pods it
draws. The engine sums them; the tests check them against sums by hand."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ccanalytics.analysis import measures_by
from ccanalytics.frames import pods_frame
from ccanalytics.plots import cost_breakdown, cost_vs_utilization
from ccanalytics.sandbox import make_cluster_pods

#: (status, gpu_count, busiest GPU %, CPU %, USD/h, part by hand)
_PODS = (
    ("RUNNING", 8, 2.0, 30.0, 4.0, "idle"),
    ("RUNNING", 8, 90.0, 30.0, 6.0, "in use"),
    ("PROVISIONING", 8, None, None, 2.0, "no metrics"),
    ("RUNNING", 0, None, 40.0, 1.0, "in use"),  # a CPU pod reporting its CPU
    ("RUNNING", 0, None, None, 0.5, "no metrics"),  # a CPU pod that does not
    (None, 8, 3.0, 30.0, 3.0, "no metrics"),  # no status: never judged, never dropped
)


def _cluster(cid: str, scale: float = 1.0) -> pd.DataFrame:
    frame = pods_frame(make_cluster_pods(cid, len(_PODS), seed=3, util=50.0))
    status, gpus, busiest, cpu, cost, _ = zip(*_PODS, strict=True)
    return frame.assign(
        status=pd.array(status, dtype="string"),
        gpu_count=pd.array(gpus, dtype="Int64"),
        gpu_util_max=pd.array(busiest, dtype="Float64"),
        gpu_util_mean=pd.array(busiest, dtype="Float64"),
        cpu_util=pd.array(cpu, dtype="Float64"),
        cost=pd.array([c * scale for c in cost], dtype="Float64"),
    )


def _by_hand(part: str, scale: float = 1.0) -> float:
    return sum(cost for *_, cost, which in _PODS if which == part) * scale


@pytest.fixture
def ax() -> Axes:
    return Figure(figsize=(8, 6)).add_subplot()


def _parts(ax: Axes) -> dict[str, list[float]]:
    return {str(c.get_label()): [p.get_width() for p in c.patches] for c in ax.containers}


def _notes(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_each_pods_whole_cost_is_in_one_part_as_counted_by_hand(ax: Axes) -> None:
    cost_breakdown(_cluster("cl-a"), by="cluster", ax=ax)
    parts = _parts(ax)
    assert parts["in use"] == [pytest.approx(_by_hand("in use"))]  # 6 + 1
    assert parts["idle GPUs"] == [pytest.approx(_by_hand("idle"))]  # 4
    assert parts["no metrics (pending, starting, exited)"] == [pytest.approx(5.5)]
    # 4 of 16.5 USD/h idle: 24 %
    assert _notes(ax) == ["16.50 USD/h  (24% idle)"]


def test_the_parts_and_the_share_are_the_engines_measures(ax: Axes) -> None:
    pods = pd.concat([_cluster("cl-a"), _cluster("cl-b", 3.0)], ignore_index=True)
    cost_breakdown(pods, by="cluster", ax=ax)
    engine = measures_by(
        pods,
        ["in_use_cost", "idle_cost", "unjudged_cost", "total_cost", "idle_cost_share"],
        "cluster",
    ).set_index("cluster_id")
    top_first = ["cl-b", "cl-a"]
    assert _parts(ax)["idle GPUs"] == pytest.approx(
        engine.loc[top_first, "idle_cost_per_hour"].tolist()
    )
    assert _parts(ax)["in use"] == pytest.approx(
        engine.loc[top_first, "in_use_cost_per_hour"].tolist()
    )
    shares = engine.loc[top_first, "idle_cost_share"].tolist()
    totals = engine.loc[top_first, "cost_per_hour"].tolist()
    assert _notes(ax) == [
        f"{t:,.2f} USD/h  ({s:.0%} idle)" for t, s in zip(totals, shares, strict=True)
    ]


def test_the_others_bar_is_measured_over_its_groups(ax: Axes) -> None:
    """Three clusters at 1x, 2x and 3x with two bars: the last sums 1x and 2x, whose idle
    share is the quotient of their sums (4 of 49.5 USD/h: 8 %, cl-b's idle pod being
    unknown), not a mean of their shares (12 %)."""
    pods = pd.concat(
        [_cluster("cl-a"), _cluster("cl-b", 2.0), _cluster("cl-c", 3.0)], ignore_index=True
    )
    pods.loc[pods["cluster_id"] == "cl-b", "gpu_util_max"] = pd.NA  # cl-b's idle pod unknown
    cost_breakdown(pods, by="cluster", max_bars=2, ax=ax)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["cl-c", "2 others"]
    idle = _by_hand("idle")  # cl-a's alone: cl-b's busiest GPU is not known
    total = _by_hand("in use") + _by_hand("idle") + _by_hand("no metrics")
    assert _parts(ax)["idle GPUs"][1] == pytest.approx(idle)
    assert _notes(ax)[1] == f"{3 * total:,.2f} USD/h  ({idle / (3 * total):.0%} idle)"


def test_the_scatters_legend_counts_and_sums_the_idle_pods_drawn(ax: Axes) -> None:
    """Drawn: the GPU pods reporting a mean and a cost (0, 1 and the one without a status);
    idle among them: pod 0 alone (no status is never idle), 4 USD/h."""
    cost_vs_utilization(_cluster("cl-a"), ax=ax)
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert f"idle: 1 pods,\n{_by_hand('idle'):,.2f} USD/h" in labels
    assert "in use: 2 pods" in labels


def test_measures_by_nothing_is_one_row_of_the_groups_sums() -> None:
    pods = pd.concat([_cluster("cl-a"), _cluster("cl-b", 3.0)], ignore_index=True)
    names = ["idle_cost", "unjudged_cost", "idle_cost_share"]
    whole = measures_by(pods, names, None)
    by_cluster = measures_by(pods, names, "cluster")
    assert list(whole.columns) == [
        "idle_cost_per_hour",
        "unjudged_cost_per_hour",
        "idle_cost_share",
    ]
    assert len(whole) == 1
    assert whole["idle_cost_per_hour"].iloc[0] == pytest.approx(4 * _by_hand("idle"))
    assert whole["unjudged_cost_per_hour"].iloc[0] == pytest.approx(
        by_cluster["unjudged_cost_per_hour"].sum()
    )
    total = 4 * (_by_hand("in use") + _by_hand("idle") + _by_hand("no metrics"))
    assert whole["idle_cost_share"].iloc[0] == pytest.approx(4 * _by_hand("idle") / total)

"""Plots given the pods' verdicts draw those, and judge nothing again (what the report
passes, so that a plot drawn in a worker process does not judge 50,000 pods again);
cost_breakdown, whose parts are the registry's measures, reads none."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.colors import to_hex

from ccanalytics import plots
from ccanalytics.analysis import idle_pods, judge_pods
from ccanalytics.plots import COLORS

INFER = "cl-infer-prod"  # ranks 4, 9 and 10 idle (busiest GPU 2, 3 and 2 %)


def _nothing_idle(pods: pd.DataFrame) -> pd.DataFrame:
    """The rules' verdicts with every pod called busy: a plot that judged again would
    still draw the sandbox's 6 idle pods."""
    return judge_pods(pods).assign(idle=False)


def _idle_width(ax: Axes) -> float:
    """The idle part of the bars (0 when nothing is idle: the part is not drawn)."""
    bars = [p for c in ax.containers if c.get_label() == "idle GPUs" for p in c.patches]
    return float(sum(p.get_width() for p in bars))


def test_the_scatter_draws_the_idle_pods_it_is_told_of(pods: pd.DataFrame, ax: Axes) -> None:
    plots.cost_vs_utilization(pods, verdicts=judge_pods(pods), ax=ax)
    assert len(ax.collections[1].get_offsets()) == len(idle_pods(pods)) == 6
    ax.clear()
    plots.cost_vs_utilization(pods, verdicts=_nothing_idle(pods), ax=ax)
    assert len(ax.collections) == 1  # the pods in use, no idle diamonds


def test_the_breakdown_reads_no_verdicts_and_says_so(pods: pd.DataFrame, ax: Axes) -> None:
    """Its parts are the registry's measures, judged by the engine: verdicts that call
    nothing idle change nothing, and the caller is told the argument is not read."""
    with pytest.warns(DeprecationWarning, match="no longer reads verdicts"):
        plots.cost_breakdown(pods, verdicts=_nothing_idle(pods), ax=ax)
    wasted = float(idle_pods(pods)["wasted_cost_per_hour"].sum())
    assert _idle_width(ax) == pytest.approx(wasted) and wasted > 0


def test_the_rank_plot_draws_idle_only_the_ranks_it_is_told_of(
    pods: pd.DataFrame, ax: Axes
) -> None:
    cluster = pods[pods["cluster_id"] == INFER]
    verdicts = judge_pods(pods)
    verdicts.loc[cluster.index[cluster["rank"] != 4], "idle"] = False  # rank 4 only
    plots.utilization_by_rank(pods, cluster_id=INFER, verdicts=verdicts, ax=ax)
    bars = next(c for c in ax.containers if c.get_label() == "_gpu bars").patches
    idle = [i for i, b in enumerate(bars) if to_hex(b.get_facecolor()) == COLORS["idle"].lower()]
    assert idle == [4]
    assert ax.get_title().endswith("12 ranks, 1 idle")


def test_verdicts_may_be_of_a_larger_frame_but_must_cover_every_pod(pods: pd.DataFrame) -> None:
    cluster = pods[pods["cluster_id"] == INFER]
    plots.cost_vs_utilization(cluster, verdicts=judge_pods(pods))  # sliced by index
    with pytest.raises(ValueError, match="a row for every pod"):
        plots.cost_vs_utilization(pods, verdicts=judge_pods(cluster))
    twice = pd.concat([judge_pods(pods), judge_pods(pods)])  # two rows a pod
    with pytest.raises(ValueError, match="a row for every pod"):
        plots.cost_vs_utilization(pods, verdicts=twice)
    with pytest.raises(ValueError, match="missing columns"):
        plots.cost_vs_utilization(pods, verdicts=judge_pods(pods).drop(columns="judged"))


def test_the_verdicts_change_nothing_when_they_are_the_rules(pods: pd.DataFrame, ax: Axes) -> None:
    plots.cost_vs_utilization(pods, ax=ax)
    alone = [c.get_offsets().tolist() for c in ax.collections]
    ax.clear()
    plots.cost_vs_utilization(pods, verdicts=judge_pods(pods), ax=ax)
    given = [c.get_offsets().tolist() for c in ax.collections]
    assert given == alone and len(given) == 2  # pods in use and idle ones

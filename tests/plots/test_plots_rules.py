"""The plots judge idle pods by the one rule (``ccanalytics.measures.rules``), as the tables do.

A pod whose ``status`` is missing is counted but never judged (the rules' module
docstring), and a pod without ``gpu_util_max`` is unknown, never idle. Every plot that
marks idle pods must agree with :func:`ccanalytics.analysis.idle_pods` on them, so the
chart, the report's tables and ``History`` show the same idle spend.
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.colors import to_hex

from ccanalytics import plots
from ccanalytics.analysis import idle_pods
from ccanalytics.frames import pods_frame
from ccanalytics.plots import COLORS
from ccanalytics.sandbox import SandboxApp

INFER = "cl-infer-prod"  # ranks 4, 9 and 10 idle (busiest GPU 2, 3 and 2 %)


@pytest.fixture(scope="module")
def pods() -> pd.DataFrame:
    """The sandbox fleet, with two of cl-infer-prod's idle pods no longer judgeable:
    rank 4's status is missing, rank 9 reports its mean GPU utilization but no max."""
    raw: dict[str, list[dict[str, Any]]] = SandboxApp().data.clusters
    frame = pd.concat([pods_frame(p, cluster_id=c) for c, p in raw.items()], ignore_index=True)
    infer = frame["cluster_id"].eq(INFER)
    frame.loc[infer & frame["rank"].eq(4), "status"] = pd.NA
    frame.loc[infer & frame["rank"].eq(9), "gpu_util_max"] = pd.NA
    return frame


@pytest.fixture
def ax() -> Axes:
    _, axes = plt.subplots()
    return axes


def test_the_rule_itself_leaves_ranks_4_and_9_out(pods: pd.DataFrame) -> None:
    idle = idle_pods(pods)
    assert sorted(idle.loc[idle["cluster_id"].eq(INFER), "rank"].tolist()) == [10]


def test_the_rank_plot_marks_only_the_pods_the_rule_calls_idle(
    pods: pd.DataFrame, ax: Axes
) -> None:
    plots.utilization_by_rank(pods, cluster_id=INFER, ax=ax)
    bars = next(c for c in ax.containers if c.get_label() == "_gpu bars").patches
    idle = [i for i, b in enumerate(bars) if to_hex(b.get_facecolor()) == COLORS["idle"].lower()]
    assert idle == [10]
    assert ax.get_title().endswith("1 idle")


def test_the_scatter_marks_only_the_pods_the_rule_calls_idle(pods: pd.DataFrame, ax: Axes) -> None:
    plots.cost_vs_utilization(pods, ax=ax)
    _, idle = ax.collections
    expected = idle_pods(pods)
    assert len(idle.get_offsets()) == len(expected)
    assert sorted(idle.get_offsets()[:, 1]) == pytest.approx(sorted(expected["cost"].astype(float)))


def test_the_breakdown_counts_as_idle_only_what_the_rule_calls_idle(
    pods: pd.DataFrame, ax: Axes
) -> None:
    plots.cost_breakdown(pods, by="cluster", ax=ax)
    idle = next(c for c in ax.containers if c.get_label() == "idle GPUs")
    width = sum(p.get_width() for p in idle.patches)
    assert width == pytest.approx(float(idle_pods(pods)["wasted_cost_per_hour"].sum()))

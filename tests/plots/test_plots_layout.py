"""Idle ranks, unexplained heatmap cells, rank axes, and plots on a small (4 x 3 in) axes.

Drawn, rendered, then inspected: colours and legend entries by what they mean, and
bounding boxes of legends, titles and labels against the axes and the figure.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from ccanalytics import plots
from ccanalytics.frames import pods_frame
from ccanalytics.plots import COLORS
from ccanalytics.sandbox import make_cluster_pods

INFER = "cl-infer-prod"  # ranks 4, 9 and 10 idle (busiest GPU 2, 3 and 2 %)


def gpu_bars(ax: Axes) -> list[Any]:
    container = next(c for c in ax.containers if c.get_label() == "_gpu bars")
    assert isinstance(container, BarContainer)
    return list(container.patches)


def legend_labels(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None
    return [t.get_text() for t in legend.get_texts()]


# ---------------------------------------------------------------------------------
# Idle ranks


def test_idle_ranks_have_their_own_colour_distinct_from_stragglers() -> None:
    assert COLORS["idle"].lower() != COLORS["straggler"].lower()
    assert COLORS["idle"].lower() not in {COLORS[k].lower() for k in ("gpu", "cpu", "memory")}


def test_idle_ranks_are_drawn_in_the_idle_colour_with_a_legend_entry(
    pods: pd.DataFrame, ax: Axes
) -> None:
    plots.utilization_by_rank(pods, cluster_id=INFER, ax=ax)
    colours = [to_hex(b.get_facecolor()) for b in gpu_bars(ax)]
    idle = [i for i, c in enumerate(colours) if c == COLORS["idle"].lower()]
    assert idle == [4, 9, 10]
    assert all(gpu_bars(ax)[i].get_hatch() == "xx" for i in idle)
    assert "idle (busiest GPU < 10%)" in legend_labels(ax)
    assert ax.get_title().endswith("12 ranks, 3 idle")


def test_idle_ranks_get_a_full_height_column_so_a_2_percent_bar_is_seen(
    pods: pd.DataFrame, ax: Axes
) -> None:
    plots.utilization_by_rank(pods, cluster_id=INFER, ax=ax)
    columns = next(c for c in ax.containers if c.get_label() == "_idle columns")
    assert [round(p.get_x() + p.get_width() / 2) for p in columns.patches] == [4, 9, 10]
    assert {p.get_height() for p in columns.patches} == {100.0}


def test_idle_threshold_moves_the_idle_ranks(pods: pd.DataFrame, ax: Axes) -> None:
    plots.utilization_by_rank(pods, cluster_id=INFER, idle_threshold=2.5, ax=ax)
    colours = [to_hex(b.get_facecolor()) for b in gpu_bars(ax)]
    assert [i for i, c in enumerate(colours) if c == COLORS["idle"].lower()] == [4, 10]
    assert "idle (busiest GPU < 2.5%)" in legend_labels(ax)


def test_an_idle_straggler_is_drawn_as_idle(pods: pd.DataFrame, ax: Axes) -> None:
    plots.utilization_by_rank(pods, cluster_id=INFER, stragglers=[4, 5], ax=ax)
    colours = [to_hex(b.get_facecolor()) for b in gpu_bars(ax)]
    assert colours[4] == COLORS["idle"].lower() and colours[5] == COLORS["straggler"].lower()
    assert "1 straggling" in ax.get_title() and "3 idle" in ax.get_title()


def test_a_cluster_without_idle_ranks_has_no_idle_entry(pods: pd.DataFrame, ax: Axes) -> None:
    plots.utilization_by_rank(pods, cluster_id="cl-llama70b-train", ax=ax)
    assert not any(label.startswith("idle") for label in legend_labels(ax))


# ---------------------------------------------------------------------------------
# Heatmap cells without a value


def test_heatmap_explains_gpus_that_do_not_exist(gpus: pd.DataFrame, ax: Axes) -> None:
    plots.gpu_heatmap(gpus, cluster_id=INFER, ax=ax)  # ranks 6-11 have 1 GPU of 2
    assert legend_labels(ax) == ["no such GPU (the pod has fewer)"]
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 1 and hatched[0].get_zorder() < ax.images[0].get_zorder()


def test_heatmap_greys_and_names_na_rows_of_gpus_that_do_not_report(
    gpus: pd.DataFrame, ax: Axes
) -> None:
    """The frames' newer form: one row per paid GPU, `<NA>` util, and a status column."""
    cluster = gpus[gpus["cluster_id"] == "cl-finetune-7b"].copy()
    cluster["status"] = pd.array(["RUNNING"] * len(cluster), dtype="string")
    starting = cluster[cluster["rank"] == 3].assign(
        rank=pd.array([7] * 8, dtype="Int64"),
        util=pd.array([pd.NA] * 8, dtype="Float64"),
        status=pd.array(["STARTING"] * 8, dtype="string"),
    )
    plots.gpu_heatmap(pd.concat([cluster, starting], ignore_index=True), ax=ax)
    overlay = ax.images[1].get_array()
    assert overlay.shape == (5, 8)
    assert (~np.ma.getmaskarray(overlay)).sum() == 8 and not np.ma.getmaskarray(overlay)[4].any()
    assert legend_labels(ax) == ["no metrics (starting)"]
    ax.figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert labels == ["0", "1", "2", "3", "7"]  # only ranks that exist; 4-6 have no row
    assert ax.get_title().endswith("5 ranks x 8 GPUs")


def test_heatmap_with_every_gpu_reporting_has_no_legend(gpus: pd.DataFrame, ax: Axes) -> None:
    plots.gpu_heatmap(gpus, cluster_id="cl-llama70b-train", ax=ax)
    assert ax.get_legend() is None


# ---------------------------------------------------------------------------------
# A small axes: 4 x 3 in, as a notebook cell or a report thumbnail


def small_axes(width: float = 4, height: float = 3) -> Axes:
    """An axes on a figure with an Agg canvas (the base canvas does not render)."""
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure.add_subplot()


DRAW: dict[str, Callable[[pd.DataFrame, pd.DataFrame, Axes], Axes]] = {
    "rank": lambda p, g, ax: plots.utilization_by_rank(p, cluster_id=INFER, ax=ax),
    "rank_straggler": lambda p, g, ax: plots.utilization_by_rank(
        p, cluster_id="cl-llama70b-train", ax=ax
    ),
    "heatmap": lambda p, g, ax: plots.gpu_heatmap(g, cluster_id=INFER, ax=ax),
    "scatter": lambda p, g, ax: plots.cost_vs_utilization(p, ax=ax),
    "breakdown": lambda p, g, ax: plots.cost_breakdown(p, by="cluster", ax=ax),
}


def inside(inner: Bbox, outer: Bbox, slack: float = 1.0) -> bool:
    return (
        inner.x0 >= outer.x0 - slack
        and inner.y0 >= outer.y0 - slack
        and inner.x1 <= outer.x1 + slack
        and inner.y1 <= outer.y1 + slack
    )


@pytest.mark.parametrize("name", DRAW)
def test_on_a_small_axes_the_legend_is_off_the_data_and_inside_the_figure(
    name: str, pods: pd.DataFrame, gpus: pd.DataFrame
) -> None:
    ax = DRAW[name](pods, gpus, small_axes())
    figure = ax.figure
    assert isinstance(figure, Figure)
    figure.canvas.draw()
    legend = ax.get_legend()
    assert legend is not None
    box = legend.get_window_extent()
    assert not box.overlaps(ax.get_window_extent())  # the data area
    assert inside(box, figure.bbox)
    assert not box.overlaps(ax.xaxis.label.get_window_extent())


@pytest.mark.parametrize("name", DRAW)
def test_on_a_small_axes_the_title_and_labels_are_not_cut_off(
    name: str, pods: pd.DataFrame, gpus: pd.DataFrame
) -> None:
    ax = DRAW[name](pods, gpus, small_axes())
    figure = ax.figure
    assert isinstance(figure, Figure)
    figure.canvas.draw()
    for text in (t for t in (ax.title, ax.xaxis.label, ax.yaxis.label) if t.get_text()):
        assert inside(text.get_window_extent(), figure.bbox), text.get_text()
    ticks = [t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()]
    assert not any(a.overlaps(b) for a, b in itertools.pairwise(ticks))


def test_a_long_cluster_id_title_is_wrapped_not_cut(pods: pd.DataFrame) -> None:
    long_id = "cl-" + "very-long-cluster-name-" * 3 + "x"
    frame = pods[pods["cluster_id"] == INFER].assign(
        cluster_id=pd.array([long_id] * 12, dtype="string")
    )
    ax = plots.utilization_by_rank(frame, ax=small_axes())
    figure = ax.figure
    assert isinstance(figure, Figure)
    figure.canvas.draw()
    assert inside(ax.title.get_window_extent(), figure.bbox)
    assert ax.get_title().replace("\n", "").startswith(long_id)


def test_32_ranks_on_a_small_axes_label_fewer_ranks_than_on_a_wide_one(
    pods: pd.DataFrame,
) -> None:
    def labelled(width: float) -> int:
        ax = plots.utilization_by_rank(pods, cluster_id="cl-llama70b-train", ax=small_axes(width))
        ax.figure.canvas.draw()
        return sum(1 for t in ax.get_xticklabels() if t.get_text())

    assert labelled(4) < labelled(12) <= 20


def test_250_ranks_label_only_existing_ranks() -> None:
    frame = pods_frame(make_cluster_pods("cl-big", 250))
    frame = frame[~frame["rank"].isin([5, 6, 7])]
    ax = plots.utilization_by_rank(frame, ax=small_axes(10, 4))
    ax.figure.canvas.draw()
    labels = [int(t.get_text()) for t in ax.get_xticklabels() if t.get_text()]
    assert set(labels) <= set(range(250)) - {5, 6, 7}
    assert ax.get_xlim()[1] < 247  # 247 slots, not 250
    assert "247 ranks" in ax.get_title()


@pytest.fixture
def ax() -> Axes:
    return small_axes(6.4, 4.8)

"""Plots: draw on sandbox data, then inspect what was drawn (seaborn's way of testing)."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer

from ccanalytics import plots
from ccanalytics.analysis import idle_pods
from ccanalytics.frames import gpus_frame, pods_frame
from ccanalytics.plots import (
    COLORS,
    NoDataError,
    cost_breakdown,
    cost_vs_utilization,
    gpu_heatmap,
    utilization_by_rank,
)
from ccanalytics.sandbox import make_cluster_pods

TRAIN = "cl-llama70b-train"


@pytest.fixture
def ax() -> Axes:
    _, axes = plt.subplots()
    return axes


def bars(ax: Axes) -> list[Any]:
    """The patches of the first bar container (the GPU bars), in rank order."""
    container = next(c for c in ax.containers if isinstance(c, BarContainer))
    return list(container.patches)


def line(ax: Axes, label: str) -> Any:
    return next(ln for ln in ax.get_lines() if ln.get_label() == label)


def visible_xtick_labels(ax: Axes) -> list[str]:
    ax.figure.canvas.draw()
    low, high = ax.get_xlim()
    return [
        t.get_text()
        for t, x in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True)
        if low <= x <= high and t.get_text()
    ]


# ---------------------------------------------------------------------------------
# utilization_by_rank


def test_one_bar_per_rank_with_height_equal_to_gpu_mean(pods: pd.DataFrame, ax: Axes) -> None:
    utilization_by_rank(pods, cluster_id=TRAIN, ax=ax)
    cluster = pods[pods["cluster_id"] == TRAIN].sort_values("rank")
    drawn = bars(ax)
    assert len(drawn) == 32
    assert [round(b.get_x() + b.get_width() / 2) for b in drawn] == list(range(32))
    np.testing.assert_allclose(
        [b.get_height() for b in drawn], cluster["gpu_util_mean"].astype(float)
    )


def test_straggler_bar_has_its_own_colour_and_an_annotation(pods: pd.DataFrame, ax: Axes) -> None:
    utilization_by_rank(pods, cluster_id=TRAIN, ax=ax)
    colours = [to_hex(b.get_facecolor()) for b in bars(ax)]
    assert colours[13] == COLORS["straggler"].lower()
    assert set(colours[:13] + colours[14:]) == {COLORS["gpu"].lower()}
    notes = [t.get_text() for t in ax.texts]
    assert any("rank 13" in n and "46.9%" in n and "93.2%" in n for n in notes)


def test_rank_plot_labels_and_percent_axis(pods: pd.DataFrame, ax: Axes) -> None:
    utilization_by_rank(pods, cluster_id=TRAIN, ax=ax)
    assert ax.get_xlabel() == "rank"
    assert ax.get_ylabel() == "utilization (%)"
    assert TRAIN in ax.get_title() and "1 straggling" in ax.get_title()
    assert ax.get_ylim() == (0, 100)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"GPU mean", "GPU min–max", "CPU", "memory", "straggler"} <= set(legend)


def test_cpu_and_memory_lines_follow_the_frame(pods: pd.DataFrame, ax: Axes) -> None:
    utilization_by_rank(pods, cluster_id=TRAIN, ax=ax)
    cluster = pods[pods["cluster_id"] == TRAIN].sort_values("rank")
    np.testing.assert_allclose(line(ax, "CPU").get_ydata(), cluster["cpu_util"].astype(float))
    np.testing.assert_allclose(line(ax, "memory").get_ydata(), cluster["memory_util"].astype(float))


def test_min_max_range_spans_the_gpus(pods: pd.DataFrame, ax: Axes) -> None:
    utilization_by_rank(pods, cluster_id=TRAIN, ax=ax)
    segments = ax.collections[0].get_segments()
    cluster = pods[pods["cluster_id"] == TRAIN].sort_values("rank")
    assert len(segments) == 32
    np.testing.assert_allclose([s[0][1] for s in segments], cluster["gpu_util_min"].astype(float))
    np.testing.assert_allclose([s[1][1] for s in segments], cluster["gpu_util_max"].astype(float))


def test_ranks_without_metrics_are_marked_not_drawn_as_zero(pods: pd.DataFrame, ax: Axes) -> None:
    utilization_by_rank(pods, cluster_id="cl-bringup", ax=ax)
    assert len(bars(ax)) == 2  # ranks 0 and 1 run; 2 starting, 5 exited; pending have no rank
    # The axis has one slot per existing rank (0, 1, 2, 5): the silent ones are slots 2, 3.
    assert list(line(ax, "no metrics").get_xdata()) == [2, 3]
    assert visible_xtick_labels(ax) == ["0", "1", "2", "5"]
    assert "\n4 ranks" in ax.get_title()


def test_stragglers_can_be_given_as_ranks_or_turned_off(pods: pd.DataFrame) -> None:
    _, (left, right) = plt.subplots(1, 2)
    utilization_by_rank(pods, cluster_id=TRAIN, stragglers=[3], ax=left)
    utilization_by_rank(pods, cluster_id=TRAIN, stragglers=[], ax=right)
    marked = [
        i for i, b in enumerate(bars(left)) if to_hex(b.get_facecolor()) != COLORS["gpu"].lower()
    ]
    assert marked == [3]
    assert {to_hex(b.get_facecolor()) for b in bars(right)} == {COLORS["gpu"].lower()}
    assert len(right.texts) == 0


def test_several_clusters_need_a_cluster_id(pods: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="cluster_id="):
        utilization_by_rank(pods)


def test_a_single_cluster_frame_needs_no_cluster_id(pods: pd.DataFrame, ax: Axes) -> None:
    utilization_by_rank(pods[pods["cluster_id"] == "cl-finetune-7b"], ax=ax)
    assert len(bars(ax)) == 4


def test_unknown_cluster_id_is_a_value_error(pods: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="cl-nope"):
        utilization_by_rank(pods, cluster_id="cl-nope")


def test_a_cpu_only_cluster_has_nothing_to_draw(pods: pd.DataFrame) -> None:
    with pytest.raises(NoDataError, match="cl-etl-cpu"):
        utilization_by_rank(pods, cluster_id="cl-etl-cpu")


@pytest.mark.parametrize(
    ("plot", "frame"),
    [
        (utilization_by_rank, "pods"),
        (gpu_heatmap, "gpus"),
        (cost_vs_utilization, "pods"),
        (cost_breakdown, "pods"),
    ],
)
def test_empty_frames_raise_no_data_error_without_creating_a_figure(plot: Any, frame: str) -> None:
    empty = pods_frame([]) if frame == "pods" else gpus_frame([])
    with pytest.raises(NoDataError):
        plot(empty)
    assert plt.get_fignums() == []
    assert issubclass(NoDataError, ValueError)


def test_a_frame_without_the_columns_is_a_clear_value_error() -> None:
    with pytest.raises(ValueError, match="missing columns"):
        utilization_by_rank(pd.DataFrame({"rank": [0, 1]}))


def test_250_ranks_keep_tick_labels_few_and_apart(ax: Axes) -> None:
    big = pods_frame(make_cluster_pods("cl-big", 250, straggler_ranks=(17, 200)))
    utilization_by_rank(big, ax=ax)
    labels = visible_xtick_labels(ax)
    assert 5 <= len(labels) <= 25
    boxes = [
        t.get_window_extent()
        for t in ax.get_xticklabels()
        if t.get_text() and ax.get_xlim()[0] <= t.get_position()[0] <= ax.get_xlim()[1]
    ]
    assert not any(a.overlaps(b) for a, b in itertools.pairwise(boxes))
    assert len(bars(ax)) == 250
    assert line(ax, "CPU").get_markersize() < 2  # thinned out for many ranks
    assert sum("rank 17" in t.get_text() or "rank 200" in t.get_text() for t in ax.texts) == 2


def test_2_ranks_get_a_tick_each(pods: pd.DataFrame, ax: Axes) -> None:
    two = pods[(pods["cluster_id"] == TRAIN) & pods["rank"].isin([0, 1])]
    utilization_by_rank(two, ax=ax)
    assert visible_xtick_labels(ax) == ["0", "1"]


# ---------------------------------------------------------------------------------
# gpu_heatmap


def test_heatmap_is_ranks_by_gpus_with_the_frame_values(gpus: pd.DataFrame, ax: Axes) -> None:
    gpu_heatmap(gpus, cluster_id=TRAIN, ax=ax)
    data = ax.images[0].get_array()
    assert data.shape == (32, 8)
    cluster = gpus[gpus["cluster_id"] == TRAIN]
    expected = cluster.pivot(index="rank", columns="gpu_index", values="util").astype(float)
    np.testing.assert_allclose(np.ma.filled(data, np.nan), expected.to_numpy())
    assert data[13].mean() < 60 < np.delete(data, 13, axis=0).mean()


def test_heatmap_colorbar_in_percent_and_colour_blind_safe(gpus: pd.DataFrame, ax: Axes) -> None:
    gpu_heatmap(gpus, cluster_id=TRAIN, ax=ax)
    image = ax.images[0]
    assert image.get_cmap().name.startswith("viridis")
    assert image.get_clim() == (0, 100)
    colorbar = image.colorbar
    assert colorbar is not None and colorbar.ax.get_ylabel() == "GPU utilization (%)"
    assert ax.get_xlabel() == "GPU index" and ax.get_ylabel() == "rank"
    assert TRAIN in ax.get_title()


def test_heatmap_leaves_gpus_a_pod_lacks_blank(gpus: pd.DataFrame, ax: Axes) -> None:
    gpu_heatmap(gpus, cluster_id="cl-infer-prod", ax=ax)
    data = ax.images[0].get_array()
    assert data.shape == (12, 2)
    assert np.ma.getmaskarray(data)[6:, 1].all()  # ranks 6-11 are 1-GPU L40S pods
    assert len(ax.images) == 1  # nothing listed-but-silent: no grey overlay


def test_heatmap_greys_gpus_listed_without_a_value(
    raw: dict[str, list[dict[str, Any]]], ax: Axes
) -> None:
    listing = copy.deepcopy(raw["cl-finetune-7b"])
    listing[2]["runtime"]["gpus"][5]["util"] = None
    gpu_heatmap(gpus_frame(listing), ax=ax)
    overlay = ax.images[1].get_array()
    assert (~np.ma.getmaskarray(overlay)).sum() == 1 and not np.ma.getmaskarray(overlay)[2, 5]


def test_heatmap_labels_at_most_20_ranks(ax: Axes) -> None:
    big = gpus_frame(make_cluster_pods("cl-big", 250))
    gpu_heatmap(big, ax=ax)
    assert ax.images[0].get_array().shape == (250, 8)
    assert len(ax.get_yticks()) <= 20


# ---------------------------------------------------------------------------------
# cost_vs_utilization


def test_scatter_has_one_point_per_reporting_gpu_pod(pods: pd.DataFrame, ax: Axes) -> None:
    cost_vs_utilization(pods, ax=ax)
    reporting = pods[pods["gpu_count"].fillna(0).gt(0) & pods["gpu_util_mean"].notna()]
    assert sum(len(c.get_offsets()) for c in ax.collections) == len(reporting) == 60


def test_idle_pods_are_highlighted_and_their_spend_annotated(pods: pd.DataFrame, ax: Axes) -> None:
    cost_vs_utilization(pods, ax=ax)
    busy, idle = ax.collections
    idle_frame = idle_pods(pods)
    assert len(idle.get_offsets()) == len(idle_frame) == 6
    assert to_hex(idle.get_facecolor()[0]) == COLORS["idle"].lower()
    assert to_hex(busy.get_facecolor()[0]) != to_hex(idle.get_facecolor()[0])
    np.testing.assert_allclose(
        sorted(idle.get_offsets()[:, 1]), sorted(idle_frame["cost"].astype(float))
    )
    total = float(idle_frame["wasted_cost_per_hour"].sum())
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(f"{total:,.2f} USD/h" in t and "6 pods" in t for t in legend)
    assert len(ax.patches) >= 1  # the shaded idle band


def test_scatter_axes_and_labels(pods: pd.DataFrame, ax: Axes) -> None:
    cost_vs_utilization(pods, ax=ax)
    assert ax.get_xlim() == (0, 100)
    assert ax.get_xlabel() == "mean GPU utilization (%)"
    assert ax.get_ylabel() == "cost per hour (USD/h)"
    assert ax.get_yscale() == "log"  # costs span 0.49 to 23.92 USD/h


def test_scatter_linear_scale_on_request(pods: pd.DataFrame, ax: Axes) -> None:
    cost_vs_utilization(pods, logy=False, ax=ax)
    assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0


def test_scatter_threshold_moves_the_idle_set(pods: pd.DataFrame, ax: Axes) -> None:
    cost_vs_utilization(pods, idle_threshold=50, ax=ax)
    assert len(ax.collections[1].get_offsets()) == len(idle_pods(pods, idle_threshold=50))


# ---------------------------------------------------------------------------------
# cost_breakdown


@pytest.mark.parametrize("by", ["gpu_type", "cluster"])
def test_breakdown_widths_sum_to_the_total_cost(pods: pd.DataFrame, ax: Axes, by: str) -> None:
    cost_breakdown(pods, by=by, ax=ax)
    widths = [p.get_width() for c in ax.containers for p in c.patches]
    assert sum(widths) == pytest.approx(float(pods["cost"].sum()))
    assert ax.get_xlabel() == "cost per hour (USD/h)"


def test_breakdown_by_cluster_has_a_bar_per_cluster_most_expensive_first(
    pods: pd.DataFrame, ax: Axes
) -> None:
    cost_breakdown(pods, by="cluster", ax=ax)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    expected = pods.groupby("cluster_id")["cost"].sum().sort_values(ascending=False)
    assert labels == list(expected.index)
    assert ax.yaxis_inverted()  # first label on top


def test_breakdown_splits_idle_spend_honestly(pods: pd.DataFrame, ax: Axes) -> None:
    cost_breakdown(pods, by="gpu_type", ax=ax)
    by_label = {c.get_label(): c for c in ax.containers}
    assert set(by_label) == {"in use", "idle GPUs", "no metrics (pending, starting, exited)"}
    idle_width = sum(p.get_width() for p in by_label["idle GPUs"].patches)
    assert idle_width == pytest.approx(float(idle_pods(pods)["wasted_cost_per_hour"].sum()))
    silent = pods[pods["gpu_util_mean"].isna() & pods["cpu_util"].isna()]
    silent_width = sum(p.get_width() for p in by_label["no metrics (pending, starting, exited)"])
    assert silent_width == pytest.approx(float(silent["cost"].sum()))
    assert "CPU only" in [t.get_text() for t in ax.get_yticklabels()]


def test_breakdown_rejects_an_unknown_grouping(pods: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="by must be"):
        cost_breakdown(pods, by="data_center_id")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------
# seaborn's contract: ax in, ax out, no hidden global state


def _draw(name: str, pods: pd.DataFrame, gpus: pd.DataFrame, ax: Axes | None) -> Axes:
    if name == "utilization_by_rank":
        return utilization_by_rank(pods, cluster_id=TRAIN, ax=ax)
    if name == "gpu_heatmap":
        return gpu_heatmap(gpus, cluster_id=TRAIN, ax=ax)
    if name == "cost_vs_utilization":
        return cost_vs_utilization(pods, ax=ax)
    return cost_breakdown(pods, ax=ax)


PLOTS = ["utilization_by_rank", "gpu_heatmap", "cost_vs_utilization", "cost_breakdown"]


@pytest.mark.parametrize("name", PLOTS)
def test_the_given_axes_is_drawn_on_and_returned_without_a_new_figure(
    name: str, pods: pd.DataFrame, gpus: pd.DataFrame
) -> None:
    _, (_, target) = plt.subplots(1, 2)
    figures = plt.get_fignums()
    assert _draw(name, pods, gpus, target) is target
    assert plt.get_fignums() == figures
    assert target.has_data()


@pytest.mark.parametrize("name", PLOTS)
def test_without_ax_the_current_axes_is_used(
    name: str, pods: pd.DataFrame, gpus: pd.DataFrame
) -> None:
    current = plt.figure().gca()
    assert _draw(name, pods, gpus, None) is current


@pytest.mark.parametrize("name", PLOTS)
def test_rcparams_are_left_alone(name: str, pods: pd.DataFrame, gpus: pd.DataFrame) -> None:
    before = dict(plt.rcParams)
    _draw(name, pods, gpus, None)
    assert dict(plt.rcParams) == before


def test_plots_never_show(monkeypatch: pytest.MonkeyPatch, pods: pd.DataFrame) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("plt.show() called")

    monkeypatch.setattr(plt, "show", fail)
    cost_breakdown(pods)


@pytest.mark.parametrize("name", PLOTS)
def test_shared_parameter_docs_are_formatted_in(name: str) -> None:
    doc = getattr(plots, name).__doc__
    assert "{ax}" not in doc and "{returns}" not in doc
    assert "plt.gca()" in doc and "NoDataError" in doc


def test_draws_what_the_client_loads() -> None:
    """End to end: the frame from load_cluster_pods through the in-process sandbox."""
    from ccanalytics import Client, load_cluster_pods
    from ccanalytics.sandbox import FULL_ACCESS_KEY, IN_PROCESS_URL, SandboxTransport

    with Client(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=SandboxTransport()) as client:
        frame = load_cluster_pods(TRAIN, client=client, progress=False)
    ax = utilization_by_rank(frame)
    assert len(bars(ax)) == 32 and any("rank 13" in t.get_text() for t in ax.texts)

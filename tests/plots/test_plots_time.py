"""Plots of time, drawn from hand-made History frames and inspected artist by artist."""

from __future__ import annotations

import datetime as dt
import itertools

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.path import Path

from ccanalytics import plots
from ccanalytics.plots import (
    NoDataError,
    idle_cost_by_day,
    rank_time_heatmap,
    utilization_over_time,
)

T0 = pd.Timestamp("2026-03-01 00:00", tz="UTC")
HOURS = pd.date_range(T0, periods=6, freq="1h")


def util_by_cluster(rows: list[tuple[int, str, float | None]]) -> pd.DataFrame:
    """History.utilization(by="cluster") rows: (hour index, cluster, gpu_util_mean)."""
    return pd.DataFrame(
        {
            "time": pd.Series([HOURS[h] for h, _, _ in rows], dtype="datetime64[ns, UTC]"),
            "cluster_id": pd.array([c for _, c, _ in rows], dtype="string"),
            "gpu_util_mean": pd.array([u for _, _, u in rows], dtype="Float64"),
            "observed_hours": pd.array([1.0] * len(rows), dtype="Float64"),
        }
    )


def util_by_rank(rows: list[tuple[int, str, int, float | None]]) -> pd.DataFrame:
    """History.utilization(by="rank") rows: (hour index, cluster, rank, gpu_util_mean)."""
    return pd.DataFrame(
        {
            "time": pd.Series([HOURS[h] for h, *_ in rows], dtype="datetime64[ns, UTC]"),
            "cluster_id": pd.array([r[1] for r in rows], dtype="string"),
            "rank": pd.array([r[2] for r in rows], dtype="Int64"),
            "gpu_util_mean": pd.array([r[3] for r in rows], dtype="Float64"),
            "observed_hours": pd.array([1.0] * len(rows), dtype="Float64"),
        }
    )


def line(ax: Axes, label: str) -> matplotlib.lines.Line2D:
    return next(ln for ln in ax.get_lines() if ln.get_label() == label)


# ---------------------------------------------------------------------------------
# utilization_over_time


@pytest.fixture
def two_clusters() -> pd.DataFrame:
    """cl-a: <NA> at hour 2. cl-b: no rows at hours 2 and 3. Nobody at hour 4."""
    a = [(0, "cl-a", 50.0), (1, "cl-a", 60.0), (2, "cl-a", None), (3, "cl-a", 70.0)]
    b = [(0, "cl-b", 10.0), (1, "cl-b", 20.0)]
    return util_by_cluster([*a, *b, (5, "cl-a", 90.0), (5, "cl-b", 30.0)])


def test_one_line_per_cluster_with_nan_in_every_unobserved_bucket(
    two_clusters: pd.DataFrame, ax: Axes
) -> None:
    utilization_over_time(two_clusters, ax=ax)
    assert [ln.get_label() for ln in ax.get_lines()] == ["cl-a", "cl-b"]
    nan = np.nan
    np.testing.assert_array_equal(line(ax, "cl-a").get_ydata(), [50, 60, nan, 70, nan, 90])
    np.testing.assert_array_equal(line(ax, "cl-b").get_ydata(), [10, 20, nan, nan, nan, 30])
    expected = HOURS.tz_localize(None).to_numpy()
    np.testing.assert_array_equal(line(ax, "cl-a").get_xdata(), expected)


def test_gaps_are_not_interpolated_when_drawn(two_clusters: pd.DataFrame, ax: Axes) -> None:
    """The drawn path breaks at NaN: no segment joins hour 3 to hour 5 of cl-a."""
    utilization_over_time(two_clusters, ax=ax)
    ax.figure.canvas.draw()
    drawn = line(ax, "cl-a").get_path().cleaned(remove_nans=True)  # as the renderer cleans it
    codes = list(drawn.codes) if drawn.codes is not None else []
    assert codes.count(Path.MOVETO) == 3  # at hour 0, after the gap at 2, after the gap at 4
    assert codes.count(Path.LINETO) == 1  # hour 0 to 1 only: nothing bridges a gap


def test_cluster_ids_pick_and_order_the_lines(two_clusters: pd.DataFrame, ax: Axes) -> None:
    utilization_over_time(two_clusters, cluster_ids=["cl-b"], ax=ax)
    assert [ln.get_label() for ln in ax.get_lines()] == ["cl-b"]
    with pytest.raises(ValueError, match="cl-zz"):
        utilization_over_time(two_clusters, cluster_ids=["cl-zz"], ax=ax)


def test_over_time_axes_are_percent_and_utc(two_clusters: pd.DataFrame, ax: Axes) -> None:
    utilization_over_time(two_clusters, ax=ax)
    assert ax.get_ylim() == (0, 100)
    assert ax.get_ylabel() == "GPU utilization (%)"
    assert ax.get_xlabel() == "time (UTC)\n2026-03-01 00:00 to 05:00"
    legend = ax.get_legend()
    assert legend is not None and "not observed" in legend.get_title().get_text()


def test_a_fleet_gets_a_line_each_but_a_legend_of_14_entries(ax: Axes) -> None:
    frame = util_by_cluster([(h, f"cl-{c:03d}", 50.0) for c in range(40) for h in range(2)])
    utilization_over_time(frame, ax=ax)
    assert len(ax.get_lines()) == 40
    legend = ax.get_legend()
    assert legend is not None
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == [f"cl-{c:03d}" for c in range(13)] + ["and 27 more clusters"]


def test_a_frame_freq_attr_sets_the_bucket_width(ax: Axes) -> None:
    frame = util_by_cluster([(0, "cl-a", 50.0), (2, "cl-a", 70.0)])
    frame.attrs["freq"] = "1h"
    utilization_over_time(frame, ax=ax)
    np.testing.assert_array_equal(line(ax, "cl-a").get_ydata(), [50, np.nan, 70])


def test_nothing_observed_is_no_data(ax: Axes) -> None:
    with pytest.raises(NoDataError):
        utilization_over_time(util_by_cluster([]), ax=ax)
    with pytest.raises(NoDataError):
        utilization_over_time(util_by_cluster([(0, "cl-a", None)]), ax=ax)


# ---------------------------------------------------------------------------------
# rank_time_heatmap


@pytest.fixture
def ranks() -> pd.DataFrame:
    """cl-r, ranks 0, 1, 2, 5 over hours 0-3: rank 2 chronically slow (20 %), rank 1
    <NA> at hour 2, rank 5 absent at hour 1; another cluster alongside."""
    rows = []
    for hour in range(4):
        for rank in (0, 1, 2, 5):
            if (rank, hour) == (5, 1):
                continue
            util = None if (rank, hour) == (1, 2) else (20.0 if rank == 2 else 90.0 + hour)
            rows.append((hour, "cl-r", rank, util))
    rows.append((0, "cl-other", 0, 50.0))
    return util_by_rank(rows)


def test_heatmap_is_rank_by_time_with_unobserved_cells_masked(
    ranks: pd.DataFrame, ax: Axes
) -> None:
    rank_time_heatmap(ranks, cluster_id="cl-r", ax=ax)
    data = ax.images[0].get_array()
    assert data.shape == (4, 4)  # ranks 0, 1, 2, 5 x hours 0-3
    mask = np.ma.getmaskarray(data)
    assert {tuple(ix) for ix in np.argwhere(mask)} == {(1, 2), (3, 1)}
    np.testing.assert_array_equal(data[2], [20, 20, 20, 20])  # the dark row
    np.testing.assert_array_equal(data[0], [90, 91, 92, 93])


def test_heatmap_explains_unobserved_cells_and_labels_only_existing_ranks(
    ranks: pd.DataFrame, ax: Axes
) -> None:
    rank_time_heatmap(ranks, cluster_id="cl-r", ax=ax)
    legend = ax.get_legend()
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["not observed"]
    ax.figure.canvas.draw()
    assert [t.get_text() for t in ax.get_yticklabels() if t.get_text()] == ["0", "1", "2", "5"]
    assert ax.get_title().endswith("4 ranks x 4 buckets")
    assert ax.images[0].colorbar is not None


def test_heatmap_spans_the_buckets_in_utc_date_numbers(ranks: pd.DataFrame, ax: Axes) -> None:
    rank_time_heatmap(ranks, cluster_id="cl-r", ax=ax)
    left, right, _, _ = ax.images[0].get_extent()
    start = mdates.date2num(HOURS[0].tz_localize(None))
    assert left == pytest.approx(start)
    assert right == pytest.approx(start + 4 / 24)


def test_heatmap_of_several_clusters_needs_a_cluster_id(ranks: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="cluster_id="):
        rank_time_heatmap(ranks)


def test_heatmap_with_nothing_observed_is_no_data(ax: Axes) -> None:
    with pytest.raises(NoDataError):
        rank_time_heatmap(util_by_rank([(0, "cl-r", 0, None)]), ax=ax)


# ---------------------------------------------------------------------------------
# idle_cost_by_day


def costs_by_day(days: list[object]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "day": days,
            "observed_hours": pd.array([24.0, 22.0, 24.0], dtype="Float64"),
            "total_cost": pd.array([100.0, 200.0, 50.0], dtype="Float64"),
            "idle_gpu_hours": pd.array([4.0, 0.0, 2.0], dtype="Float64"),
            "idle_cost": pd.array([10.0, 0.0, 5.0], dtype="Float64"),
            "unused_cost": pd.array([30.0, 40.0, 4.0], dtype="Float64"),
            # The idle pods' unused share is in unused_cost, not here: 30 - 9.5, 40, 4 - 4.
            "busy_unused_cost": pd.array([20.5, 40.0, 0.0], dtype="Float64"),
            "unobserved_hours": pd.array([0.0, 2.0, 0.0], dtype="Float64"),
        }
    )


DAYS = pd.Series(pd.date_range("2026-03-01", periods=3, freq="D", tz="UTC"))


def heights(ax: Axes, label: str) -> list[float]:
    container = next(c for c in ax.containers if c.get_label() == label)
    return [p.get_height() for p in container.patches]


@pytest.mark.parametrize("days", [DAYS, [d.date() for d in DAYS]], ids=["utc-midnight", "date"])
def test_stacked_bars_are_idle_unused_and_the_rest_of_each_day(days: object, ax: Axes) -> None:
    idle_cost_by_day(costs_by_day(days), ax=ax)  # type: ignore[arg-type]
    assert heights(ax, "idle pods") == [10.0, 0.0, 5.0]
    # The registry's busy_unused_cost as given, not unused_cost - idle_cost (20, 40, 0).
    assert heights(ax, "unused on pods in use") == [20.5, 40.0, 0.0]
    assert heights(ax, "the rest (used, CPU, no metrics)") == [69.5, 160.0, 45.0]
    tops = [
        sum(parts)
        for parts in zip(*(heights(ax, c.get_label()) for c in ax.containers), strict=True)
    ]
    assert tops == [100.0, 200.0, 50.0]  # each bar is the day's total_cost


def test_bars_sit_on_their_utc_days(ax: Axes) -> None:
    idle_cost_by_day(costs_by_day(DAYS), ax=ax)  # type: ignore[arg-type]
    container = next(c for c in ax.containers if c.get_label() == "idle pods")
    centres = [p.get_x() + p.get_width() / 2 for p in container.patches]
    expected = [mdates.date2num(dt.datetime(2026, 3, d)) for d in (1, 2, 3)]
    assert centres == pytest.approx(expected)
    assert ax.get_ylabel() == "cost (USD)"
    assert ax.get_xlabel() == "day (UTC)\n2026-03-01 to 2026-03-03"
    ax.figure.canvas.draw()
    assert ax.get_xticks() == pytest.approx(expected)  # one tick per day, none between


def test_a_day_with_unobserved_hours_says_so(ax: Axes) -> None:
    idle_cost_by_day(costs_by_day(DAYS), ax=ax)  # type: ignore[arg-type]
    notes = [t.get_text() for t in ax.texts]
    assert notes == ["2 h\nunobserved"]


def test_no_cost_is_no_data(ax: Axes) -> None:
    empty = costs_by_day(DAYS).iloc[:0]  # type: ignore[arg-type]
    with pytest.raises(NoDataError):
        idle_cost_by_day(empty, ax=ax)


# ---------------------------------------------------------------------------------
# seaborn's contract, and API strings


DRAWERS = {
    "utilization_over_time": lambda ax: utilization_over_time(
        util_by_cluster([(0, "cl-a", 1.0), (1, "cl-a", 2.0)]), ax=ax
    ),
    "rank_time_heatmap": lambda ax: rank_time_heatmap(
        util_by_rank([(0, "cl-a", 0, 1.0), (1, "cl-a", 0, 2.0)]), ax=ax
    ),
    "idle_cost_by_day": lambda ax: idle_cost_by_day(costs_by_day(DAYS), ax=ax),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", DRAWERS)
def test_time_plots_draw_on_the_current_axes_and_return_it(name: str) -> None:
    current = plt.figure().gca()
    assert DRAWERS[name](None) is current
    assert plt.get_fignums() == [current.figure.number]


@pytest.mark.parametrize("name", DRAWERS)
def test_time_plots_leave_rcparams_alone_and_never_show(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("plt.show() called")

    monkeypatch.setattr(plt, "show", fail)
    before = dict(plt.rcParams)
    DRAWERS[name](None)
    assert dict(plt.rcParams) == before


@pytest.mark.parametrize("name", DRAWERS)
def test_time_plots_are_exported_and_documented(name: str) -> None:
    assert name in plots.__all__
    doc = getattr(plots, name).__doc__
    assert "{ax}" not in doc and "plt.gca()" in doc and "NoDataError" in doc


def test_a_cluster_id_with_dollars_is_drawn_literally(ax: Axes) -> None:
    frame = util_by_cluster([(0, "cl-$a$", 1.0), (1, "cl-$a$", 2.0)])
    utilization_over_time(frame, ax=ax)
    ax.figure.canvas.draw()  # mathtext would fail or draw "cl-a" in italics here
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["cl-\\$a\\$"]


# ---------------------------------------------------------------------------------
# A small axes (4 x 3 in): legends off the data, titles and date labels not cut or crowded


def a_day() -> dict[str, pd.DataFrame]:
    hours = pd.date_range(T0, periods=24, freq="1h")
    cluster_rows = [
        (h, c, 50.0 + i % 7)
        for i, h in enumerate(hours)
        for c in ("cl-llama70b-train", "cl-infer-prod")
        if not (c == "cl-infer-prod" and 8 <= i < 11)
    ]
    rank_rows = [(h, r, 40.0 if r == 13 else 90.0) for h in hours for r in range(32)]
    return {
        "over_time": pd.DataFrame(
            {
                "time": pd.Series([r[0] for r in cluster_rows], dtype="datetime64[ns, UTC]"),
                "cluster_id": pd.array([r[1] for r in cluster_rows], dtype="string"),
                "gpu_util_mean": pd.array([r[2] for r in cluster_rows], dtype="Float64"),
            }
        ),
        "ranks": pd.DataFrame(
            {
                "time": pd.Series([r[0] for r in rank_rows], dtype="datetime64[ns, UTC]"),
                "cluster_id": pd.array(["cl-llama70b-train"] * len(rank_rows), dtype="string"),
                "rank": pd.array([r[1] for r in rank_rows], dtype="Int64"),
                "gpu_util_mean": pd.array([r[2] for r in rank_rows], dtype="Float64"),
            }
        ),
    }


SMALL = {
    "utilization_over_time": lambda ax: utilization_over_time(a_day()["over_time"], ax=ax),
    "rank_time_heatmap": lambda ax: rank_time_heatmap(
        a_day()["ranks"].assign(gpu_util_mean=lambda f: f["gpu_util_mean"].mask(f["rank"] > 28)),
        ax=ax,
    ),
    "idle_cost_by_day": lambda ax: idle_cost_by_day(costs_by_day(DAYS), ax=ax),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", SMALL)
def test_on_a_small_axes_nothing_covers_the_data_or_falls_off(name: str) -> None:
    figure = Figure(figsize=(4, 3), layout="constrained")
    FigureCanvasAgg(figure)
    ax = SMALL[name](figure.add_subplot())
    figure.canvas.draw()
    legend = ax.get_legend()
    assert legend is not None
    box = legend.get_window_extent()
    assert not box.overlaps(ax.get_window_extent())
    assert not box.overlaps(ax.xaxis.label.get_window_extent())
    page = figure.bbox
    for text in (legend, ax.title, ax.xaxis.label, ax.yaxis.label):
        extent = text.get_window_extent()
        assert page.x0 - 1 <= extent.x0 and extent.x1 <= page.x1 + 1, text
        assert page.y0 - 1 <= extent.y0 and extent.y1 <= page.y1 + 1, text
    ticks = [t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()]
    assert len(ticks) >= 2
    assert not any(a.overlaps(b) for a, b in itertools.pairwise(ticks))

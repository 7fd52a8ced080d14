"""The plots read as meant: markers, legends, colours and date ticks, drawn and inspected."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import to_hex

from ccanalytics.frames import pods_frame
from ccanalytics.plots import idle_cost_by_day, utilization_by_rank, utilization_over_time


def test_a_cpu_only_rank_is_not_marked_no_metrics(
    raw: dict[str, list[dict[str, Any]]], ax: Axes
) -> None:
    # cl-slurm-hpc's rank 0 is a CPU-only controller: CPU and memory reported, no GPU.
    pods = pods_frame(raw["cl-slurm-hpc"], cluster_id="cl-slurm-hpc")
    utilization_by_rank(pods, ax=ax)
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert "no metrics" not in labels
    cpu = next(ln for ln in ax.get_lines() if str(ln.get_label()).startswith("CPU"))
    assert 0 in list(cpu.get_xdata())  # its CPU marker is drawn


def test_a_rank_with_no_metrics_at_all_is_still_marked(
    raw: dict[str, list[dict[str, Any]]], ax: Axes
) -> None:
    pods = pods_frame(raw["cl-bringup"], cluster_id="cl-bringup")
    utilization_by_rank(pods, ax=ax)
    assert any(ln.get_label() == "no metrics" for ln in ax.get_lines())


def _util(clusters: dict[str, list[float | None]]) -> pd.DataFrame:
    times = pd.date_range("2026-03-01", periods=3, freq="1h", tz="UTC")
    rows = [(t, c, v) for c, values in clusters.items() for t, v in zip(times, values, strict=True)]
    return pd.DataFrame(
        {
            "time": pd.Series([r[0] for r in rows], dtype="datetime64[ns, UTC]"),
            "cluster_id": pd.array([r[1] for r in rows], dtype="string"),
            "gpu_util_mean": pd.array([r[2] for r in rows], dtype="Float64"),
        }
    )


def test_the_legend_lists_only_clusters_with_a_line(ax: Axes) -> None:
    utilization_over_time(_util({"cl-a": [50.0, 60.0, 70.0], "cl-cpu": [None] * 3}), ax=ax)
    legend = ax.get_legend() or next(
        a
        for a in ax.figure.legends  # a legend beside the axes may sit on the figure
    )
    names = [t.get_text() for t in legend.get_texts()]
    assert names == ["cl-a"]


def test_the_day_fleets_clusters_get_distinct_colours(ax: Axes) -> None:
    ids = [f"cl-{i}" for i in range(9)]  # the simulated day has 9 clusters with GPUs
    utilization_over_time(_util({c: [50.0, 60.0, 70.0] for c in ids}), ax=ax)
    colours = [to_hex(ln.get_color()) for ln in ax.get_lines()]
    assert len(set(colours)) == len(ids), colours


def test_a_one_day_spend_chart_reads_the_date(ax: Axes) -> None:
    costs = pd.DataFrame(
        {
            "day": pd.Series([pd.Timestamp("2026-11-02", tz="UTC")]),
            "total_cost": pd.array([100.0], dtype="Float64"),
            "idle_cost": pd.array([10.0], dtype="Float64"),
            "busy_unused_cost": pd.array([21.0], dtype="Float64"),
        }
    )
    idle_cost_by_day(costs, ax=ax)
    ax.figure.canvas.draw()
    low, high = ax.get_xlim()
    ticks = [
        t.get_text()
        for t, x in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True)
        if low <= x <= high and t.get_text()
    ]
    assert ticks, "no tick label"
    assert all("00:00" not in t for t in ticks), ticks
    assert any("02" in t for t in ticks), ticks

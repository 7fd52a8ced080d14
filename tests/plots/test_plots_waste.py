"""waste_breakdown: only what is wasted, ranked by it, each bar's share of its spend."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.axes import Axes

from ccanalytics.plots import NoDataError, waste_breakdown


def costs() -> pd.DataFrame:
    """History.idle_cost(by="cluster")-shaped: a big cluster wasting 5 %, a small one half."""
    return pd.DataFrame(
        {
            "cluster_id": pd.array(["cl-big", "cl-small", "cl-clean"], dtype="string"),
            "total_cost": pd.array([1000.0, 40.0, 30.0], dtype="Float64"),
            "idle_cost": pd.array([0.0, 12.0, 0.0], dtype="Float64"),
            "unused_cost": pd.array([50.0, 20.0, 0.0], dtype="Float64"),
        }
    )


def test_bars_are_ranked_by_waste_and_split_idle_then_unused(ax: Axes) -> None:
    waste_breakdown(costs(), ax=ax)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["cl-big", "cl-small"]  # no cl-clean
    idle, unused = (c for c in ax.containers)
    assert [p.get_width() for p in idle.patches] == [0.0, 12.0]
    # Unused capacity includes the idle pods: only the rest follows them.
    assert [p.get_width() for p in unused.patches] == [50.0, 8.0]
    notes = [t.get_text() for t in ax.texts]
    assert "50.00 USD (5% of its spend)" in notes
    assert "20.00 USD (50% of its spend)" in notes


def test_columns_of_a_live_summary_can_be_named(ax: Axes) -> None:
    frame = costs().rename(
        columns={
            "total_cost": "cost_per_hour",
            "idle_cost": "idle_cost_per_hour",
            "unused_cost": "unused_cost_per_hour",
        }
    )
    waste_breakdown(
        frame,
        total="cost_per_hour",
        idle="idle_cost_per_hour",
        unused="unused_cost_per_hour",
        unit="USD/h",
        ax=ax,
    )
    assert ax.get_xlabel() == "waste (USD/h)"


def test_nothing_wasted_is_no_data(ax: Axes) -> None:
    with pytest.raises(NoDataError):
        waste_breakdown(costs().iloc[2:], ax=ax)

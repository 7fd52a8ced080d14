"""waste_breakdown: only what is wasted, ranked by it, each bar's share of its spend as given."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.axes import Axes

from ccanalytics.plots import NoDataError, waste_breakdown


def costs() -> pd.DataFrame:
    """History.measures(by="cluster")-shaped: a big cluster wasting 5 %, a small one half."""
    return pd.DataFrame(
        {
            "cluster_id": pd.array(["cl-big", "cl-small", "cl-clean"], dtype="string"),
            "idle_cost": pd.array([0.0, 12.0, 0.0], dtype="Float64"),
            "busy_unused_cost": pd.array([50.0, 8.0, 0.0], dtype="Float64"),
            # (0 + 50) / 1000 and (12 + 8) / 40 of their spend; nothing of cl-clean's 30.
            "idle_and_unused_cost_share": pd.array([0.05, 0.5, 0.0], dtype="Float64"),
        }
    )


def test_bars_are_ranked_by_waste_and_split_idle_then_unused(ax: Axes) -> None:
    waste_breakdown(costs(), ax=ax)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["cl-big", "cl-small"]  # no cl-clean
    idle, unused = (c for c in ax.containers)
    assert [p.get_width() for p in idle.patches] == [0.0, 12.0]
    # The unused capacity of the pods in use follows the idle pods' cost, as given.
    assert [p.get_width() for p in unused.patches] == [50.0, 8.0]
    notes = [t.get_text() for t in ax.texts]
    assert "50.00 USD (5% of its spend)" in notes
    assert "20.00 USD (50% of its spend)" in notes


def test_the_share_beside_a_bar_is_the_callers_figure(ax: Axes) -> None:
    # The engine's share, whatever the bar: the plot divides nothing.
    frame = costs().assign(idle_and_unused_cost_share=pd.array([0.25, 0.125, 0.0], "Float64"))
    waste_breakdown(frame, ax=ax)
    notes = [t.get_text() for t in ax.texts]
    assert notes == ["50.00 USD (25% of its spend)", "20.00 USD (12% of its spend)"]


def test_without_a_share_the_bars_carry_their_amounts_only(ax: Axes) -> None:
    waste_breakdown(costs().drop(columns="idle_and_unused_cost_share"), share=None, ax=ax)
    assert [t.get_text() for t in ax.texts] == ["50.00 USD", "20.00 USD"]


def test_the_others_bar_sums_the_rest_and_says_no_share(ax: Axes) -> None:
    frame = costs().assign(idle_cost=pd.array([0.0, 12.0, 1.0], dtype="Float64"))
    waste_breakdown(frame, max_bars=2, ax=ax)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["cl-big", "2 others"]
    assert [t.get_text() for t in ax.texts] == ["50.00 USD (5% of its spend)", "21.00 USD"]


def test_columns_of_a_live_summary_can_be_named(ax: Axes) -> None:
    frame = costs().rename(
        columns={
            "idle_cost": "idle_cost_per_hour",
            "busy_unused_cost": "busy_unused_cost_per_hour",
        }
    )
    waste_breakdown(
        frame,
        idle="idle_cost_per_hour",
        unused="busy_unused_cost_per_hour",
        unit="USD/h",
        ax=ax,
    )
    assert ax.get_xlabel() == "waste (USD/h)"


def test_nothing_wasted_is_no_data(ax: Axes) -> None:
    with pytest.raises(NoDataError):
        waste_breakdown(costs().iloc[2:], ax=ax)

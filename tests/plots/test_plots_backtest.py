"""backtest_tradeoff: one point per rule, saving up and false stops across, notes beside."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.axes import Axes

from ccanalytics.plots import NoDataError, backtest_tradeoff


def frame() -> pd.DataFrame:
    """History.backtest(by="cluster")-shaped: two rules over two clusters."""
    return pd.DataFrame(
        {
            "rule": pd.array(["30m at 1%", "30m at 1%", "2h at 1%", "2h at 1%"], dtype="string"),
            "cluster_id": pd.array(["a", "b", "a", "b"], dtype="string"),
            "stops": pd.array([2, 1, 1, 0], dtype="Int64"),
            "false_stops": pd.array([1, 1, 1, 0], dtype="Int64"),
            "saved_usd": pd.array([5.0, 2.5, 1.0, 0.0], dtype="Float64"),
            "interrupted_usd": pd.array([0.5, 0.25, 1.0, 0.0], dtype="Float64"),
        }
    )


def test_each_rule_is_one_point_summed_over_its_rows(ax: Axes) -> None:
    backtest_tradeoff(frame(), ax=ax)
    (points,) = ax.collections
    assert points.get_offsets().tolist() == [[2.0, 7.5], [1.0, 1.0]]
    notes = [t.get_text() for t in ax.texts]
    assert notes == [
        "30m at 1%: 3 stops, 0.75 USD interrupted",
        "2h at 1%: 1 stops, 1.00 USD interrupted",
    ]
    assert ax.get_ylabel() == "saved (USD)"


def test_nothing_to_draw_is_no_data(ax: Axes) -> None:
    with pytest.raises(NoDataError, match="no rows"):
        backtest_tradeoff(frame().iloc[0:0], ax=ax)
    with pytest.raises(ValueError, match=r"History\.backtest"):
        backtest_tradeoff(frame().drop(columns="stops"), ax=ax)

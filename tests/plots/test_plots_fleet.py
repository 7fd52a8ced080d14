"""cost_breakdown on a fleet of hundreds of clusters: at most max_bars bars, the rest summed."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ccanalytics.frames import pods_frame
from ccanalytics.plots import cost_breakdown
from ccanalytics.sandbox import make_cluster_pods


@pytest.fixture(scope="module")
def fleet() -> pd.DataFrame:
    """40 clusters of 3 pods; cluster i costs (i + 1) x a pod's price, every 4th is idle."""
    frames = []
    for i in range(40):
        cid = f"cl-{i:02d}"
        frame = pods_frame(make_cluster_pods(cid, 3, seed=i, util=5.0 if i % 4 == 0 else 80.0))
        frame["cost"] = pd.array([float(i + 1)] * 3, dtype="Float64")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


@pytest.fixture
def ax() -> Axes:
    return Figure(figsize=(8, 6)).add_subplot()


def widths_by_row(ax: Axes) -> np.ndarray:
    """Total bar width per row (y position), top row first."""
    rows: dict[float, float] = {}
    for container in ax.containers:
        for patch in container.patches:
            y = round(patch.get_y() + patch.get_height() / 2, 6)
            rows[y] = rows.get(y, 0.0) + patch.get_width()
    return np.array([rows[y] for y in sorted(rows)])


def test_beyond_max_bars_the_cheapest_groups_become_one_others_bar(
    fleet: pd.DataFrame, ax: Axes
) -> None:
    cost_breakdown(fleet, by="cluster", max_bars=15, ax=ax)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 15
    assert labels[:14] == [f"cl-{i:02d}" for i in range(39, 25, -1)]  # most expensive first
    assert labels[14] == "26 others"
    widths = widths_by_row(ax)
    np.testing.assert_allclose(widths[:14], [3.0 * (i + 1) for i in range(39, 25, -1)])
    assert widths[14] == pytest.approx(sum(3.0 * (i + 1) for i in range(26)))
    assert widths.sum() == pytest.approx(float(fleet["cost"].sum()))


def test_the_others_bar_keeps_its_idle_split(fleet: pd.DataFrame, ax: Axes) -> None:
    cost_breakdown(fleet, by="cluster", max_bars=15, ax=ax)
    idle = next(c for c in ax.containers if c.get_label() == "idle GPUs")
    others_idle = idle.patches[14].get_width()
    assert others_idle == pytest.approx(sum(3.0 * (i + 1) for i in range(0, 26, 4)))
    assert any("26 others" in t.get_text() for t in ax.get_yticklabels())
    assert any(
        t.get_text().startswith(f"{sum(3.0 * (i + 1) for i in range(26)):,.2f} USD/h")
        for t in ax.texts
    )


def test_max_bars_none_draws_every_group(fleet: pd.DataFrame, ax: Axes) -> None:
    cost_breakdown(fleet, by="cluster", max_bars=None, ax=ax)
    assert len(ax.get_yticklabels()) == 40


def test_a_fleet_that_fits_has_no_others_bar(fleet: pd.DataFrame, ax: Axes) -> None:
    cost_breakdown(fleet, by="cluster", max_bars=40, ax=ax)
    assert not any("others" in t.get_text() for t in ax.get_yticklabels())


def test_default_caps_at_15_bars_with_one_annotation_each(fleet: pd.DataFrame, ax: Axes) -> None:
    cost_breakdown(fleet, by="cluster", ax=ax)
    assert len(ax.get_yticklabels()) == 15 and len(ax.texts) == 15


@pytest.mark.parametrize("bad", [0, 1, -3])
def test_max_bars_below_two_is_a_value_error(fleet: pd.DataFrame, bad: int) -> None:
    with pytest.raises(ValueError, match="max_bars"):
        cost_breakdown(fleet, max_bars=bad)

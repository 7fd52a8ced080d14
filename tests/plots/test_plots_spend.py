"""spend_outlook: one bar per period from a real History.spend, its artists read back.

The store is written by hand (tests/history_helpers.py): five weeks of hourly snapshots
to Monday 2026-11-09 of a 1 USD/h base pod and an office pod on weekdays 09:00-17:00
whose price changes from week to week (9, 6, 12, 9, 7 USD/h), so the seasonal
forecast's past errors are not zero and its interval has a width.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from history_helpers import pod_row, write_store
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.container import BarContainer, ErrorbarContainer

from ccanalytics import History
from ccanalytics.plots import NoDataError, spend_outlook

_OFFICE_USD_H = (9.0, 6.0, 12.0, 9.0, 7.0)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = []
    start = pd.Timestamp("2026-10-05T00:00Z")
    for when in pd.date_range("2026-10-05", "2026-11-09", freq="1h", tz="UTC"):
        stamp = when.isoformat()
        rows.append(pod_row("w", stamp, "base", cost=1.0))
        week = min((when - start).days // 7, len(_OFFICE_USD_H) - 1)
        if when.weekday() < 5 and 9 <= when.hour < 17:
            rows.append(pod_row("w", stamp, "office", cost=_OFFICE_USD_H[week]))
    path = tmp_path_factory.mktemp("varying")
    write_store(path, rows)
    return path


@pytest.fixture(scope="module")
def seasonal(store: Path) -> pd.DataFrame:
    with History(store) as h:
        return h.spend(by=None, at="2026-11-04T12:00")  # a Wednesday noon


def _bars(ax: Axes) -> tuple[BarContainer, BarContainer]:
    so_far, rest = (c for c in ax.containers if isinstance(c, BarContainer))
    return so_far, rest


def _in_order(frame: pd.DataFrame, column: str) -> list[float]:
    """``column`` of the day, week and month rows, in that order (top to bottom)."""
    by_period = frame.set_index("period")[column]
    return [float(by_period[p]) for p in ("day", "week", "month")]


def test_each_period_is_its_spend_then_the_p50_rest(ax: Axes, seasonal: pd.DataFrame) -> None:
    assert set(seasonal["forecast"]) == {"seasonal"}
    spend_outlook(seasonal, ax=ax)
    so_far, rest = _bars(ax)
    spent, p50 = _in_order(seasonal, "spent"), _in_order(seasonal, "projected_p50")
    # Wednesday noon: the day's 12 h of base (12 USD) and office 09-12 at 7 USD/h (21).
    assert spent[0] == pytest.approx(12.0 + 3 * 7.0)
    assert [b.get_width() for b in so_far] == pytest.approx(spent)
    assert [b.get_x() for b in rest] == pytest.approx(spent)
    assert [b.get_width() for b in rest] == pytest.approx(np.subtract(p50, spent))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["day", "week", "month"]
    assert ax.get_xlabel() == "cost (USD)"
    assert ax.get_title().startswith("Spend so far and the seasonal forecast")


def test_the_interval_runs_from_p10_to_p90(ax: Axes, seasonal: pd.DataFrame) -> None:
    spend_outlook(seasonal, ax=ax)
    (interval,) = (c for c in ax.containers if isinstance(c, ErrorbarContainer))
    _, _, (segments,) = interval.lines
    p10, p90 = _in_order(seasonal, "projected_p10"), _in_order(seasonal, "projected_p90")
    assert p90[2] - p10[2] > 1.0  # weeks of different prices: a real width
    ends = [float(x) for s in segments.get_segments() for x in (s[0][0], s[1][0])]
    assert ends == pytest.approx([x for pair in zip(p10, p90, strict=True) for x in pair])


def test_the_line_is_a_marker_at_projected(ax: Axes, seasonal: pd.DataFrame) -> None:
    spend_outlook(seasonal, ax=ax)
    (marker,) = (c for c in ax.collections if isinstance(c, PathCollection))
    xs = marker.get_offsets()[:, 0].tolist()
    assert xs == pytest.approx(_in_order(seasonal, "projected"))
    assert not any(
        isinstance(c, LineCollection) and c.get_label() == "limit" for c in ax.collections
    )


def test_a_limit_marks_its_periods_only(ax: Axes, seasonal: pd.DataFrame) -> None:
    spend_outlook(seasonal, limit={"month": 1500.0, "week": 400.0}, ax=ax)
    (marks,) = (c for c in ax.collections if c.get_label() == "limit")
    # The week (row 1) and the month (row 2) have one; the day does not.
    drawn = [(float(s[0][0]), float(s[0][1]), float(s[1][1])) for s in marks.get_segments()]
    assert drawn == [(400.0, 0.6, 1.4), (1500.0, 1.6, 2.4)]
    assert "limit" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_the_fallback_says_it_is_the_line_and_why(ax: Axes, store: Path) -> None:
    with History(store) as h:
        young = h.spend(by=None, at="2026-10-14T12:00")
    assert set(young["forecast"]) == {"burn_rate"}
    spend_outlook(young, ax=ax)
    title = ax.get_title()
    assert title.startswith("Spend so far and the burn-rate line")
    assert "2 weeks of history needed, 9.5 days held" in title
    _, rest = _bars(ax)
    assert [b.get_x() + b.get_width() for b in rest] == pytest.approx(_in_order(young, "projected"))
    assert not any(isinstance(c, ErrorbarContainer) for c in ax.containers)


def test_a_cluster_frame_is_one_cluster(ax: Axes, store: Path) -> None:
    with History(store) as h:
        frame = h.spend(at="2026-11-04T12:00")  # by="cluster": the one cluster "w"
    spend_outlook(frame, ax=ax)
    assert "cluster w" in ax.get_title()
    two = pd.concat([frame, frame.assign(cluster_id="v$$")], ignore_index=True)
    with pytest.raises(ValueError, match="holds 2 clusters"):
        spend_outlook(two, ax=ax)
    spend_outlook(two, cluster_id="v$$", ax=ax)
    assert r"cluster v\$\$" in ax.get_title()


def test_nothing_to_draw_is_no_data(ax: Axes, seasonal: pd.DataFrame) -> None:
    with pytest.raises(NoDataError, match="no rows"):
        spend_outlook(seasonal.iloc[0:0], ax=ax)
    with pytest.raises(ValueError, match=r"History\.spend.*projected_p90"):
        spend_outlook(seasonal.drop(columns="projected_p90"), ax=ax)

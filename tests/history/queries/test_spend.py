"""Spend so far and projections (History.spend), against hand computations to the cent.

The store is ``budget_store`` (tests/budget_store.py): two clusters in
November 2026, one with a collection gap, one appearing mid-month.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from budget_store import A_RATE, B_RATE
from history_helpers import ts, write_crash_leftover

from ccanalytics import History
from ccanalytics.history import period_bounds
from ccanalytics.measures import breach_instant


def _row(frame: pd.DataFrame, cluster: str, period: str) -> Any:
    hit = frame[(frame["cluster_id"] == cluster) & (frame["period"] == period)]
    assert len(hit) == 1, hit
    return hit.iloc[0]


def test_periods_are_utc_day_iso_week_and_calendar_month() -> None:
    now = ts("2026-11-10T12:00")  # a Tuesday
    assert period_bounds(now, "day") == (ts("2026-11-10"), ts("2026-11-11"))
    assert period_bounds(now, "week") == (ts("2026-11-09"), ts("2026-11-16"))
    assert period_bounds(now, "month") == (ts("2026-11-01"), ts("2026-12-01"))
    assert period_bounds(ts("2026-12-31T23:59"), "month") == (ts("2026-12-01"), ts("2027-01-01"))
    with pytest.raises(ValueError, match="period"):
        period_bounds(now, "year")  # type: ignore[arg-type]


def test_at_the_newest_snapshot_spend_and_projection_match_the_hand_computation(
    budget_store: Path,
) -> None:
    store = budget_store
    with History(store) as h:
        frame = h.spend()
    # now = the newest snapshot, Nov 10 12:00.
    # cl-a this month: Nov 1 00:00 to Nov 10 12:00 is 228 h, less the 23 h gap: 205 h.
    month_a = _row(frame, "cl-a", "month")
    assert month_a["now"] == ts("2026-11-10T12:00")
    assert month_a["observed_hours"] == pytest.approx(205.0)
    assert round(month_a["spent"], 2) == 512.50  # 205 h x 2.50
    assert month_a["burn_rate"] == pytest.approx(A_RATE)
    assert month_a["hours_left"] == pytest.approx(492.0)  # to Dec 1 00:00: 20.5 days
    assert round(month_a["projected"], 2) == 1742.50  # 512.50 + 2.50 x 492
    # cl-b appeared Nov 8 06:00: 54 h x 4.00 so far.
    month_b = _row(frame, "cl-b", "month")
    assert round(month_b["spent"], 2) == 216.00
    assert round(month_b["projected"], 2) == 2184.00  # 216 + 4.00 x 492
    # Today: 00:00 to 12:00; this week: since Monday Nov 9 00:00 (36 h).
    assert round(_row(frame, "cl-a", "day")["spent"], 2) == 30.00
    assert round(_row(frame, "cl-a", "day")["projected"], 2) == 60.00
    assert round(_row(frame, "cl-b", "week")["spent"], 2) == 144.00
    assert _row(frame, "cl-b", "week")["hours_left"] == pytest.approx(132.0)
    assert round(_row(frame, "cl-b", "week")["projected"], 2) == 672.00  # 144 + 4 x 132


def test_totals_are_the_sums_of_the_clusters(budget_store: Path) -> None:
    store = budget_store
    with History(store) as h:
        totals = h.spend(by=None).set_index("period")
    assert round(totals.loc["month", "spent"], 2) == 728.50  # 512.50 + 216.00
    assert round(totals.loc["month", "projected"], 2) == 3926.50  # 1742.50 + 2184.00
    assert totals.loc["month", "burn_rate"] == pytest.approx(6.50)
    assert "cluster_id" not in totals.columns


@pytest.mark.parametrize(
    ("at", "cluster", "spent", "burn", "projected"),
    [
        # In the gap: the latest snapshot is Nov 4 23:00, which stands for 2 h, so
        # Nov 1 00:00 .. Nov 5 01:00 is 97 h observed (242.50 USD). The projection
        # counts from `at` on, at the last known rate: 242.50 + 2.50 x 612.
        ("2026-11-05T12:00", "cl-a", 242.50, A_RATE, 1772.50),
        # cl-b's first snapshot: nothing spent yet, its rate projected for 546 h
        # (Nov 8 06:00 .. Dec 1 00:00 is 22 days and 18 h).
        ("2026-11-08T06:00", "cl-b", 0.00, B_RATE, 2184.00),
        # Between two snapshots (06:30): the 06:00 snapshot counts up to `at` only, so
        # Nov 1 00:00 .. Nov 10 06:30 is 222.5 h less the 23 h gap: 199.5 h, 498.75 USD;
        # 497.5 h are left: 498.75 + 2.50 x 497.5 = 1742.50 (a steady rate projects
        # the same month total from any instant).
        ("2026-11-10T06:30", "cl-a", 498.75, A_RATE, 1742.50),
    ],
)
def test_projection_at_chosen_instants(
    budget_store: Path, at: str, cluster: str, spent: float, burn: float, projected: float
) -> None:
    store = budget_store
    with History(store) as h:
        row = _row(h.spend(at), cluster, "month")
    assert round(row["spent"], 2) == round(spent, 2)
    assert row["burn_rate"] == pytest.approx(burn)
    assert round(row["projected"], 2) == round(projected, 2)


def test_a_cluster_not_yet_seen_is_not_projected(budget_store: Path) -> None:
    store = budget_store
    with History(store) as h:
        frame = h.spend("2026-11-07T00:00")
    assert set(frame["cluster_id"]) == {"cl-a"}


def test_an_empty_store_gives_an_empty_frame_with_the_columns(tmp_path: Path) -> None:
    with History(write_crash_leftover(tmp_path)) as h:
        frame = h.spend()
    assert frame.empty
    assert {"period", "spent", "burn_rate", "projected"} <= set(frame.columns)


# --------------------------------------------------------------------------- breach_at


def test_breach_at_is_when_the_projection_reaches_the_limit(budget_store: Path) -> None:
    with History(budget_store) as h:
        frame = h.spend(limit={"month": 1000})
        totals = h.spend(by=None, limit=1378.50).set_index("period")
        over = h.spend(limit=500)
    # now = Nov 10 12:00. cl-a: (1000 - 512.50) / 2.50 = 195 h later, Nov 18 15:00
    # (its projection, 1742.50, is over 1000); cl-b: (1000 - 216) / 4.00 = 196 h.
    assert _row(frame, "cl-a", "month")["breach_at"] == ts("2026-11-18T15:00")
    assert _row(frame, "cl-b", "month")["breach_at"] == ts("2026-11-18T16:00")
    # No limit for the day and the week: NULL.
    assert pd.isna(_row(frame, "cl-a", "day")["breach_at"])
    assert pd.isna(_row(frame, "cl-b", "week")["breach_at"])
    # The whole store: (1378.50 - 728.50) / 6.50 = 100 h, Nov 14 16:00; today's
    # projection (30 + 48 spent, 6.50 USD/h for 12 h: 156) never gets there.
    assert totals.loc["month", "breach_at"] == ts("2026-11-14T16:00")
    assert pd.isna(totals.loc["day", "breach_at"])
    # cl-a has spent 512.50 already: over 500, no crossing ahead (the spend says it);
    # cl-b's month: (500 - 216) / 4 = 71 h, Nov 13 11:00.
    assert pd.isna(_row(over, "cl-a", "month")["breach_at"])
    assert _row(over, "cl-b", "month")["breach_at"] == ts("2026-11-13T11:00")
    # Without a limit the column is there, all NULL.
    assert frame["breach_at"].dtype == "datetime64[ns, UTC]"


def test_breach_instant_is_before_the_period_end_exactly_when_projected_over() -> None:
    now, end = ts("2026-11-10T12:00"), ts("2026-12-01")  # 492 h left
    # 512.50 + 2.50 x 492 = 1742.50: a limit of 1742.50 is reached at the end, not before.
    assert breach_instant(512.50, 2.50, 1742.50, now, end) is None
    assert breach_instant(512.50, 2.50, 1742.49, now, end) is not None
    assert breach_instant(512.50, 0.0, 600.0, now, end) is None  # burning nothing
    assert breach_instant(600.0, 2.50, 600.0, now, end) is None  # at the limit already


def test_a_limit_far_beyond_the_period_has_no_breach_date() -> None:
    now, end = ts("2026-11-10T12:00"), ts("2026-12-01")
    # (1e8 - 512.50) / 2.50 h is some 4,500 years: past pandas' Timedelta, and past the
    # period's end, so never a crossing this period.
    assert breach_instant(512.50, 2.50, 1e8, now, end) is None
    assert breach_instant(0.0, 1e-300, 1.0, now, end) is None  # a rate that is all but zero


def test_a_generous_budget_gives_a_null_breach_at(budget_store: Path) -> None:
    with History(budget_store) as h:
        frame = h.spend(limit={"month": 100_000_000})
    assert frame["breach_at"].isna().all()

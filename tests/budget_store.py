"""A store for the budget tests, written by hand so every figure can be computed by hand.

November 2026 (the 1st is a Sunday, so ISO week 46 starts on Monday the 9th):

- ``cl-a``: one pod at 2.50 USD/h, a snapshot every hour from Nov 1 00:00 to Nov 10
  12:00, except a collection gap: nothing between Nov 4 23:00 and Nov 6 00:00. Its
  median spacing is 1 h, so ``max_gap`` is 2 h: the 23:00 snapshot stands for 2 h and
  Nov 5 01:00 to Nov 6 00:00 (23 h) is unobserved, never spend.
- ``cl-b``: appears mid-month, one pod at 4.00 USD/h, hourly from Nov 8 06:00 to Nov 10 12:00.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from history_helpers import pod_row, ts, write_store

__all__ = ["A_RATE", "B_RATE", "write_budget_store"]

A_RATE, B_RATE = 2.50, 4.00


def _hourly(start: str, end: str) -> list[pd.Timestamp]:
    return list(pd.date_range(ts(start), ts(end), freq="1h"))


def write_budget_store(folder: Path) -> Path:
    gap = (ts("2026-11-04T23:00"), ts("2026-11-06T00:00"))
    a_times = [t for t in _hourly("2026-11-01", "2026-11-10T12:00") if not gap[0] < t < gap[1]]
    rows = [pod_row("cl-a", t.isoformat(), "a-0", cost=A_RATE) for t in a_times]
    rows += [
        pod_row("cl-b", t.isoformat(), "b-0", cost=B_RATE)
        for t in _hourly("2026-11-08T06:00", "2026-11-10T12:00")
    ]
    write_store(folder, rows)
    return folder

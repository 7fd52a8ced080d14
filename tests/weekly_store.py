"""A store with a weekly pattern, hand-computable: five weeks of hourly snapshots.

Cluster ``w``, snapshotted every hour from Monday 2026-10-05 00:00 to Monday
2026-11-09 00:00. A base pod costs 1 USD/h throughout; an office pod at 9 USD/h runs
on weekdays from 09:00 to 17:00 (snapshots 09:00 ... 16:00). A weekday costs
9 + 8 x 10 + 7 = 96 USD, a weekend day 24, a week 528.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from history_helpers import pod_row, write_store


def write_weekly_store(path: Path) -> Path:
    rows = []
    for when in pd.date_range("2026-10-05", "2026-11-09", freq="1h", tz="UTC"):
        stamp = when.isoformat()
        rows.append(pod_row("w", stamp, "base", cost=1.0))
        if when.weekday() < 5 and 9 <= when.hour < 17:
            rows.append(pod_row("w", stamp, "office", cost=9.0))
    write_store(path, rows)
    return path

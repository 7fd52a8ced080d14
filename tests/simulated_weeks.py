"""Eight simulated weeks of the sandbox's weekly office fleet, written as collect would.

``cl-team-office`` (:class:`~ccanalytics.sandbox.WeeklyFleet`, seed 0) from Monday
2026-10-05 00:00 to Tuesday 2026-12-01 00:00 (eight weeks and a day, so November is a
whole month), one snapshot every 30 minutes (coarse: the forecast reads hours), with
one holiday, Monday 2026-10-12, in the weeks the forecasts of November learn from.
Written by tests/simulated_month.py's writer: about 20 s.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from simulated_month import write_month

from ccanalytics.sandbox import SandboxApp, SimulatedClock, WeeklyFleet

START = datetime(2026, 10, 5, tzinfo=UTC)
END = datetime(2026, 12, 1, tzinfo=UTC)
HOLIDAY = date(2026, 10, 12)
OFFICE = WeeklyFleet().cluster
STEP = timedelta(minutes=30)


def write_weeks(store: Path, *, seed: int = 0, holiday: date = HOLIDAY) -> Path:
    """The store of the module docstring (another seed or holiday for the benchmark)."""
    app = SandboxApp(
        clock=SimulatedClock(START), seed=seed, weekly=WeeklyFleet(holidays=(holiday,))
    )
    # Up to and including Dec 1 00:00: the month's last snapshot covers its last 30 min.
    return write_month(store, app, [OFFICE], END + STEP / 2, step=STEP)

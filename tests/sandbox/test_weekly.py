"""The sandbox's weekly office fleet: working days busy, nights, weekends and holidays
quiet, pods left behind idle until their rank comes back, all from the seed."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from ccanalytics.sandbox import SandboxApp, SimulatedClock, WeeklyFleet
from ccanalytics.sandbox._weekly import _LUNCH

MONDAY = datetime(2026, 11, 2, tzinfo=UTC)
HOLIDAY = date(2026, 11, 4)  # a Wednesday
FLEET = WeeklyFleet(holidays=(HOLIDAY,))


def _listing(when: datetime, fleet: WeeklyFleet = FLEET, seed: int = 0) -> list[dict[str, Any]]:
    clock = SimulatedClock(MONDAY)
    clock.advance(when - MONDAY)
    app = SandboxApp(clock=clock, seed=seed, weekly=fleet)
    assert fleet.cluster in app.cluster_ids()
    pods = app.cluster_pods(fleet.cluster)
    assert pods is not None
    return pods


def _gpu_max(pod: dict[str, Any]) -> float:
    return max(g["util"] for g in pod["runtime"]["gpus"])


def test_a_working_day_fills_the_office_and_the_night_empties_it() -> None:
    noon = _listing(MONDAY + timedelta(hours=15))
    # Every rank that came in is there by 09:30 and until 17:00; with attendance 0.9
    # most of the twelve, plus the two always-on pods.
    assert 2 + 8 <= len(noon) <= 2 + 12
    assert all(p["status"] == "RUNNING" and p["cost"] == pytest.approx(3.78) for p in noon)
    assert all(_gpu_max(p) >= 80 for p in noon)
    night = _listing(MONDAY + timedelta(hours=23))
    assert len(night) < len(noon)
    # Who is left at night is the always-on pair (busy) and pods left behind (idle).
    left = [p for p in night if _gpu_max(p) < 5]
    assert len(night) == 2 + len(left)


def test_a_holiday_and_a_weekend_are_as_quiet_as_a_night() -> None:
    holiday = _listing(datetime(2026, 11, 4, 11, tzinfo=UTC))
    evening_before = _listing(datetime(2026, 11, 3, 23, tzinfo=UTC))
    # Nobody comes in: the holiday lists exactly what the evening before left running.
    assert sorted(p["id"] for p in holiday) == sorted(p["id"] for p in evening_before)
    saturday = _listing(datetime(2026, 11, 7, 11, tzinfo=UTC))
    assert sum(1 for p in saturday if _gpu_max(p) >= 80) == 2


def test_a_pod_left_behind_is_the_same_pod_when_its_rank_comes_back() -> None:
    night = {p["id"]: p for p in _listing(MONDAY + timedelta(hours=23))}
    left = [pid for pid, p in night.items() if _gpu_max(p) < 5]
    assert left, "seed 0 leaves a pod behind on Monday night"
    tuesday = {p["id"]: p for p in _listing(MONDAY + timedelta(days=1, hours=15))}
    back = [pid for pid in left if pid in tuesday]
    assert back
    assert all(_gpu_max(tuesday[pid]) >= 80 for pid in back)


def test_every_third_rank_idles_over_lunch() -> None:
    at = MONDAY + timedelta(hours=_LUNCH[0].hour, minutes=20)
    lunch = _listing(at)
    idle = [p for p in lunch if _gpu_max(p) < 5]
    assert idle
    later = {p["id"] for p in _listing(at + timedelta(hours=1)) if _gpu_max(p) >= 80}
    assert {p["id"] for p in idle} <= later


def test_the_same_seed_lists_the_same_fleet() -> None:
    at = MONDAY + timedelta(hours=10)
    assert _listing(at) == _listing(at)
    assert _listing(at, seed=1) != _listing(at)  # another seed, other days


def test_bad_knobs_are_value_errors() -> None:
    with pytest.raises(ValueError, match="probabilities"):
        WeeklyFleet(attendance=1.5)

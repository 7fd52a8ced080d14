"""An office fleet that follows the week: busy on working days, quiet at night, weekends
and holidays (``SandboxApp(clock=..., weekly=WeeklyFleet())``).

A pure function of the seed and the time, as the rest of the timeline. Per rank and UTC
day, drawn from ``random.Random(f"{seed}/weekly/{rank}/{day}")``:

- a **working day** is a weekday that is not one of ``holidays``; on it each of the
  ``pods`` office ranks comes in with probability ``attendance``, arriving at 08:00 plus
  0-90 minutes and leaving at 17:00 plus 0-120 minutes (whole minutes);
- from arrival to leaving its pod (2x A100, 3.78 USD/h) is ``RUNNING`` and busy (GPUs
  ~85 %); every third rank (0, 3, 6, ...) idles over lunch, 12:00-12:45 (GPUs below
  5 %: a short idle stretch a hasty rule would stop);
- at leaving the pod is deleted (gone from the listing), except with probability
  ``forget``: then it stays ``RUNNING`` and idle until the rank next comes in (the next
  working day it attends), which carries on with the same pod;
- ``always_on`` more pods (ranks after the office ones) run busy all the time.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Final

__all__ = ["BUSY", "IDLE", "PodState", "WeeklyFleet"]

#: The office pods' GPU level when busy and when idle (percent, before the noise).
BUSY, IDLE = 85.0, 0.0
_LUNCH: Final = (time(12, 0), time(12, 45))
#: How many days back a forgotten pod is looked for (a holiday week and a weekend).
_LOOK_BACK: Final = 12


@dataclass(frozen=True)
class PodState:
    """One office pod listed at an instant: its rank, since when (its identity), how busy."""

    rank: int
    since: datetime  #: the arrival that created it (its created and started times)
    util: float


@dataclass(frozen=True)
class WeeklyFleet:
    """The office fleet's knobs (see the module docstring); every field has a default."""

    cluster: str = "cl-team-office"
    pods: int = 12
    always_on: int = 2
    holidays: tuple[date, ...] = ()
    attendance: float = 0.9
    forget: float = 0.15

    def __post_init__(self) -> None:
        if not 0 <= self.attendance <= 1 or not 0 <= self.forget <= 1:
            raise ValueError("attendance and forget are probabilities, between 0 and 1")
        if self.pods < 0 or self.always_on < 0:
            raise ValueError("a weekly fleet has 0 or more pods of each kind")
        object.__setattr__(self, "holidays", tuple(self.holidays))

    def working(self, day: date) -> bool:
        """A weekday that is no holiday."""
        return day.weekday() < 5 and day not in self.holidays

    def _day(self, seed: int, rank: int, day: date) -> tuple[datetime, datetime, bool] | None:
        """(arrival, leaving, forgotten) of ``rank`` on ``day``; None: it does not come in."""
        if not self.working(day):
            return None
        rng = random.Random(f"{seed}/weekly/{rank}/{day.isoformat()}")
        comes = rng.random() < self.attendance
        arrive = 8 * 60 + rng.randint(0, 90)
        leave = 17 * 60 + rng.randint(0, 120)
        forgets = rng.random() < self.forget
        if not comes:
            return None
        midnight = datetime(day.year, day.month, day.day, tzinfo=UTC)
        start, end = midnight + timedelta(minutes=arrive), midnight + timedelta(minutes=leave)
        return start, end, forgets

    def office(self, seed: int, when: datetime) -> list[PodState]:
        """The office pods listed at ``when``, by rank."""
        now = when.astimezone(UTC)
        return [s for rank in range(self.pods) if (s := self._rank(seed, rank, now)) is not None]

    def _rank(self, seed: int, rank: int, now: datetime) -> PodState | None:
        today = self._day(seed, rank, now.date())
        if today is not None and today[0] <= now < today[1]:
            lunch = rank % 3 == 0 and _LUNCH[0] <= now.time() < _LUNCH[1]
            return PodState(rank, self._since(seed, rank, now.date()), IDLE if lunch else BUSY)
        if today is not None and now >= today[1]:
            return PodState(rank, self._since(seed, rank, now.date()), IDLE) if today[2] else None
        # Before today's arrival, or a day it does not come in: a pod left running?
        for back in range(1, _LOOK_BACK + 1):
            day = now.date() - timedelta(days=back)
            earlier = self._day(seed, rank, day)
            if earlier is not None:
                return PodState(rank, self._since(seed, rank, day), IDLE) if earlier[2] else None
        return None

    def _since(self, seed: int, rank: int, day: date) -> datetime:
        """The arrival that created the pod in use on ``day``: that day's, or an earlier
        one's whose pod was left running every working day since."""
        first = self._day(seed, rank, day)
        assert first is not None
        since = first[0]
        for back in range(1, _LOOK_BACK + 1):
            earlier = self._day(seed, rank, day - timedelta(days=back))
            if earlier is None:
                continue
            if not earlier[2]:
                break
            since = earlier[0]
        return since

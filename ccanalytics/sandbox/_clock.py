"""A simulated clock for the sandbox: time moves only when the caller says so.

>>> clock = SimulatedClock()                      # 2026-11-02 00:00 UTC
>>> clock.advance(timedelta(minutes=5))
>>> clock.advance(30)                             # seconds
>>> clock.now().isoformat()
'2026-11-02T00:05:30+00:00'

With ``speed`` (simulated seconds per real second, e.g. 60), the clock also runs by
itself: ``ccanalytics sandbox --simulated-start ... --speed 60`` serves a fleet whose
day passes in 24 real minutes. It never goes backwards either way.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

__all__ = ["DEFAULT_START", "SimulatedClock", "http_date"]

#: Where a simulated clock starts unless told otherwise: a Monday, midnight UTC.
DEFAULT_START = datetime(2026, 11, 2, tzinfo=UTC)


class SimulatedClock:
    """Simulated UTC time, advanced by the caller (and by real time when ``speed`` > 0)."""

    def __init__(self, start: datetime = DEFAULT_START, *, speed: float = 0.0) -> None:
        if start.tzinfo is None or start.utcoffset() is None:
            raise ValueError("start must be an aware datetime (e.g. tzinfo=UTC)")
        if not speed >= 0:
            raise ValueError(f"speed must be >= 0 simulated seconds per real second, not {speed}")
        self._start = start.astimezone(UTC)
        self._speed = float(speed)
        self._offset = 0.0  # simulated seconds added by advance()
        self._real_start = time.monotonic()
        self._lock = threading.Lock()

    @property
    def start(self) -> datetime:
        """The simulated time the clock started at (aware, UTC)."""
        return self._start

    @property
    def speed(self) -> float:
        """Simulated seconds per real second (0: time moves only by :meth:`advance`)."""
        return self._speed

    def elapsed(self) -> float:
        """Simulated seconds since :attr:`start` (a float; never decreases)."""
        with self._lock:
            running = (time.monotonic() - self._real_start) * self._speed if self._speed else 0.0
            return self._offset + running

    def now(self) -> datetime:
        """The simulated time: an aware UTC datetime."""
        return self._start + timedelta(seconds=self.elapsed())

    def timestamp(self) -> float:
        """The simulated time as POSIX seconds (what rate-limit windows count on)."""
        return self._start.timestamp() + self.elapsed()

    def advance(self, delta: timedelta | float) -> None:
        """Move the clock forward by ``delta`` (a timedelta or seconds); never backwards."""
        seconds = delta.total_seconds() if isinstance(delta, timedelta) else float(delta)
        if not seconds >= 0:  # also refuses NaN
            raise ValueError(f"a simulated clock never goes backwards (advance by {delta!r})")
        with self._lock:
            self._offset += seconds

    def advance_to(self, when: datetime) -> None:
        """Move the clock forward to ``when`` (aware); never backwards."""
        self.advance((when - self.now()).total_seconds())

    def __repr__(self) -> str:
        speed = f", speed={self._speed:g}" if self._speed else ""
        return f"SimulatedClock(now={self.now().isoformat()}{speed})"


def http_date(when: datetime) -> str:
    """``when`` as an RFC 9110 IMF-fixdate (``Mon, 02 Nov 2026 00:00:00 GMT``)."""
    return format_datetime(when.astimezone(UTC).replace(microsecond=0), usegmt=True)

"""``RateLimit`` / ``RateLimit-Policy`` headers, and the pacer that keeps a client inside them.

The headers are RFC 9651 structured-field lists with one member per window::

    RateLimit-Policy: "minute";q=60;w=60, "hour";q=1000;w=3600, "day";q=10000;w=86400
    RateLimit: "minute";r=59;t=42, "hour";r=998;t=3342, "day";r=9990;t=80000

They are parsed with ``http_sf`` (never with regexes). A malformed header is
ignored, a negative or non-integer value is dropped, so are a policy's ``q=0`` and
``w=0`` (no client could honour them), and absent headers mean the caller is
exempt (``None``). However odd the headers, one call waits for pacing at most
``MAX_PACING_WAIT`` seconds in all, then raises ``RateLimitError``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ccanalytics.api._config import MAX_PACING_WAIT

__all__ = ["Pacer", "RateLimitStatus", "RateLimitWindow", "parse_rate_limit"]

logger = logging.getLogger("ccanalytics.ratelimit")


@dataclass(frozen=True)
class RateLimitWindow:
    """One window's state: ``remaining`` (r), ``reset`` seconds (t), ``quota`` (q), ``window`` seconds (w)."""

    remaining: int | None = None
    reset: float | None = None
    quota: int | None = None
    window: float | None = None

    @property
    def exhausted(self) -> bool:
        """True when the server said no request is left in this window."""
        return self.remaining is not None and self.remaining <= 0


@dataclass(frozen=True)
class RateLimitStatus:
    """The rate-limit state announced by one response, per window name."""

    windows: dict[str, RateLimitWindow] = field(default_factory=dict)

    def __getitem__(self, name: str) -> RateLimitWindow:
        return self.windows[name]

    @property
    def tightest(self) -> tuple[str, RateLimitWindow] | None:
        """The window with the fewest remaining requests (ties: the longest reset)."""
        known = [(n, w) for n, w in self.windows.items() if w.remaining is not None]
        if not known:
            return None
        return min(known, key=lambda nw: (nw[1].remaining, -(nw[1].reset or 0.0)))


def _parse_sf_list(value: str | None) -> dict[str, dict[str, object]] | None:
    """Parse a structured-field list of ``name;param=...`` members; None if malformed."""
    if value is None:
        return None
    from http_sf import parse  # imported here: only responses with the header pay for it
    from http_sf.types import Token

    try:
        members: Any = parse(value.encode("latin-1", "replace"), tltype="list")
    except Exception:  # http_sf raises ValueError subclasses, but a header must never crash us
        logger.debug("ignoring a malformed rate-limit header")
        return None
    out: dict[str, dict[str, object]] = {}
    for member in members:
        try:
            item, params = member
        except (TypeError, ValueError):
            continue
        # The window name may be sent as a String or a Token; any other member is not a window.
        if isinstance(item, str | Token) and isinstance(params, dict):
            out[str(item)] = dict(params)
    return out


def _count(params: Mapping[str, object], key: str, minimum: int = 0) -> int | None:
    value = params.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        return None
    return value


def _seconds(params: Mapping[str, object], key: str, *, positive: bool = False) -> float | None:
    value = params.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0 or (positive and seconds == 0):
        return None
    return seconds


def parse_rate_limit(ratelimit: str | None, policy: str | None = None) -> RateLimitStatus | None:
    """Build a :class:`RateLimitStatus` from the two header values; never raises.

    Returns ``None`` when neither header is present or neither parses (exempt or
    unknown). A window named only in one header gets ``None`` for the other's fields.
    """
    current = _parse_sf_list(ratelimit)
    policies = _parse_sf_list(policy)
    if not current and not policies:
        return None
    current = current or {}
    policies = policies or {}
    windows: dict[str, RateLimitWindow] = {}
    for name in list(dict.fromkeys([*current, *policies])):
        cur = current.get(name, {})
        pol = policies.get(name, {})
        windows[name] = RateLimitWindow(
            remaining=_count(cur, "r"),
            reset=_seconds(cur, "t"),
            # A policy the client cannot honour is malformed: a window of no length
            # never resets, and a quota of nothing is never worth waiting for.
            quota=_count(pol, "q", minimum=1),
            window=_seconds(pol, "w", positive=True),
        )
    return RateLimitStatus(windows=windows)


@dataclass
class _WindowBudget:
    remaining: int
    resets_at: float  # monotonic time at which the server starts a new window
    quota: int | None
    window: float | None


class Pacer:
    """Counts requests against the windows the server announced, so none is sent into a full window.

    Thread- and task-safe. :meth:`try_acquire` books one request in every known
    window or says how long to wait; :meth:`release` folds the response's headers
    back in. Counting locally what is in flight is what lets concurrent requests
    fan out up to the quota without a single 429.

    Estimates of a window's reset are always late, never early: the server's ``t``
    is rounded up and the client adds it to the time it *received* the response.
    """

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, max_wait: float = MAX_PACING_WAIT
    ) -> None:
        self._clock = clock
        self.max_wait = max_wait
        self._lock = threading.Lock()
        self._budgets: dict[str, _WindowBudget] = {}
        self._in_flight = 0

    def _refresh(self, now: float) -> None:
        """Start new windows whose reset has passed (fixed windows: the full quota again)."""
        for name, b in list(self._budgets.items()):
            if now < b.resets_at:
                continue
            if b.quota is None or b.window is None:
                del self._budgets[name]  # nothing known of the new window: stop pacing on it
                continue
            # Skip every window that has ended, in one step: a loop would spin for
            # ages on a tiny window announced long ago.
            b.resets_at += (math.floor((now - b.resets_at) / b.window) + 1) * b.window
            if b.resets_at <= now:  # float rounding on a tiny window
                b.resets_at = math.nextafter(now, math.inf)
            b.remaining = b.quota

    def try_acquire(self) -> tuple[float, str | None]:
        """Book a request if it may go now (``(0.0, None)``), else ``(seconds to wait, window)``."""
        with self._lock:
            now = self._clock()
            self._refresh(now)
            blocked = [(b.resets_at - now, n) for n, b in self._budgets.items() if b.remaining <= 0]
            if blocked:
                return max(blocked)
            for b in self._budgets.values():
                b.remaining -= 1
            self._in_flight += 1
            return 0.0, None

    def cancel(self) -> None:
        """A booked request ended without a response carrying rate-limit headers."""
        self.release(None)

    def release(self, status: RateLimitStatus | None) -> None:
        """Fold a finished request's rate-limit headers back in (``None``: it carried none)."""
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)
            if status is None:
                return
            now = self._clock()
            for name, w in status.windows.items():
                if w.remaining is None or w.reset is None:
                    continue  # without both we cannot pace this window; 429s still are honoured
                resets_at = now + math.ceil(w.reset)
                old = self._budgets.get(name)
                same = 1.0 if w.window is None else min(1.0, w.window / 2)
                if old is not None and abs(resets_at - old.resets_at) <= same:
                    # Same window: both counts are upper bounds, the smaller is the truth.
                    old.remaining = min(old.remaining, w.remaining)
                    old.resets_at = min(old.resets_at, resets_at)
                    old.quota, old.window = w.quota, w.window
                elif old is None or resets_at > old.resets_at:
                    # A window we had not seen, or a newer one: requests still in flight
                    # may be counted against it, so book them conservatively.
                    self._budgets[name] = _WindowBudget(
                        remaining=w.remaining - self._in_flight,
                        resets_at=resets_at,
                        quota=w.quota,
                        window=w.window,
                    )
                # else: a late response from a window that has already ended.

    def block_for(self, seconds: float, window: str | None = None) -> None:
        """After a 429: send nothing for ``seconds`` (``Retry-After``)."""
        with self._lock:
            name = window or "retry-after"
            now = self._clock()
            b = self._budgets.get(name)
            until = now + seconds
            if b is None or b.resets_at < until or b.remaining > 0:
                self._budgets[name] = _WindowBudget(
                    remaining=0,
                    resets_at=until,
                    quota=b.quota if b else None,
                    window=b.window if b else None,
                )

    def acquire(self, sleep: Callable[[float], None] = time.sleep) -> None:
        """Block until a request may be sent, then book it.

        RateLimitError, without sending, when the waits would add up past ``max_wait``.
        """
        waited = 0.0
        while True:
            delay, name = self.try_acquire()
            if delay <= 0:
                return
            self._check_cap(waited, delay, name)
            logger.debug("pacing: window %r exhausted, waiting %.2fs for its reset", name, delay)
            sleep(delay)
            waited += delay

    async def acquire_async(self) -> None:
        """As :meth:`acquire`, for coroutines."""
        waited = 0.0
        while True:
            delay, name = self.try_acquire()
            if delay <= 0:
                return
            self._check_cap(waited, delay, name)
            logger.debug("pacing: window %r exhausted, waiting %.2fs for its reset", name, delay)
            await asyncio.sleep(delay)
            waited += delay

    def _check_cap(self, waited: float, delay: float, name: str | None) -> None:
        # The cap is on the waits of one call in all: windows that are full again and
        # again (a quota the server keeps at nothing) must not hold a call forever.
        if waited + delay > self.max_wait:
            from ccanalytics.errors import RateLimitError

            already = f", after {waited:.0f}s of waiting already," if waited else ""
            raise RateLimitError(
                f"rate limit: the {name!r} window is exhausted for another {delay:.0f}s{already} "
                f"longer than the client may wait ({self.max_wait:.0f}s); no request was sent",
                status=429,
                title="Too Many Requests",
                detail=f"{name} window exhausted (client-side pacing)",
                retry_after=delay,
            )

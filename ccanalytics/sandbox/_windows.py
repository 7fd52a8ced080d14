"""Fixed-window rate limits per API key, announced as the service does.

Every authenticated answer carries ``RateLimit`` (remaining ``r``, seconds to reset
``t``) and ``RateLimit-Policy`` (quota ``q``, window ``w``) for each window; a request
over any quota is refused (429) without being counted.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DEFAULT_RATE_LIMITS", "DOCUMENT_RATE_LIMITS", "RateLimiter"]

#: Window name -> (quota, window seconds). Generous: notebooks never hit them.
DEFAULT_RATE_LIMITS: dict[str, tuple[int, float]] = {
    "minute": (600, 60.0),
    "hour": (20_000, 3600.0),
    "day": (200_000, 86400.0),
}

#: The published document's example policy: the limits of a sandbox on a simulated clock.
DOCUMENT_RATE_LIMITS: dict[str, tuple[int, float]] = {
    "minute": (60, 60.0),
    "hour": (3000, 3600.0),
    "day": (50_000, 86400.0),
}


@dataclass
class _Window:
    quota: int
    seconds: float
    start: float
    used: int = 0


class RateLimiter:
    """Windows of ``limits`` per key, aligned on ``epoch`` (seconds of the app's clock)."""

    def __init__(self, limits: Mapping[str, tuple[int, float]], epoch: float) -> None:
        self.limits = dict(limits)
        self.epoch = epoch
        self._windows: dict[str, dict[str, _Window]] = {}
        self._lock = threading.Lock()

    def count(self, key: str, now: float) -> tuple[bool, dict[str, str], int, str]:
        """Count one request for ``key``; (allowed, headers, retry_after, exceeded window)."""
        with self._lock:
            windows = self._windows.setdefault(key, {})
            state = []
            for name, (quota, seconds) in self.limits.items():
                w = windows.get(name)
                start = self.epoch + seconds * math.floor((now - self.epoch) / seconds)
                if w is None or w.start != start:
                    w = windows[name] = _Window(quota=quota, seconds=seconds, start=start)
                state.append((name, w))
            exceeded = [(n, w) for n, w in state if w.used >= w.quota]
            if not exceeded:
                for _, w in state:
                    w.used += 1
            headers = {
                "RateLimit": ", ".join(
                    f'"{n}";r={max(0, w.quota - w.used)};t={_reset(w, now)}' for n, w in state
                ),
                "RateLimit-Policy": ", ".join(
                    f'"{n}";q={w.quota};w={_num(w.seconds)}' for n, w in state
                ),
            }
        if exceeded:
            name, w = max(exceeded, key=lambda nw: _reset(nw[1], now))
            return False, headers, _reset(w, now), name
        return True, headers, 0, ""


def _reset(w: _Window, now: float) -> int:
    """Whole seconds until the window resets, rounded up (never early)."""
    return max(1, math.ceil(w.start + w.seconds - now))


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3f}"

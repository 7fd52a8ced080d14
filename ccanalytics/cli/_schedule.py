"""A collector's schedule: durations like ``5m``, and whether a schedule fits the rate limits.

A snapshot of ``n`` clusters costs ``n`` requests. Snapshots every ``I`` seconds put
at most ``ceil(w / I)`` snapshots into any window of ``w`` seconds, so a schedule fits
a window with quota ``q`` when ``n * ceil(w / I) <= share * q`` (``--count N`` caps
the snapshots at ``N``). The shortest interval that fits is ``w / floor(share * q / n)``
for the tightest window. The share leaves the rest of each quota to everything else
that uses the same key (reports, notebooks, other collectors).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ccanalytics.api import RateLimitWindow

__all__ = ["budget_refusal", "format_duration", "parse_duration"]

_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(min|[smhd])")


def parse_duration(text: str) -> float:
    """Seconds in ``30s``, ``5m`` (or ``5min``), ``1h``, ``1d`` or a sum like ``1h30m``; else ValueError."""
    spec = text.strip().lower()
    parts = _PART.findall(spec)
    if not spec or "".join(n + u for n, u in parts) != spec:
        raise ValueError(f"{text!r} is not a duration like 30s, 5m, 1h or 1h30m")
    seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise ValueError(f"{text!r}: the interval must be longer than zero")
    return seconds


def format_duration(seconds: float) -> str:
    """``87`` -> ``1m27s``; whole seconds, rounded up."""
    left = math.ceil(seconds)
    out: list[str] = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if left >= size or (unit == "s" and not out):
            out.append(f"{left // size}{unit}")
            left %= size
    return "".join(out)


def _window_text(name: str, window: float) -> str:
    return f"the {name!r} window ({format_duration(window)})"


def budget_refusal(
    windows: Mapping[str, RateLimitWindow],
    clusters: int,
    every: float,
    count: int | None,
    share: float,
) -> str | None:
    """Why snapshots of ``clusters`` every ``every`` seconds overuse a quota; None if they fit.

    Windows without both a quota and a length are not judged (the service did not say).
    """
    over: list[tuple[str, float, int, float]] = []
    shortest = 0.0
    for name, window in windows.items():
        if not window.quota or not window.window:
            continue
        allowed = share * window.quota
        snapshots = math.ceil(window.window / every)
        if count is not None:
            snapshots = min(snapshots, count)
        if clusters * snapshots > allowed:
            over.append((name, window.window, clusters * snapshots, allowed))
        per_window = math.floor(allowed / clusters)
        if per_window == 0:
            return (
                f"one snapshot of {clusters} clusters is {clusters} requests, more than "
                f"{share:.0%} of the {window.quota:,} allowed in {_window_text(name, window.window)}"
                "; collect fewer clusters per run or raise --budget-share"
            )
        shortest = max(shortest, window.window / per_window)
    if not over:
        return None
    name, length, used, allowed = max(over, key=lambda o: o[2] / o[3])
    return (
        f"{clusters} clusters every {format_duration(every)} is {used:,} requests in "
        f"{_window_text(name, length)}, more than {share:.0%} of its quota "
        f"({allowed:,.0f} of {allowed / share:,.0f}); the shortest interval that fits is "
        f"{format_duration(shortest)}"
    )

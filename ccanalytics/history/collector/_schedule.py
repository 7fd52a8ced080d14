"""A collector's schedule: whether it fits the rate limits (see :mod:`._collector`).

A snapshot of ``n`` clusters costs ``n`` requests. Snapshots every ``I`` seconds put
at most ``ceil(w / I)`` snapshots into any window of ``w`` seconds, so a schedule fits
a window with quota ``q`` when ``n * ceil(w / I) <= share * q`` (``--count N`` caps
the snapshots at ``N``). The shortest interval that fits is ``w / floor(share * q / n)``
for the tightest window. The share leaves the rest of each quota to everything else
that uses the same key (reports, notebooks, other collectors).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ccanalytics._durations import format_duration, parse_duration

if TYPE_CHECKING:
    from ccanalytics.api import RateLimitWindow

__all__ = ["budget_refusal", "format_duration", "parse_duration"]

# Re-exported: the CLI and the library read durations with one parser.


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
                "; collect fewer clusters per run or raise the budget share"
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

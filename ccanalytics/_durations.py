"""Durations as people type them (``30s``, ``5m``, ``24h``, ``7d``, ``1h30m``): one parser.

The command line (``--window``, ``--every``) and the library (``History``'s ``since``,
``window`` arguments) read a duration string with :func:`parse_duration`, so what works
on one works on the other. Imports nothing heavy.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta

__all__ = ["describe_duration", "format_duration", "parse_duration"]

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


def describe_duration(span: timedelta) -> str:
    """A span in words for sentences: ``24 h``, ``90 min``, ``7 days``, ``45 s``."""
    seconds = int(span.total_seconds())
    if seconds % 86400 == 0 and seconds >= 7 * 86400:
        return f"{seconds // 86400} days"
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"

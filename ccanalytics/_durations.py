"""Durations as people type them (``30s``, ``90min``, ``24h``, ``7d``, ``1w``, ``1h30m``,
``7 days``): one parser.

The command line (``--window``, ``--every``) and the library (``History``'s ``since``,
``window`` arguments) read a duration string with :func:`parse_duration`, so what works
on one works on the other, and a string that is not one gets :data:`DURATION_FORMS` in
its message from both. Imports nothing heavy.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import Final

__all__ = ["DURATION_FORMS", "describe_duration", "format_duration", "parse_duration"]

#: What a duration may be, in words: every message refusing one says it.
DURATION_FORMS = (
    "a number and a unit: s, m (or min), h, d or w (seconds, minutes, hours, days, weeks), "
    "or a sum such as 1h30m; e.g. 30s, 90min, 24h, 7d, 1w"
)
# Each unit's spellings, short and long; a longer spelling first so the pattern takes it.
_SPELLINGS = {
    1.0: ("seconds", "second", "secs", "sec", "s"),
    60.0: ("minutes", "minute", "mins", "min", "m"),
    3600.0: ("hours", "hour", "hrs", "hr", "h"),
    86400.0: ("days", "day", "d"),
    604800.0: ("weeks", "week", "w"),
}
_UNITS = {word: size for size, words in _SPELLINGS.items() for word in words}
_UNIT = "|".join(sorted(_UNITS, key=len, reverse=True))
# A number, optional blanks, a unit that is not followed by a letter ("7 dayz" is refused).
_PART = re.compile(rf"\s*(\d+(?:\.\d+)?)\s*({_UNIT})(?![a-z])\s*")


#: The longest duration taken: pandas' times end in 2262, and no window spans more.
LONGEST_SECONDS: Final = 100 * 366 * 86400


def parse_duration(text: str) -> float:
    """Seconds in ``30s``, ``5m`` (or ``5min``), ``1h``, ``1d``, ``1w``, their words
    (``7 days``, ``90 minutes``) or a sum like ``1h30m``; else ValueError naming
    :data:`DURATION_FORMS`."""
    spec = text.strip().lower()
    parts = list(_PART.finditer(spec))
    if not spec or "".join(p.group(0) for p in parts) != spec:
        raise ValueError(f"{text!r} is not a duration: {DURATION_FORMS}")
    seconds = sum(float(p.group(1)) * _UNITS[p.group(2)] for p in parts)
    if seconds <= 0:
        raise ValueError(f"{text!r}: the interval must be longer than zero")
    if not seconds <= LONGEST_SECONDS:  # NaN and inf too
        raise ValueError(f"{text!r} is longer than a century: no store spans it")
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

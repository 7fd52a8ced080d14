"""When to retry a request, and how long to wait first.

The policy (constants in :mod:`ccanalytics.api._config`):

- every operation of the API is idempotent (GET, and PUT of a complete set), so
  5xx, timeouts and connection errors are retried up to ``max_retries`` times with
  exponential backoff and jitter: ``INITIAL_RETRY_DELAY * 2**attempt`` capped at
  ``MAX_RETRY_DELAY``, times a random factor in ``[1 - RETRY_JITTER, 1]``;
- a 429 waits ``Retry-After`` (capped by ``MAX_RETRY_AFTER``: a longer wait is not
  attempted, the error is raised), or the backoff when the header is missing;
- anything else (4xx) is final.
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from ccanalytics.api._config import INITIAL_RETRY_DELAY, MAX_RETRY_DELAY, RETRY_JITTER

__all__ = ["backoff_delay", "is_retryable_status", "parse_retry_after"]


def is_retryable_status(status: int) -> bool:
    """429 and every 5xx may succeed later; other statuses will not."""
    return status == 429 or 500 <= status <= 599


def backoff_delay(attempt: int, *, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry number ``attempt + 1`` (``attempt`` counts from 0)."""
    base = min(INITIAL_RETRY_DELAY * (2.0 ** min(attempt, 30)), MAX_RETRY_DELAY)
    return base * (1.0 - RETRY_JITTER * rand())


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds (delta-seconds or an HTTP-date); ``None`` if absent or invalid."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        # float() of the digits, not int(): int() refuses > 4300 digits, and float(int())
        # overflows past 1e308. Such a value means "very long": keep it finite and huge,
        # so the MAX_RETRY_AFTER cap raises instead of waiting.
        return min(float(value), sys.float_info.max)
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    delta = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, delta)

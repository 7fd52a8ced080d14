"""Every policy constant of the client, in one place.

Limits on one call (each can be changed per client, ``Client(deadline=...,
max_response_size=...)``):

- ``timeout`` bounds each network operation (connect, one read, one write, waiting
  for a pooled connection): a server that stops answering is an ``ApiTimeoutError``.
- The *deadline* bounds the whole call: every attempt (connecting, sending, the
  status line and headers, the body) and the backoff pauses between attempts. It
  exists because a server that drips one byte at a time never trips a per-read
  timeout. Waits for the rate limit
  (pacing, ``Retry-After``) are not counted: they have their own caps below. The
  default is derived from the timeout (:func:`default_deadline`): enough for every
  attempt to take twice its timeout and every backoff its longest delay, so it
  never cuts short a call that makes progress at a normal pace.
- ``max_response_size`` bounds one body, decompressed, in bytes: past it the call
  ends in ``ResponseTooLargeError`` and the rest is never read. The default, 512 MiB,
  holds a listing of 100,000 pods of the sandbox's realistic fleet with room to
  spare (153 MB compact, 274 MB pretty-printed with two-space indents, measured with
  ``sandbox.make_cluster_pods``).
"""

from __future__ import annotations

from datetime import timedelta

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "CLOCK_SKEW",
    "DEADLINE_TIMEOUTS_PER_ATTEMPT",
    "DEFAULT_MAX_RESPONSE_SIZE",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "INITIAL_RETRY_DELAY",
    "MAX_PACING_WAIT",
    "MAX_RETRY_AFTER",
    "MAX_RETRY_DELAY",
    "RETRY_JITTER",
    "USER_AGENT",
    "default_deadline",
]

#: Environment variables read when a client is made without arguments.
API_KEY_ENV = "CCANALYTICS_API_KEY"
BASE_URL_ENV = "CCANALYTICS_BASE_URL"

#: Seconds for connect, read, write and pool timeouts.
DEFAULT_TIMEOUT = 30.0
#: Retries after the first attempt, for 429, 5xx, timeouts and connection errors.
DEFAULT_MAX_RETRIES = 3
#: Exponential backoff: INITIAL_RETRY_DELAY * 2**attempt, capped at MAX_RETRY_DELAY.
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
#: Each backoff delay is multiplied by a random factor in [1 - RETRY_JITTER, 1].
RETRY_JITTER = 0.25
#: A ``Retry-After`` longer than this is not waited for: the 429 is raised instead.
MAX_RETRY_AFTER = 120.0
#: Longest wait for a known-exhausted window to reset before raising RateLimitError
#: locally; also the longest one call waits for pacing in all.
MAX_PACING_WAIT = 120.0

#: The default deadline lets each attempt take this many timeouts (body included).
DEADLINE_TIMEOUTS_PER_ATTEMPT = 2
#: Largest response body read, in bytes (after decompression): 512 MiB.
DEFAULT_MAX_RESPONSE_SIZE = 512 * 1024 * 1024

USER_AGENT = "ccanalytics"

#: A service ``Date`` further than this from the local clock is not trusted as the
#: observation time unless the caller trusts the service's clock (see ``_clock``).
#: Minutes, not seconds: NTP keeps honest clocks within milliseconds, and a listing
#: can take a while to arrive.
CLOCK_SKEW = timedelta(minutes=5)


def default_deadline(timeout: float | None, max_retries: int) -> float | None:
    """Seconds one call may take (see the module docstring); ``None`` without a timeout.

    ``(max_retries + 1) * DEADLINE_TIMEOUTS_PER_ATTEMPT * timeout
    + max_retries * MAX_RETRY_DELAY``: with the defaults, 4 * 2 * 30 + 3 * 8 = 264 s.
    """
    if timeout is None:
        return None
    attempts = max_retries + 1
    return attempts * DEADLINE_TIMEOUTS_PER_ATTEMPT * timeout + max_retries * MAX_RETRY_DELAY

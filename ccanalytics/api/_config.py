"""Every policy constant of the client, in one place."""

from __future__ import annotations

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "INITIAL_RETRY_DELAY",
    "MAX_PACING_WAIT",
    "MAX_RETRY_AFTER",
    "MAX_RETRY_DELAY",
    "RETRY_JITTER",
    "USER_AGENT",
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
#: Longest wait for a known-exhausted window to reset before raising RateLimitError locally.
MAX_PACING_WAIT = 120.0

USER_AGENT = "ccanalytics"

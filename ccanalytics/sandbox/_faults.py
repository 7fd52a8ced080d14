"""Injected faults: rules that make the sandbox misbehave as real services and proxies do."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FAULT_KINDS", "Fault"]

#: Fault kinds understood by the app (``reset``/``slow``/``truncate`` act on the wire).
FAULT_KINDS = frozenset(
    {
        "status",  # answer with ``status`` and a problem+json body
        "html",  # answer with ``status`` (default 502) and an HTML page, as a proxy does
        "empty",  # answer with ``status`` and no body
        "invalid_json",  # 200 with a body that is not JSON
        "wrong_content_type",  # 200 with the right JSON labelled text/html
        "wrong_shape",  # 200 with valid JSON of the wrong shape
        "malformed_ratelimit",  # normal response, RateLimit headers that do not parse
        "exhausted_ratelimit",  # normal response announcing r=0 for ``seconds``
        "rate_limited",  # 429 with Retry-After ``seconds`` (persistent with times=None)
        "leak_credentials",  # registry response wrongly includes username/password
        "reset",  # close the connection without a response
        "slow",  # wait ``seconds`` before answering
        "truncate",  # send a Content-Length larger than the body, then close
    }
)


@dataclass
class Fault:
    """A fault rule: ``kind`` applies to requests whose path starts with ``path``.

    ``times`` is how many matching requests it affects (``None``: all of them).
    """

    kind: str
    times: int | None = 1
    path: str = "/"
    status: int = 502
    seconds: float = 1.0
    method: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; known: {sorted(FAULT_KINDS)}")

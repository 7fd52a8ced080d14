"""The sandbox API itself: a pure request -> response function with state.

:class:`SandboxApp` knows nothing of sockets; :mod:`._server` serves it over
loopback HTTP and in process. It implements the three operations of the spec,
bearer auth with scoped keys, RFC 9457 problem+json errors (405 with ``Allow``;
415 for a PUT that is not ``application/json``, 413 past :data:`MAX_BODY_BYTES`,
400 for bodies that are not JSON or nest too deeply, 422 for the PUT body's schema),
and the fixed-window rate limits of :mod:`._windows`, announced with
``RateLimit``/``RateLimit-Policy`` on every authenticated answer and ``Retry-After``
on 429.

On a :class:`SimulatedClock` the listing is the timeline fleet of :mod:`._timeline`
at the clock's time, every answer carries that time as ``Date`` and the windows
count simulated seconds. Faults (:mod:`._faults`) apply to the first ``times``
matching requests (or all), and the app counts every request in
:attr:`SandboxApp.stats`.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import unquote

from ccanalytics.keys.api_rule import API_KEY_PATTERN, matches_api_pattern
from ccanalytics.sandbox._clock import SimulatedClock, http_date
from ccanalytics.sandbox._data import SandboxData, make_data
from ccanalytics.sandbox._faults import FAULT_KINDS, Fault
from ccanalytics.sandbox._problems import (
    SandboxResponse,
    not_allowed,
    problem,
    title,
)
from ccanalytics.sandbox._timeline import SpendJump, Timeline
from ccanalytics.sandbox._weekly import WeeklyFleet
from ccanalytics.sandbox._windows import DEFAULT_RATE_LIMITS, DOCUMENT_RATE_LIMITS, RateLimiter

__all__ = [
    "DEFAULT_RATE_LIMITS",
    "DOCUMENT_RATE_LIMITS",
    "EXEMPT_KEY",
    "FAULT_KINDS",
    "FULL_ACCESS_KEY",
    "LIMITED_KEY",
    "MAX_BODY_BYTES",
    "NO_ACCESS_KEY",
    "Fault",
    "SandboxApp",
    "SandboxResponse",
    "validate_update_ssh_keys",
]

#: Bearer keys the sandbox accepts. The full key reads and writes everything.
FULL_ACCESS_KEY = "sbx-full-access-key"
#: A valid key with no permission at all: every operation is 403.
NO_ACCESS_KEY = "sbx-no-access-key"
#: A key scoped to reading the clusters in ``SandboxApp.limited_clusters`` only.
LIMITED_KEY = "sbx-limited-key"
#: A full-access key that is exempt from rate limiting (no RateLimit headers).
EXEMPT_KEY = "sbx-exempt-key"

#: The largest request body the sandbox reads (bytes); a larger one is a 413.
MAX_BODY_BYTES = 1 << 20

_PODS = re.compile(r"^/v2/clusters/([^/]*)/pods$")
_REGISTRY = re.compile(r"^/v2/registries/([^/]*)$")
_SSH_KEYS = "/v2/account/ssh-keys"


@dataclass
class SandboxApp:
    """The API v2, in memory. Thread-safe; see the module docstring.

    Without ``clock`` it serves the fixed snapshot fleet (``data``) and counts rate
    limits on the real monotonic clock. With a :class:`SimulatedClock` it serves the
    timeline fleet of ``seed`` at ``clock.now()``, stamps every response with a
    ``Date`` header of that clock and counts rate-limit windows on it (aligned on
    UTC minutes, hours and days).
    """

    data: SandboxData = field(default_factory=make_data)
    #: Window name -> (quota, seconds). Default: :data:`DEFAULT_RATE_LIMITS`, or
    #: :data:`DOCUMENT_RATE_LIMITS` on a simulated clock.
    rate_limits: Mapping[str, tuple[int, float]] | None = None
    #: Seconds the server (or transport) waits before answering each request.
    latency: float = 0.0
    faults: list[Fault] = field(default_factory=list)
    limited_clusters: frozenset[str] = frozenset({"cl-infer-prod", "cl-etl-cpu"})
    #: Accepted bearer keys -> scope: ``full``, ``none`` (403), ``limited``, ``exempt``.
    api_keys: Mapping[str, str] = field(
        default_factory=lambda: {
            FULL_ACCESS_KEY: "full",
            NO_ACCESS_KEY: "none",
            LIMITED_KEY: "limited",
            EXEMPT_KEY: "exempt",
        }
    )
    #: A :class:`SimulatedClock` (the fleet lives in time), or a function returning
    #: monotonic seconds for rate limits only (the default: ``time.monotonic``).
    clock: SimulatedClock | Callable[[], float] | None = None
    #: Seeds the timeline fleet's noise: same seed, same history.
    seed: int = 0
    #: On a simulated clock: from this instant cl-research-dev also runs a forgotten
    #: 8x H100 pod, idle, 23.92 USD/h (a budget story for notebooks and tests).
    forgotten_pod_at: datetime | None = None
    #: On a simulated clock: spend jumps, each a burst of pods in one cluster for a while
    #: (:class:`~ccanalytics.sandbox.SpendJump`: the story for spend anomalies).
    spend_jumps: Sequence[SpendJump] = ()
    #: On a simulated clock: an office fleet that follows the week, busy on working days,
    #: quiet at night, at weekends and on its holidays
    #: (:class:`~ccanalytics.sandbox.WeeklyFleet`: the story for seasonal forecasts).
    weekly: WeeklyFleet | None = None
    #: How many of the newest requests :attr:`requests` keeps (about 240 bytes each).
    #: Bounded so that a sandbox serving a collector for months does not grow with
    #: every request; ``stats`` and ``statuses`` still count every request.
    request_log_size: int = 1_000

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._timeline: Timeline | None = None
        self._seconds: Callable[[], float] = time.monotonic
        if isinstance(self.clock, SimulatedClock):
            self._timeline = Timeline(
                self.seed,
                self.clock.start,
                self.forgotten_pod_at,
                tuple(self.spend_jumps),
                self.weekly,
            )
            self._seconds = self.clock.timestamp
        elif self.clock is not None:
            self._seconds = self.clock
        if self.rate_limits is None:
            simulated = self._timeline is not None
            self.rate_limits = dict(DOCUMENT_RATE_LIMITS if simulated else DEFAULT_RATE_LIMITS)
        # Simulated windows align on UTC (POSIX epoch); real ones on the app's start.
        epoch = 0.0 if self._timeline is not None else self._seconds()
        self._limiter = RateLimiter(self.rate_limits, epoch)
        #: Requests received, by ``"METHOD path"``, and by status answered.
        self.stats: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()
        #: The newest requests as (seconds, method, path, status), oldest first.
        self.requests: deque[tuple[float, str, str, int]] = deque(maxlen=self.request_log_size)

    # -- public helpers -----------------------------------------------------------

    def add_fault(self, kind: str, **kw: Any) -> Fault:
        """Add a fault rule (see :data:`FAULT_KINDS`) and return it."""
        fault = Fault(kind, **kw)
        with self._lock:
            self.faults.append(fault)
        return fault

    def count(self, method: str, path: str) -> int:
        """How many requests the server received for ``method path``."""
        return self.stats[f"{method} {path}"]

    def now(self) -> datetime | None:
        """The simulated time, or None when the app has no simulated clock."""
        return self.clock.now() if isinstance(self.clock, SimulatedClock) else None

    def cluster_ids(self) -> list[str]:
        """The clusters that exist now (on a simulated clock: the timeline's)."""
        if self._timeline is not None and isinstance(self.clock, SimulatedClock):
            return self._timeline.cluster_ids(self.clock.now())
        return list(self.data.clusters)

    def secrets(self) -> list[str]:
        """Every secret value served now (pod env, registry credentials): for leak scans.

        All of them start with :data:`SECRET_PREFIX`, at any time of the timeline.
        """
        out = self.data.secrets()
        if self._timeline is not None and isinstance(self.clock, SimulatedClock):
            out += self._timeline.secrets(self.clock.now())
        return out

    def cluster_pods(self, cluster_id: str) -> list[dict[str, Any]] | None:
        """The cluster's pods as served now (None: no such cluster)."""
        return self._pods(cluster_id, self.now())

    def _pods(self, cluster_id: str, when: datetime | None) -> list[dict[str, Any]] | None:
        if self._timeline is not None and when is not None:
            return self._timeline.pods(cluster_id, when)
        return self.data.clusters.get(cluster_id)

    # -- request handling ---------------------------------------------------------

    def handle(
        self, method: str, raw_path: str, headers: Mapping[str, str], body: bytes
    ) -> SandboxResponse:
        """Answer one request. ``raw_path`` is the percent-encoded path (query ignored)."""
        path = raw_path.split("?", 1)[0]
        # One instant per request: the listing, the windows and the Date agree.
        now, when = self._seconds(), self.now()
        with self._lock:
            self.stats[f"{method} {path}"] += 1
            fault = self._take_fault(method, path)
        response = self._dispatch(method, path, headers, body, fault, now, when)
        return self._record(now, when, method, path, response)

    def reject(
        self,
        method: str,
        raw_path: str,
        status: int,
        detail: str,
        headers: Mapping[str, str] | None = None,
    ) -> SandboxResponse:
        """A problem+json answer to a request the server could not even read.

        For requests refused before :meth:`handle` (a bad ``Content-Length``, a body
        too large): stamped and counted like any other answer, and, when ``headers``
        carry a valid rate-limited key, counted against its windows and announced.
        """
        path = raw_path.split("?", 1)[0]
        now = self._seconds()
        with self._lock:
            self.stats[f"{method} {path}"] += 1
        response = problem(status, title(status), detail)
        key = _bearer(headers or {})
        if key is not None and self.api_keys.get(key) not in (None, "exempt"):
            response.headers.update(self._limiter.count(key, now)[1])
        return self._record(now, self.now(), method, path, response)

    def _record(
        self, now: float, when: datetime | None, method: str, path: str, response: SandboxResponse
    ) -> SandboxResponse:
        if when is not None:
            response.headers["Date"] = http_date(when)
        with self._lock:
            self.statuses[response.status] += 1
            self.requests.append((now, method, path, response.status))
        return response

    def _take_fault(self, method: str, path: str) -> Fault | None:
        for fault in self.faults:
            if fault.times == 0 or not path.startswith(fault.path):
                continue
            if fault.method and fault.method != method:
                continue
            if fault.times is not None:
                fault.times -= 1
            return fault
        return None

    def _dispatch(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: bytes,
        fault: Fault | None,
        now: float,
        when: datetime | None = None,
    ) -> SandboxResponse:
        if fault and fault.kind in ("reset", "slow", "truncate"):
            inner = self._dispatch(method, path, headers, body, None, now, when)
            inner.wire_fault = fault
            return inner
        if fault and fault.kind == "html":
            page = (
                f"<html><head><title>{fault.status} Bad Gateway</title></head><body>"
                f"<center><h1>{fault.status} Bad Gateway</h1></center><hr>"
                "<center>nginx/1.25.3</center></body></html>"
            ).encode()
            return SandboxResponse(fault.status, {"Content-Type": "text/html"}, page)
        if fault and fault.kind == "empty":
            return SandboxResponse(fault.status, {"Content-Length": "0"}, b"")
        if fault and fault.kind == "status":
            return problem(fault.status, title(fault.status), "injected fault")

        key = _bearer(headers)
        if key is None:
            return problem(401, "Unauthorized", "missing bearer token")
        scope = self.api_keys.get(key)
        if scope is None:
            return problem(401, "Unauthorized", "invalid bearer token")

        rl_headers: dict[str, str] = {}
        if scope != "exempt":
            allowed, rl_headers, retry_after, window = self._limiter.count(key, now)
            if fault and fault.kind == "rate_limited":
                allowed, retry_after, window = False, math.ceil(fault.seconds), "minute"
            if not allowed:
                resp = problem(
                    429, "Too Many Requests", f"rate limit exceeded for the {window} window"
                )
                resp.headers.update(rl_headers)
                resp.headers["Retry-After"] = str(retry_after)
                return resp
        if fault and fault.kind == "malformed_ratelimit":
            rl_headers = {"RateLimit": 'minute;r=oops, "hour";r=-3;t=', "RateLimit-Policy": "{{"}
        if fault and fault.kind == "exhausted_ratelimit":
            w = math.ceil(fault.seconds)
            rl_headers = {
                "RateLimit": f'"minute";r=0;t={w}',
                "RateLimit-Policy": f'"minute";q=60;w={max(w, 60)}',
            }

        response = self._route(method, path, scope, body, fault, when, headers)
        response.headers.update(rl_headers)
        return response

    def _route(
        self,
        method: str,
        path: str,
        scope: str,
        body: bytes,
        fault: Fault | None,
        when: datetime | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> SandboxResponse:
        if path == _SSH_KEYS:
            if method != "PUT":
                return not_allowed(method, "PUT")
            if scope in ("none", "limited"):
                return problem(403, "Forbidden", "access denied")
            return self._put_ssh_keys(body, fault, headers or {})
        if m := _PODS.match(path):
            if method != "GET":
                return not_allowed(method, "GET")
            cluster_id = unquote(m.group(1))
            if scope == "none":
                return problem(403, "Forbidden", "access denied")
            pods = self._pods(cluster_id, when)
            if pods is None:
                return problem(404, "Not Found", "resource not found")
            if scope == "limited" and cluster_id not in self.limited_clusters:
                return problem(403, "Forbidden", "access denied")
            return self._ok({"pods": pods}, fault)
        if m := _REGISTRY.match(path):
            if method != "GET":
                return not_allowed(method, "GET")
            if scope in ("none", "limited"):
                return problem(403, "Forbidden", "access denied")
            reg = self.data.registries.get(unquote(m.group(1)))
            if reg is None:
                return problem(404, "Not Found", "resource not found")
            shown = dict(reg)
            if not (fault and fault.kind == "leak_credentials"):
                shown.pop("username", None)
                shown.pop("password", None)
            return self._ok(shown, fault)
        return problem(404, "Not Found", "resource not found")

    def _put_ssh_keys(
        self, body: bytes, fault: Fault | None, headers: Mapping[str, str]
    ) -> SandboxResponse:
        # Checked before anything is parsed: a refused PUT changes nothing.
        ctype = _header(headers, "content-type") or ""
        media = ctype.split(";", 1)[0].strip().lower()
        if media != "application/json":  # the document's only request media type
            shown = repr(media[:60]) if media else "none"
            return problem(
                415, "Unsupported Media Type", f"the body must be application/json, not {shown}"
            )
        if len(body) > MAX_BODY_BYTES:
            return problem(413, "Content Too Large", f"the body exceeds {MAX_BODY_BYTES} bytes")
        try:
            payload = json.loads(body)
        except RecursionError:  # json's C parser recurses per nesting level
            return problem(400, "Bad Request", "request body is nested too deeply")
        except (ValueError, UnicodeDecodeError):
            return problem(400, "Bad Request", "request body is not valid JSON")
        errors = validate_update_ssh_keys(payload)
        if errors:
            return problem(422, "Unprocessable Entity", "Request validation failed.", errors)
        with self._lock:
            self.data.ssh_keys = list(payload["keys"])
            keys = list(self.data.ssh_keys)
        return self._ok({"keys": keys}, fault)

    def _ok(self, payload: Any, fault: Fault | None) -> SandboxResponse:
        body = json.dumps(payload, separators=(",", ":")).encode()
        ctype = "application/json"
        if fault and fault.kind == "invalid_json":
            body = body[: max(1, len(body) // 2)] + b"<!-- cut -->"
        elif fault and fault.kind == "wrong_content_type":
            ctype = "text/html; charset=utf-8"
        elif fault and fault.kind == "wrong_shape":
            body = b'["not", "an", "object"]'
        return SandboxResponse(200, {"Content-Type": ctype}, body)


def validate_update_ssh_keys(payload: Any) -> list[str]:
    """The server's JSON-Schema check of UpdateSshKeysRequest, as ``"<json path>: <message>"``."""
    if not isinstance(payload, dict):
        return [f"$: must be an object, not {_json_type(payload)}"]
    errors = [f"$.{k}: additional property is not allowed" for k in payload if k != "keys"]
    if "keys" not in payload:
        errors.append("$: required property 'keys' is missing")
    elif not isinstance(payload["keys"], list):
        errors.append(f"$.keys: must be an array, not {_json_type(payload['keys'])}")
    else:
        for i, key in enumerate(payload["keys"]):
            if not isinstance(key, str):
                errors.append(f"$.keys[{i}]: must be a string, not {_json_type(key)}")
            elif not matches_api_pattern(key):
                errors.append(f'$.keys[{i}]: does not match pattern "{API_KEY_PATTERN}"')
    return errors


def _header(headers: Mapping[str, str], name: str) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == name), None)


def _bearer(headers: Mapping[str, str]) -> str | None:
    value = _header(headers, "authorization")
    if not value:
        return None
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _json_type(value: Any) -> str:
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
        type(None): "null",
    }.get(type(value), type(value).__name__)

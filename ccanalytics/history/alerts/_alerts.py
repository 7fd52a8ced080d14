"""Alerts that reach people once per change, survive crashes, and can be snoozed.

``check`` remembers, in ``STORE/check-state.json``, the last state of every alert (an
alert is a set of thresholds, or one policy threshold for one cluster) and every snooze.
The rules, each written here once:

- **Edge-triggered.** A message is sent when an alert goes from fine to breached or
  back, never while it stays; an alert never seen before counts as fine.
- **One message per change, even with overlapping runs.** The whole read, decide, post,
  write sequence holds an exclusive lock (``fcntl.flock`` on ``STORE/.check-state.lock``),
  so three checks started together send one message, and two checks with different
  thresholds never lose each other's state.
- **Nothing is posted that cannot be remembered.** The new state is written (atomically,
  :meth:`~ccanalytics.history.store._fs.Location.replace`) *before* the POST, marked ``notified: false``,
  and marked ``true`` after it succeeds; a state that cannot be written raises
  :class:`~ccanalytics.errors.StoreError` before anything is sent, and a failed POST is
  retried by the next run. On a read-only store nothing is ever posted twice.
- **A total deadline** bounds each POST (:data:`POST_DEADLINE` seconds), whatever the
  receiver does (a byte a second included).
- **Budgets warn before they breach.** An alert with tiers (a budget of a rule with
  ``warn_at``) also sends one message per tier and period, escalating: a warning at
  each ``warn_at`` share of the limit it passes, the breach message at the limit, and
  never a lower tier after a higher one in the same period (a jump past two tiers sends
  the higher only). A new period starts again: the tiers, and the breach message, are
  sent afresh. Breached to fine is still one "fine again" message. The state keeps the
  highest tier announced and its period (``warned``, ``warned_period``) beside the
  alert's state; a state file written before tiers reads as announced up to the state
  it holds (a breach it holds is not sent again).
- **Snoozes** silence one rule until a time, with who and why if given; a snoozed
  breach is still judged and printed, marked snoozed, but posts nothing until the snooze
  ends (then, if still breached, the change is sent).
- **A state file ccanalytics did not write** (not JSON, nested too deep, wrong types) is
  a :class:`StoreError` naming it; it is never overwritten, so nothing is lost.

The webhook URL is a secret: it is never written to the state, printed or logged.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from os import PathLike
from pathlib import PurePath
from typing import Any, Final

from ccanalytics.errors import StoreError
from ccanalytics.history.store import Location, open_store

__all__ = [
    "LOCK_FILE",
    "POST_DEADLINE",
    "STATE_FILE",
    "Alert",
    "AlertState",
    "Snooze",
    "notify_on_change",
    "post_message",
    "read_state",
    "snooze",
    "webhook_problem",
]

#: The file in the store's folder that remembers every alert's last state and every snooze.
STATE_FILE: Final = "check-state.json"
#: The lock serializing every read-modify-write of the state, across processes.
LOCK_FILE: Final = ".check-state.lock"
#: Seconds one POST may take in all (connect, send, every byte of the answer).
POST_DEADLINE: Final = 15.0
_STATE_VERSION: Final = 2
_STATES: Final = ("fine", "breached")


@dataclass(frozen=True)
class Snooze:
    """One rule silenced until ``until`` (aware UTC), by ``who``, because ``why``."""

    rule: str
    until: datetime
    who: str | None = None
    why: str | None = None
    since: datetime | None = None

    def active(self, now: datetime) -> bool:
        return now < self.until

    def describe(self) -> str:
        by = f" by {self.who}" if self.who else ""
        because = f": {self.why}" if self.why else ""
        return f"snoozed until {self.until:%Y-%m-%d %H:%M} UTC{by}{because}"


@dataclass(frozen=True)
class Alert:
    """What one alert says now: its key, whether breached, the text and where it goes."""

    key: str
    breached: bool
    text: str
    url: str | None = field(default=None, repr=False)  #: secret: never stored or shown
    rule: str | None = None  #: the policy rule, for snoozes
    #: A budget with tiers: the tier reached now (1.0 breached, a warn_at share, or 0.0);
    #: None: no tiers, the edge-triggered rule alone.
    tier: float | None = None
    period: str | None = None  #: with ``tier``: the period it is judged in (its start)


@dataclass
class AlertState:
    """The state file's content: per alert its last state, and the snoozes by rule."""

    alerts: dict[str, dict[str, Any]] = field(default_factory=dict)
    snoozes: dict[str, Snooze] = field(default_factory=dict)

    def active_snooze(self, rule: str | None, now: datetime) -> Snooze | None:
        found = self.snoozes.get(rule) if rule is not None else None
        return found if found is not None and found.active(now) else None

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": _STATE_VERSION,
                "alerts": self.alerts,
                "snoozes": {
                    rule: {
                        "until": s.until.isoformat(),
                        "who": s.who,
                        "why": s.why,
                        "since": s.since.isoformat() if s.since else None,
                    }
                    for rule, s in sorted(self.snoozes.items())
                },
            },
            indent=2,
            sort_keys=True,
        )


def read_state(store: str | PathLike[str]) -> AlertState:
    """The state as saved (unlocked: for showing it; writers use :func:`_locked`)."""
    location = open_store(store)
    return _read(location, location.root / STATE_FILE)


def snooze(
    store: str | PathLike[str],
    rule: str,
    *,
    until: datetime | None = None,
    duration: timedelta | None = None,
    who: str | None = None,
    why: str | None = None,
    now: datetime | None = None,
) -> Snooze:
    """Silence ``rule`` until ``until`` (or for ``duration`` from ``now``); recorded in the state."""
    moment = _aware(now) if now is not None else datetime.now(UTC)
    if (until is None) == (duration is None):
        raise ValueError("give until= or duration=, not both and not neither")
    end = _aware(until) if until is not None else moment + duration  # type: ignore[operator]
    if end <= moment:
        raise ValueError("a snooze must end in the future")
    entry = Snooze(rule, end, who or None, why or None, moment)
    with _locked(open_store(store)) as (state, save):
        state.snoozes[rule] = entry
        save()
    return entry


@dataclass(frozen=True)
class Outcome:
    """What :func:`notify_on_change` did: keys posted, (key, reason) whose POST failed, keys snoozed."""

    sent: tuple[str, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    snoozed: tuple[str, ...] = ()


def notify_on_change(
    store: str | PathLike[str],
    alerts: Sequence[Alert],
    *,
    now: datetime | None = None,
    post: Callable[[str, str], str | None] | None = None,
) -> Outcome:
    """Post each alert whose state changed (see the module's rules), and remember it.

    ``post(url, text)`` returns None when sent, else the reason it failed (default:
    :func:`post_message`). An alert without a URL is remembered, never posted.
    """
    moment = _aware(now) if now is not None else datetime.now(UTC)
    send = post if post is not None else post_message
    sent: list[str] = []
    failed: list[tuple[str, str]] = []
    snoozed: list[str] = []
    with _locked(open_store(store)) as (state, save):
        due = _due(state, alerts, moment, snoozed)
        if not due:
            return Outcome(snoozed=tuple(snoozed))
        save()  # the new states first: if they cannot be kept, nothing is sent
        for alert in due:
            reason = send(alert.url, alert.text) if alert.url is not None else None
            if reason is not None:
                failed.append((alert.key, reason))
                continue
            state.alerts[alert.key]["notified"] = True
            if alert.url is not None:
                sent.append(alert.key)
        save()
    return Outcome(tuple(sent), tuple(failed), tuple(snoozed))


def _due(
    state: AlertState, alerts: Sequence[Alert], now: datetime, snoozed: list[str]
) -> list[Alert]:
    """Update ``state`` to the alerts' states; the alerts that owe a message now."""
    due = []
    for alert in alerts:
        new = "breached" if alert.breached else "fine"
        entry = state.alerts.get(alert.key, {"state": "fine", "notified": True})
        if entry["state"] != new:
            kept: dict[str, Any] = {k: entry[k] for k in ("warned", "warned_period") if k in entry}
            entry = {"state": new, "since": now.isoformat(), "notified": False, **kept}
            state.alerts[alert.key] = entry
        if alert.tier is not None:
            _escalate(entry, alert)
            state.alerts[alert.key] = entry
        if entry.get("notified", True):
            continue
        if state.active_snooze(alert.rule, now) is not None:
            snoozed.append(alert.key)  # owed, and sent once the snooze ends
            continue
        due.append(alert)
    return due


def _escalate(entry: dict[str, Any], alert: Alert) -> None:
    """A tier above the highest announced in this period owes a message (a new period
    announced nothing yet); a lower one is kept quiet."""
    level = 1.0 if alert.breached else float(alert.tier or 0.0)
    if "warned_period" not in entry and entry.get("notified", True):
        # A state from before tiers: a breach it holds was announced, this period.
        entry["warned_period"] = alert.period
        entry["warned"] = 1.0 if entry["state"] == "breached" else 0.0
    same_period = entry.get("warned_period") == alert.period
    announced = float(entry.get("warned", 0.0)) if same_period else 0.0
    if level > announced:
        entry.update(warned=level, warned_period=alert.period, notified=False)


def webhook_problem(url: str) -> str | None:
    """Why ``url`` cannot be a webhook (never quoting it), or None when it can."""
    if not url.startswith(("https://", "http://")):
        return "the webhook URL must start with https:// or http://"
    if any(ord(c) <= 32 or ord(c) == 127 for c in url):
        return "the webhook URL holds a space or a control character (a stray \\r?)"
    import httpx

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return "the webhook URL is not a valid URL"
    return None if parsed.host else "the webhook URL has no host"


def post_message(url: str, text: str, *, deadline: float = POST_DEADLINE) -> str | None:
    """POST ``{"text": text}`` (Slack-compatible) to ``url`` within ``deadline`` seconds in all.

    None when the receiver accepted it (2xx); else why not, in words that never quote
    the URL (``"HTTP 500"``, ``"ConnectError"``, ``"no answer within 15 s"``).
    """
    import asyncio

    import httpx

    async def send() -> None:
        async with httpx.AsyncClient(timeout=deadline) as client:
            response = await client.post(url, json={"text": text})
            response.raise_for_status()

    try:
        asyncio.run(asyncio.wait_for(send(), timeout=deadline))
    except httpx.HTTPStatusError as err:
        return f"HTTP {err.response.status_code}"
    except TimeoutError:
        return f"no answer within {deadline:g} s"
    except httpx.InvalidURL:  # webhook_problem is checked first; never a traceback anyway
        return "the webhook URL is not a valid URL"
    except (httpx.HTTPError, OSError) as err:
        return type(err).__name__
    return None


# --------------------------------------------------------------------------- the file


@contextlib.contextmanager
def _locked(store: Location) -> Iterator[tuple[AlertState, Callable[[], None]]]:
    """The state under the store's exclusive lock, and a function that saves it."""
    if not store.exists():
        raise StoreError(
            f"the store {store.show(store.root)} is not a folder", store.at(store.root)
        )
    path = store.root / STATE_FILE
    where = store.at(path)
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(store.lock(LOCK_FILE))
        except OSError as err:
            raise StoreError(f"cannot lock {where}: {err.strerror or err}", where) from None
        state = _read(store, path)

        def save() -> None:
            text = state.to_json()
            try:
                store.replace(path, lambda sink: sink.write(text.encode("utf-8")))
            except OSError as err:
                raise StoreError(
                    f"cannot save the alert state {where}: {err.strerror or err}", where
                ) from None

        yield state, save


def _read(store: Location, path: PurePath) -> AlertState:
    where = store.at(path)
    try:
        text = store.read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        return AlertState()
    except (OSError, UnicodeDecodeError) as err:
        raise StoreError(f"cannot read the alert state {where}: {err}", where) from None
    try:
        return _parse(json.loads(text))
    except (ValueError, TypeError, KeyError, RecursionError, OverflowError) as err:
        raise StoreError(
            f"{where} is not an alert state ccanalytics wrote ({type(err).__name__}: "
            f"{str(err)[:80]}); move it aside to start afresh",
            where,
        ) from None


def _parse(data: Any) -> AlertState:
    if not isinstance(data, dict):
        raise TypeError("the state is not a JSON object")
    if "version" not in data:  # version 1: {check key: {"state": ..., "since": ...}}
        data = {"version": _STATE_VERSION, "alerts": data, "snoozes": {}}
    alerts = _mapping(data.get("alerts", {}), "alerts")
    for key, entry in alerts.items():
        entry = _mapping(entry, f"alert {key!r}")
        if entry.get("state") not in _STATES:
            raise ValueError(f"alert {key!r} has no state fine or breached")
        entry["notified"] = bool(entry.get("notified", True))
        if not isinstance(entry.get("warned", 0.0), int | float) or not isinstance(
            entry.get("warned_period", ""), str | None
        ):
            raise TypeError(f"alert {key!r} has a tier that is not a number and a period")
    snoozes = {
        str(rule): _snooze(str(rule), _mapping(entry, f"snooze {rule!r}"))
        for rule, entry in _mapping(data.get("snoozes", {}), "snoozes").items()
    }
    return AlertState({str(k): dict(v) for k, v in alerts.items()}, snoozes)


def _snooze(rule: str, entry: Mapping[str, Any]) -> Snooze:
    def text(name: str) -> str | None:
        value = entry.get(name)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"snooze {rule!r}: {name} is not text")
        return value

    until = text("until")
    if until is None:
        raise ValueError(f"snooze {rule!r} has no until")
    since = text("since")
    return Snooze(
        rule,
        _aware(datetime.fromisoformat(until)),
        text("who"),
        text("why"),
        _aware(datetime.fromisoformat(since)) if since else None,
    )


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"{what} is not a JSON object")
    return value


def _aware(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive time means UTC."""
    if isinstance(moment, datetime) and moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)

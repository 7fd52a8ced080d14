"""A policy file for ``check``: budgets and thresholds per cluster or glob, each routed.

A policy is TOML, read with the standard library's :mod:`tomllib`::

    [defaults]                          # optional: what every rule inherits
    window = "1h"                       # the span of max_idle_cost, max_stragglers, max_idle_cost_share
    idle_threshold = 10                 # the rules' thresholds (ccanalytics.measures.Params),
    straggler_z = 3.5                   # here or per rule: every figure is judged at them
    min_gap = 10
    chronic_share = 0.5
    notify_env = "SLACK_WEBHOOK_URL"    # where alerts go: the NAME of an environment variable...

    [[rule]]
    name = "inference"                  # optional; the default is the clusters pattern
    clusters = ["cl-infer-*"]           # ids or shell globs (fnmatch); default "*"
    max_spend = { day = 400, month = 9000 }      # USD so far in the UTC day/ISO week/month
    max_projected_spend = { month = 10000 }      # USD by the period's end (History.spend)
    max_idle_cost = 25                  # USD on idle GPUs over the window
    max_stragglers = 0                  # ranks flagged in at least chronic_share of the snapshots
    max_idle_cost_share = 0.25          # idle cost / total cost over the window, 0 to 1
    warn_at = [0.5, 0.8]                # budgets warn at these shares of their limits first
    forecast = "p90"                    # projections: "linear" (the burn-rate line, the
                                        # default), "p50" or "p90" of the seasonal forecast
    max_spend_anomaly_z = 3.5           # the latest hour's spend against the same hour of past weeks
    may_match_nothing = false           # true: a pattern matching no cluster is no error
    notify = "https://hooks.example.com/T000/B000/XXXX"   # ...or a URL (kept out of output)

The keys are the registry's (:data:`ccanalytics.measures.MEASURES`: each measure with a
policy key); ``max_idle_share``, the old spelling of ``max_idle_cost_share``, still reads
with a DeprecationWarning. Every threshold is judged per cluster the rule matches: one :class:`Threshold` per rule,
figure and period, one :class:`Judgement` per threshold and cluster. A malformed policy
(a TOML error, an unknown key, a negative or non-numeric threshold, a bad window, an
unset ``notify_env`` variable) raises :class:`~ccanalytics.errors.PolicyError` naming the
file, the line and the key, before anything is judged. A pattern of ``clusters`` that
matches no cluster of the store (a typo checks nothing) is named in the judged
:class:`~ccanalytics.history.alerts._judge.PolicyReport`'s ``unmatched``, unless the rule
says ``may_match_nothing = true`` (a cluster not collected yet).

``warn_at`` (shares of the limit, each in (0, 1), increasing) makes each budget of the
rule (``max_spend``: of the spend so far; ``max_projected_spend``: of the projection)
warn before it breaches: one message per tier and period, escalating (see
:mod:`ccanalytics.history.alerts._alerts`). A rule with ``warn_at`` and no budget is a
PolicyError: there would be nothing to warn of. The webhook URL is a secret: no
message, repr or state built here holds it.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from itertools import pairwise
from os import PathLike
from pathlib import Path
from typing import Any, Final

from ccanalytics._durations import parse_duration
from ccanalytics._tomlfile import Locator
from ccanalytics.errors import PolicyError
from ccanalytics.history.alerts._alerts import webhook_problem
from ccanalytics.measures import (
    MEASURES,
    THRESHOLDS,
    Params,
    by_policy_key,
    deprecated,
    policy_keys,
)

__all__ = ["FIGURES", "Policy", "Rule", "Threshold", "load_policy", "parse_policy"]

#: A policy key (the registry's ``Measure.policy_key``).
Figure = str
#: The thresholds a rule may set: the registry's policy keys (periodic ones per period).
FIGURES: Final[tuple[Figure, ...]] = policy_keys()
_PERIODIC: Final = tuple(m.policy_key for m in MEASURES if m.periodic and m.policy_key)
_OLD_KEYS: Final = {old: m.policy_key for m in MEASURES for old in m.old_policy_keys}
_PERIODS: Final = ("day", "week", "month")
_ROUTES: Final = ("notify", "notify_env")
#: The rules' thresholds a rule (or [defaults]) may set: the registry's policy key -> its
#: Params field.
_PARAMS: Final = {t.policy_key: t.name for t in THRESHOLDS}
_WARN_AT: Final = "warn_at"
_MAY_MATCH_NOTHING: Final = "may_match_nothing"
_FORECAST: Final = "forecast"
#: What ``max_projected_spend`` judges: History.spend's ``projected`` (the line) or a
#: quantile of its seasonal forecast (``projected_p50``, ``projected_p90``).
FORECASTS: Final = ("linear", "p50", "p90")
_RULE_KEYS: Final = (
    "name",
    _FORECAST,
    "clusters",
    _MAY_MATCH_NOTHING,
    "window",
    _WARN_AT,
    *_ROUTES,
    *_PARAMS,
    *FIGURES,
    *_OLD_KEYS,
)
_DEFAULT_KEYS: Final = ("window", _FORECAST, *_ROUTES, *_PARAMS)
DEFAULT_WINDOW: Final = timedelta(hours=1)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Threshold:
    """One limit of one rule: ``figure`` (and ``period`` for spend) above ``limit`` breaches."""

    rule: str
    figure: Figure
    limit: float
    period: str | None = None  #: "day", "week" or "month" for the spend figures

    @property
    def key(self) -> str:
        """A stable name for the state file and ``--snooze``: ``rule/figure[.period]``."""
        suffix = f".{self.period}" if self.period else ""
        return f"{self.rule}/{self.figure}{suffix}"


@dataclass(frozen=True)
class Rule:
    """One ``[[rule]]`` table: which clusters, which thresholds, over which window, routed where."""

    name: str
    clusters: tuple[str, ...]
    window: timedelta
    thresholds: tuple[Threshold, ...]
    notify: _Route | None = field(default=None, repr=False)
    #: The rules' thresholds every figure of this rule is judged at.
    params: Params = field(default_factory=Params)
    #: Shares of each budget's limit (increasing, each in (0, 1)) that warn first.
    warn_at: tuple[float, ...] = ()
    #: Judged once over every cluster together (``check``'s flags), not per cluster; a
    #: spend anomaly, a cluster's own, is still judged per cluster.
    pooled: bool = False
    #: Whether a pattern of ``clusters`` may match no cluster of the store (else it is
    #: reported: a typo would check nothing).
    may_match_nothing: bool = False
    #: What a projected budget judges: ``"linear"`` (the burn-rate line), ``"p50"`` or
    #: ``"p90"`` (History.spend's seasonal forecast).
    forecast: str = "linear"

    def webhook(self) -> str | None:
        """The URL alerts of this rule are POSTed to (read now; ``None``: print only)."""
        return None if self.notify is None else self.notify.url()


@dataclass(frozen=True)
class _Route:
    """Where alerts go; ``repr`` never shows a URL."""

    env: str | None
    literal: str | None = field(default=None, repr=False)

    def url(self) -> str | None:
        if self.literal is not None:
            return self.literal
        return os.environ.get(self.env) if self.env else None

    def __repr__(self) -> str:
        return f"<webhook from ${self.env}>" if self.env else "<webhook from the policy file>"


@dataclass(frozen=True)
class Policy:
    """A parsed policy file: its rules in file order."""

    path: Path | None
    rules: tuple[Rule, ...]

    def rule(self, name: str) -> Rule:
        """The rule called ``name``; :class:`PolicyError` naming the rules there are otherwise."""
        for rule in self.rules:
            if rule.name == name:
                return rule
        raise PolicyError(
            f"no rule {name!r} in the policy (rules: {', '.join(self.names())})", path=self.path
        )

    def names(self) -> list[str]:
        return [rule.name for rule in self.rules]


def load_policy(path: str | PathLike[str]) -> Policy:
    """Read and check the policy file at ``path``; :class:`PolicyError` on any fault."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else type(err).__name__
        raise PolicyError(f"{source}: cannot read the policy: {reason}", path=source) from None
    return parse_policy(text, path=source)


def parse_policy(text: str, *, path: Path | None = None) -> Policy:
    """Check the TOML ``text`` of a policy; :class:`PolicyError` names the line and key."""
    where = _Locator(text, path)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise where.error(None, f"not valid TOML: {err}") from None
    where.unknown_keys(document, ("defaults", "rule"), None, "the top level")
    defaults = _table(document.get("defaults", {}), where, "defaults", None)
    where.unknown_keys(defaults, _DEFAULT_KEYS, None, "[defaults]")
    tables = document.get("rule", [])
    if not isinstance(tables, list) or not tables:
        raise where.error(None, "a policy needs at least one [[rule]] table", key="rule")
    rules = tuple(_rule(table, number, defaults, where) for number, table in enumerate(tables, 1))
    _unique_names(rules, where)
    return Policy(path, rules)


def _rule(table: Any, number: int, defaults: Mapping[str, Any], where: _Locator) -> Rule:
    table = _table(table, where, "rule", number)
    where.unknown_keys(table, _RULE_KEYS, number, f"[[rule]] {number}")
    clusters = _clusters(table.get("clusters", "*"), where, number)
    name = table.get("name", ", ".join(clusters))
    if not isinstance(name, str) or not name.strip() or "/" in name:
        raise where.error(number, "name must be a non-empty string without '/'", key="name")
    window = _window(table.get("window", defaults.get("window")), where, number)
    thresholds = _thresholds(table, name, where, number)
    if not thresholds:
        raise where.error(
            number, f"the rule sets no threshold (one of {', '.join(FIGURES)})", key="rule"
        )
    route = _route({**_only(defaults, _ROUTES), **_only(table, _ROUTES)}, where, number)
    params = _params(
        {**_only(defaults, tuple(_PARAMS)), **_only(table, tuple(_PARAMS))}, where, number
    )
    warn_at = _warn_at(table.get(_WARN_AT), thresholds, where, number)
    may_match_nothing = table.get(_MAY_MATCH_NOTHING, False)
    if not isinstance(may_match_nothing, bool):
        raise where.error(
            number, f"{_MAY_MATCH_NOTHING} must be true or false", key=_MAY_MATCH_NOTHING
        )
    forecast = table.get(_FORECAST, defaults.get(_FORECAST, "linear"))
    if forecast not in FORECASTS:
        raise where.error(
            number,
            f"forecast must be one of {', '.join(map(repr, FORECASTS))}, not {forecast!r}",
            key=_FORECAST,
        )
    return Rule(
        name,
        clusters,
        window,
        thresholds,
        route,
        params,
        warn_at,
        may_match_nothing=may_match_nothing,
        forecast=str(forecast),
    )


def _warn_at(
    value: Any, thresholds: Sequence[Threshold], where: _Locator, number: int
) -> tuple[float, ...]:
    """The warning tiers: shares of the limit in (0, 1), increasing; for a rule with a budget."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in value
    ):
        raise where.error(
            number, "warn_at must be a list of shares of the limit, like [0.5, 0.8]", _WARN_AT
        )
    if not all(0 < v < 1 for v in value):
        raise where.error(
            number,
            f"warn_at: each share must be between 0 and 1 (exclusive), not {value}",
            _WARN_AT,
        )
    if any(later <= earlier for earlier, later in pairwise(value)):
        raise where.error(number, f"warn_at must increase, not {value}", _WARN_AT)
    if not any(t.period is not None for t in thresholds):
        raise where.error(
            number,
            f"warn_at warns of budgets: the rule sets none ({', '.join(_PERIODIC)})",
            _WARN_AT,
        )
    return tuple(float(v) for v in value)


def _params(values: Mapping[str, Any], where: _Locator, number: int) -> Params:
    given = {}
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise where.error(number, f"{key} must be a number, not {value!r}", key=key)
        given[_PARAMS[key]] = value
    try:
        return Params(**given)
    except ValueError as err:
        named = next((k for k in values if _PARAMS[k] in str(err)), None)
        raise where.error(number, str(err), key=named) from None


def _thresholds(
    table: Mapping[str, Any], rule: str, where: _Locator, number: int
) -> tuple[Threshold, ...]:
    found: list[Threshold] = []
    table = _current_keys(table, where, number)
    for figure in FIGURES:
        if figure not in table:
            continue
        value = table[figure]
        measure = by_policy_key(figure)
        if figure in _PERIODIC:
            per_period = _table(value, where, figure, number)
            where.unknown_keys(per_period, _PERIODS, number, figure)
            for period in _PERIODS:
                if period in per_period:
                    limit = _limit(per_period[period], figure, where, number, key=period)
                    found.append(Threshold(rule, figure, limit, period))
        else:
            limit = _limit(value, figure, where, number)
            if measure.fmt == "share" and limit > 1:
                raise where.error(number, f"{figure} is a fraction from 0 to 1", key=figure)
            if measure.fmt == "count" and limit != int(limit):
                raise where.error(number, f"{figure} is a whole number", key=figure)
            found.append(Threshold(rule, figure, limit))
    return tuple(found)


def _current_keys(table: Mapping[str, Any], where: _Locator, number: int) -> dict[str, Any]:
    """``table`` with each old spelling of a key read as its new one (DeprecationWarning)."""
    current = dict(table)
    for old, new in _OLD_KEYS.items():
        if old in current:
            if new in current:
                raise where.error(number, f"give {new} only ({old} is its old spelling)", key=old)
            deprecated(
                f"{where.place()}: the policy key {old} is now {new} "
                "(the old spelling goes in the next release)"
            )
            current[str(new)] = current.pop(old)
    return current


def _limit(value: Any, figure: str, where: _Locator, number: int, key: str | None = None) -> float:
    shown = f"{figure}.{key}" if key else figure
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise where.error(number, f"{shown} must be a number, not {value!r}", key=key or figure)
    if value < 0:
        raise where.error(number, f"{shown} must be 0 or more, not {value}", key=key or figure)
    return float(value)


def _clusters(value: Any, where: _Locator, number: int) -> tuple[str, ...]:
    patterns = [value] if isinstance(value, str) else value
    if (
        not isinstance(patterns, list)
        or not patterns
        or not all(isinstance(p, str) and p.strip() for p in patterns)
    ):
        raise where.error(
            number, "clusters must be an id or glob, or a list of them", key="clusters"
        )
    return tuple(p.strip() for p in patterns)


def _window(value: Any, where: _Locator, number: int) -> timedelta:
    if value is None:
        return DEFAULT_WINDOW
    if not isinstance(value, str):
        raise where.error(number, f"window must be a duration like '1h', not {value!r}", "window")
    try:
        return timedelta(seconds=parse_duration(value))
    except ValueError as err:
        raise where.error(number, str(err), key="window") from None


def _route(values: Mapping[str, Any], where: _Locator, number: int) -> _Route | None:
    if "notify" in values and "notify_env" in values:
        raise where.error(number, "give notify or notify_env, not both", key="notify_env")
    if "notify" in values:
        url = values["notify"]
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            # Never quote the value: it may be a real webhook URL with a typo.
            raise where.error(number, "notify must be an http(s) URL", key="notify")
        if problem := webhook_problem(url):
            raise where.error(number, f"notify: {problem}", key="notify")
        return _Route(env=None, literal=url)
    if "notify_env" in values:
        name = values["notify_env"]
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise where.error(number, "notify_env must name an environment variable", "notify_env")
        if not os.environ.get(name):
            raise where.error(
                number, f"the environment variable {name} (notify_env) is not set", "notify_env"
            )
        # Checked now, not at the first POST: a CRLF env file's stray "\r" is bad usage.
        if problem := webhook_problem(os.environ[name]):
            raise where.error(number, f"{name} (notify_env): {problem}", key="notify_env")
        return _Route(env=name)
    return None


def _unique_names(rules: Sequence[Rule], where: _Locator) -> None:
    seen: set[str] = set()
    for number, rule in enumerate(rules, 1):
        if rule.name in seen:
            raise where.error(number, f"two rules are called {rule.name!r}", key="name")
        seen.add(rule.name)


def _table(value: Any, where: _Locator, key: str, number: int | None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise where.error(number, f"{key} must be a table", key=key)
    return value


def _only(values: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {k: values[k] for k in keys if k in values}


class _Locator(Locator[PolicyError]):
    """The policy's lines: :class:`ccanalytics._tomlfile.Locator` over ``[[rule]]`` tables."""

    def __init__(self, text: str, path: Path | None) -> None:
        super().__init__(text, path, table="rule", error=PolicyError, what="the policy")

"""Thresholds judged over the recent history in a store: what ``ccanalytics check`` runs.

:func:`check_store` turns the flags (a window and limits, each a registry policy key:
``max_idle_cost``, ``max_stragglers``, ``max_memory_risk_pod_hours``, ...) into an
in-memory policy of one pooled rule, judged by the very code that judges a policy file
(:func:`~ccanalytics.history.alerts._judge.judge_policy`) over the store's clusters
together, and returns a :class:`CheckResult`: the window's figures, and the judge's
sentence per breached limit, ready for a cron mail or a chat message. The figures are
History's, so a check and a report over the same window agree to the cent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from os import PathLike
from typing import TYPE_CHECKING, Any

from ccanalytics._durations import describe_duration
from ccanalytics.history.alerts._alerts import Alert
from ccanalytics.measures import Params, by_policy_key, format_share, threshold

if TYPE_CHECKING:
    from ccanalytics.errors import CheckOutputError
    from ccanalytics.history.alerts._alerts import Outcome
    from ccanalytics.history.alerts._judge import PolicyReport
    from ccanalytics.history.alerts._policy import Policy

__all__ = [
    "FLAGS_RULE",
    "CheckResult",
    "CheckRun",
    "check",
    "check_arguments",
    "check_policy",
    "check_store",
    "describe_duration",
    "flags_policy",
    "format_share",
]


@dataclass(frozen=True)
class CheckResult:
    """The outcome of :func:`check_store`: the window, its figures, and any breaches."""

    start: Any  #: pandas.Timestamp (UTC): the window's start
    end: Any  #: pandas.Timestamp (UTC): the newest snapshot, the window's end
    window: timedelta
    idle_cost: float  #: USD in the window (History.idle_cost, by=None)
    total_cost: float  #: USD in the window
    unobserved_hours: float  #: cluster-hours of the window no snapshot covers
    stragglers: list[tuple[str, int, float]] = field(default_factory=list)
    #: (cluster_id, rank, share) of ranks flagged in >= STRAGGLER_SHARE of snapshots
    breaches: list[str] = field(default_factory=list)  #: one sentence per breached threshold
    #: pandas.Timestamp: the window's first snapshot (later than ``start`` when the
    #: history is younger than the window, or collection stopped for a while)
    observed_from: Any = None
    #: cluster-hours of the window snapshots cover; 0 is a result ("no data in the
    #: window": a young store, or the first snapshot after an outage), not a failure
    observed_hours: float | None = None
    #: the share of its snapshots a rank straggles in to count (Params.chronic_share)
    chronic_share: float = 0.5
    #: the flags' limits as judged (one pooled rule, :data:`FLAGS_RULE`): each figure, its
    #: limit and its sentence; None when no limit was given
    report: PolicyReport | None = None

    @property
    def breached(self) -> bool:
        """Whether any threshold is breached."""
        return bool(self.breaches)

    def alert(self, key: str, url: str | None) -> Alert:
        """This result as one alert (state ``key``), for :func:`notify_on_change`."""
        if self.breached:
            text = "ccanalytics check: breached. " + " ".join(self.breaches)
        else:
            text = "ccanalytics check: fine again. " + self.summary()
        return Alert(key, self.breached, text, url)

    def summary(self) -> str:
        """One sentence on the window, breached or not, saying how much of it was observed."""
        state = f"{len(self.breaches)} threshold(s) breached" if self.breached else "all fine"
        covered = ""
        if self.observed_hours == 0:
            covered = "; no data in the window: no two snapshots cover any of it"
        elif self.observed_from is not None and self.observed_from > self.start:
            seen = (self.end - self.observed_from).to_pytimedelta()
            covered = f"; snapshots cover only {describe_duration(seen)} of it"
        return (
            f"Over the last {describe_duration(self.window)} "
            f"(to {self.end:%Y-%m-%d %H:%M} UTC{covered}): "
            f"{self.total_cost:,.2f} USD spent, {self.idle_cost:,.2f} USD on idle GPUs, "
            f"{len(self.stragglers)} straggling rank(s); {state}."
        )


def check_store(
    store: str | PathLike[str],
    *,
    window: timedelta = timedelta(hours=1),
    max_idle_cost: float | None = None,
    max_stragglers: int | None = None,
    params: Params | None = None,
    limits: Mapping[str, Any] | None = None,
) -> CheckResult:
    """Judge the limits over the ``window`` that ends at the store's newest snapshot.

    ``limits``: policy key (:func:`ccanalytics.measures.policy_keys`) -> limit, as a
    policy rule sets them (a periodic one, ``max_spend``, takes ``{"day": 400}``), judged
    over every cluster together (a spend anomaly per cluster); ``max_idle_cost`` (USD)
    and ``max_stragglers`` (ranks flagged in at least ``params.chronic_share`` of their
    snapshots) are two of them. ``params`` (:class:`ccanalytics.measures.Params`) are the
    rules' thresholds. A limit left ``None`` is not judged. Raises
    :class:`~ccanalytics.errors.StoreError` when the store holds no snapshot (nothing
    can be judged: the collector may have stopped) or cannot be read, and
    :class:`~ccanalytics.errors.PolicyError` for a limit a policy would refuse.
    """
    import pandas as pd

    from ccanalytics.errors import StoreError
    from ccanalytics.history.alerts._judge import judge_policy
    from ccanalytics.history.queries import History, catalog_of

    if window <= timedelta(0):
        raise ValueError("the window must be a positive duration")
    judged_by = params if params is not None else Params()
    given = _limits(max_idle_cost, max_stragglers, limits)
    with History(store) as history, catalog_of(history).one_listing(listed=True):
        start, _ = history.window_bounds(window)
        if start is None:
            raise StoreError(f"the store {history.store} holds no snapshot", history.store)
        totals = history.idle_cost(window, by=None, params=judged_by).iloc[0]
        first = (
            catalog_of(history)
            .query(
                "SELECT min(observed_at) AS t FROM pods WHERE observed_at >= $start",
                {"start": start.to_pydatetime()},
            )["t"]
            .iloc[0]
        )
        slow = history.stragglers(window, min_share=judged_by.chronic_share, params=judged_by)
        judged = judge_policy(flags_policy(window, given, judged_by), history) if given else None
    stragglers = [
        (str(cluster_id), int(rank), float(share))
        for cluster_id, rank, share in zip(
            slow["cluster_id"],
            slow["rank"].astype("int64"),
            slow["share"].astype(float),
            strict=True,
        )
    ]
    return CheckResult(
        start=start,
        end=start + window,  # the newest snapshot
        window=window,
        idle_cost=float(totals["idle_cost"]),
        total_cost=float(totals["total_cost"]),
        unobserved_hours=float(totals["unobserved_hours"]),
        observed_hours=float(totals["observed_hours"]),
        stragglers=stragglers,
        chronic_share=judged_by.chronic_share,
        observed_from=None if pd.isna(first) else pd.Timestamp(first).tz_convert("UTC"),
        breaches=[] if judged is None else judged.lines(),
        report=judged,
    )


#: The name of the flags' rule in their sentences and alert keys.
FLAGS_RULE = "flags"


def _limits(
    max_idle_cost: float | None, max_stragglers: int | None, limits: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Every limit given, by policy key (the two named ones among them)."""
    given = {k: v for k, v in (limits or {}).items() if v is not None}
    for key, value in (("max_idle_cost", max_idle_cost), ("max_stragglers", max_stragglers)):
        if value is not None:
            given[key] = value
    return given


def flags_policy(window: timedelta, limits: Mapping[str, Any], params: Params) -> Policy:
    """The flags as a policy: one rule over every cluster together, read by the policy's
    own parser (so a flag's limit is checked as a policy key is)."""
    from dataclasses import replace

    from ccanalytics._durations import format_duration
    from ccanalytics.history.alerts._policy import parse_policy

    lines = [f'name = "{FLAGS_RULE}"', f'window = "{format_duration(window.total_seconds())}"']
    for key, value in limits.items():
        if isinstance(value, Mapping):
            inner = ", ".join(f"{period} = {_toml_number(v)}" for period, v in value.items())
            lines.append(f"{key} = {{ {inner} }}")
        else:
            lines.append(f"{key} = {_toml_number(value)}")
    policy = parse_policy("[[rule]]\n" + "\n".join(lines) + "\n")
    (rule,) = policy.rules
    return replace(policy, rules=(replace(rule, params=params, pooled=True),))


def _toml_number(value: Any) -> str:
    """A limit as TOML writes it (a non-number as a string, which the parser refuses)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if value != value or value in (float("inf"), float("-inf")):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    return repr(value)


def check_policy(
    store: str | PathLike[str], policy: Policy, *, at: Any = None, now: Any = None
) -> PolicyReport:
    """Judge every threshold of ``policy`` over the store, with the rules' active snoozes.

    ``at``: judge the history as of that instant (default: the newest snapshot).
    ``now``: the wall-clock time snoozes are compared with (default: the local clock).
    Raises :class:`~ccanalytics.errors.StoreError` when the store holds no snapshot.
    """
    from datetime import UTC, datetime

    from ccanalytics.errors import StoreError
    from ccanalytics.history.alerts._alerts import read_state
    from ccanalytics.history.alerts._judge import judge_policy
    from ccanalytics.history.queries import History, catalog_of

    # Opened for this check: its opening listing is the one the judgements read.
    with History(store) as history, catalog_of(history).one_listing(listed=True):
        report = judge_policy(policy, history, at=at)
        folder = history.store
    if report.now is None:
        raise StoreError(f"the store {folder} holds no snapshot", folder)
    moment = now if now is not None else datetime.now(UTC)
    state = read_state(folder)
    snoozes = {
        j.key: found
        for j in report.judgements
        if (found := state.active_snooze(j.threshold.rule, moment)) is not None
    }
    return report.with_snoozes(snoozes)


@dataclass(frozen=True)
class CheckRun:
    """Everything one :func:`check` did: the judgements, the textfile, the notifications.

    ``thresholds`` holds the flags' figures (None when no flag threshold was given) and
    ``policy`` the policy's judgements with their snoozes (None without a policy).
    ``textfile_error`` is the :class:`~ccanalytics.errors.CheckOutputError` the
    textfile met (the alerts were still sent); ``notified`` what the webhooks were told.
    """

    thresholds: CheckResult | None = None
    policy: PolicyReport | None = None
    notified: Outcome | None = None
    textfile_error: CheckOutputError | None = None

    @property
    def breached(self) -> bool:
        """Whether any threshold is breached, snoozed or not."""
        return (self.thresholds is not None and self.thresholds.breached) or (
            self.policy is not None and bool(self.policy.breaches)
        )

    @property
    def all_snoozed(self) -> bool:
        """Breached, but every breach belongs to a snoozed rule (the flags never snooze)."""
        if not self.breached or (self.thresholds is not None and self.thresholds.breached):
            return False
        return self.policy is not None and not self.policy.unsnoozed_breaches


def check(
    store: str | PathLike[str],
    *,
    window: timedelta = timedelta(hours=1),
    max_idle_cost: float | None = None,
    max_stragglers: int | None = None,
    policy: Policy | str | PathLike[str] | None = None,
    notify: str | None = None,
    textfile: str | PathLike[str] | None = None,
    textfile_labels: Mapping[str, str] | None = None,
    now: datetime | None = None,
    post: Callable[[str, str], str | None] | None = None,
    params: Params | None = None,
    limits: Mapping[str, Any] | None = None,
) -> CheckRun:
    """Judge a store as ``ccanalytics check`` does, write the textfile, notify on change.

    The flags (``window``, ``max_idle_cost``, ``max_stragglers`` and any other policy
    key in ``limits``) are judged by :func:`check_store` when a limit is given, at
    ``params``'s thresholds (the CLI's ``--idle-threshold``, ``--memory-threshold``, ...;
    a policy's rules set theirs in the file); ``policy`` (a :class:`Policy` or a
    TOML file) by :func:`check_policy`. ``textfile`` (with a policy) receives the judged
    figures for node_exporter, each sample labelled with its source (``textfile_labels``,
    by default ``store=`` the store's name: :func:`~._textfile.source_labels`); a textfile that cannot be written is kept in
    :attr:`CheckRun.textfile_error` rather than raised, so that the alerts still go out.
    Every alert with a route (the rule's webhook, else ``notify``) is posted by
    :func:`notify_on_change` when its state changed; ``now`` and ``post`` are passed to
    it. Raises :class:`~ccanalytics.errors.PolicyError` for a bad policy,
    :class:`~ccanalytics.errors.ArgumentsError` (a ``ValueError``) for a bad ``notify``
    URL (never echoed: a webhook URL is a secret), no threshold at all, a threshold of
    ``params`` that no limit given is judged at, or a textfile without a policy
    (:func:`check_arguments`), and :class:`~ccanalytics.errors.StoreError` when the
    store cannot be read, holds no snapshot, or the alert state cannot be saved.
    """
    from ccanalytics.errors import CheckOutputError
    from ccanalytics.history.alerts._alerts import notify_on_change
    from ccanalytics.history.alerts._policy import Policy, load_policy
    from ccanalytics.history.alerts._textfile import source_labels, write_textfile

    given = _limits(max_idle_cost, max_stragglers, limits)
    check_arguments(limits=given, params=params, policy=policy, notify=notify, textfile=textfile)
    labels = source_labels(store, textfile_labels)
    rules = policy if isinstance(policy, Policy) or policy is None else load_policy(policy)

    alerts: list[Alert] = []
    thresholds = judged = None
    textfile_error = None
    if given:
        thresholds = check_store(store, window=window, params=params, limits=given)
        alerts.append(thresholds.alert(_flags_key(window, given, params), notify))
    if rules is not None:
        judged = check_policy(store, rules, now=now)
        if textfile is not None:
            try:
                write_textfile(textfile, judged, judged.snoozed, labels)
            except CheckOutputError as err:
                textfile_error = err
        alerts += judged.alerts(rules, notify)
    notified = None
    if any(alert.url for alert in alerts):
        notified = notify_on_change(store, alerts, now=now, post=post)
    return CheckRun(thresholds, judged, notified, textfile_error)


def check_arguments(
    *,
    limits: Mapping[str, Any],
    params: Params | None,
    policy: object,
    notify: str | None,
    textfile: object,
) -> None:
    """Raise :class:`~ccanalytics.errors.ArgumentsError` for arguments of :func:`check`
    that do not go together, or a ``notify`` URL that cannot be one (never echoed: a
    webhook URL is a secret). The one home of these rules: ``ccanalytics check`` spells
    the same errors with its flags (each limit and threshold by its policy key)."""
    from ccanalytics.errors import ArgumentsError
    from ccanalytics.history.alerts._alerts import webhook_problem

    if policy is None and not limits:
        raise ArgumentsError(
            "give at least one threshold ({max_idle_cost}, {max_stragglers}, ...) or {policy}",
            "max_idle_cost",
            "max_stragglers",
            "policy",
        )
    _every_threshold_judges(limits, params, policy is not None)
    if textfile is not None and policy is None:
        raise ArgumentsError(
            "{textfile} writes the figures a {policy} judges: give {policy}", "textfile", "policy"
        )
    if notify is not None and (problem := webhook_problem(notify)):
        escaped = problem.replace("{", "{{").replace("}", "}}")
        raise ArgumentsError("{notify}: " + escaped, "notify", python={"notify": "notify"})


def _every_threshold_judges(
    limits: Mapping[str, Any], params: Params | None, with_policy: bool
) -> None:
    """A threshold set away from its default must judge one of the limits given: the
    flags' thresholds judge the flags' limits only (a policy sets its own in the file)."""
    from ccanalytics.errors import ArgumentsError
    from ccanalytics.measures import MEASURES

    if params is None:
        return
    read = {name for key in limits for name in by_policy_key(key).params}
    defaults = Params()
    for name, value in params.asdict().items():
        if value == getattr(defaults, name) or name in read:
            continue
        key = threshold(name).policy_key
        judged = [str(m.policy_key) for m in MEASURES if m.policy_key and name in m.params]
        template = "{" + key + "} judges " + ", ".join("{" + k + "}" for k in judged)
        template += ": give one of them"
        if with_policy:
            template += (
                f" (a {{policy}} sets its own thresholds in the file: {key} = {value:g} "
                "in [defaults] or in a rule)"
            )
        names = (key, *judged, *(["policy"] if with_policy else []))
        raise ArgumentsError(template, *names, python={key: f"params.{name}"})


def _flags_key(window: timedelta, limits: Mapping[str, Any], params: Params | None = None) -> str:
    """The alert state the flags keep: each set of window and thresholds its own (the
    idle-cost and straggler limits at the default thresholds keep the key they always had)."""
    key = (
        f"window={window.total_seconds():g}s "
        f"max-idle-cost={limits.get('max_idle_cost')} "
        f"max-stragglers={limits.get('max_stragglers')}"
    )
    for name, value in limits.items():
        if name not in ("max_idle_cost", "max_stragglers"):
            key += f" {name.replace('_', '-')}={value}"
    if params is not None and params != Params():
        changed = {k: v for k, v in params.sql().items() if v != Params().sql()[k]}
        key += "".join(f" {k.replace('_', '-')}={v:g}" for k, v in changed.items())
    return key

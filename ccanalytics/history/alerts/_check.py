"""Thresholds judged over the recent history in a store: what ``ccanalytics check`` runs.

:func:`check_store` opens the store, takes the window ending at its newest snapshot,
asks :class:`~ccanalytics.history.History` for the idle cost and the stragglers in it,
and returns a :class:`CheckResult`: the figures, and one plain sentence per breached
threshold, ready for a cron mail or a chat message. The figures are History's, so a
check and a report over the same window agree to the cent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from os import PathLike
from typing import TYPE_CHECKING, Any

from ccanalytics._durations import describe_duration
from ccanalytics.history.alerts._alerts import Alert
from ccanalytics.measures import Params, format_share

if TYPE_CHECKING:
    from ccanalytics.errors import CheckOutputError
    from ccanalytics.history.alerts._alerts import Outcome
    from ccanalytics.history.alerts._judge import PolicyReport
    from ccanalytics.history.alerts._policy import Policy

__all__ = [
    "CheckResult",
    "CheckRun",
    "check",
    "check_arguments",
    "check_policy",
    "check_store",
    "describe_duration",
    "format_share",
]

#: How many ranks or clusters a sentence names before it says "and N more".
NAMED_IN_SENTENCE = 5


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
) -> CheckResult:
    """Judge the thresholds over the ``window`` that ends at the store's newest snapshot.

    ``max_idle_cost`` (USD): breached when idle GPUs cost more than this in the window.
    ``max_stragglers``: breached when more ranks than this straggled in at least
    ``params.chronic_share`` (half) of their snapshots in the window. ``params``
    (:class:`ccanalytics.measures.Params`) are the rules' thresholds (idle line,
    straggler ``z`` and ``min_gap``), as a policy rule's. A threshold left ``None`` is
    not judged. Raises
    :class:`~ccanalytics.errors.StoreError` when the store holds no snapshot (nothing
    can be judged: the collector may have stopped) or cannot be read.
    """
    import pandas as pd

    from ccanalytics.errors import StoreError
    from ccanalytics.history.queries._history import History, catalog_of

    if window <= timedelta(0):
        raise ValueError("the window must be a positive duration")
    with History(store) as history:
        start, _ = history.window_bounds(window)
        if start is None:
            raise StoreError(f"the store {history.store} holds no snapshot", history.store)
        judged_by = params if params is not None else Params()
        totals = history.idle_cost(window, by=None, params=judged_by).iloc[0]
        first = (
            catalog_of(history)
            .query(
                "SELECT min(observed_at) AS t FROM pods WHERE observed_at >= $start",
                {"start": start.to_pydatetime()},
            )["t"]
            .iloc[0]
        )
        per_cluster = history.idle_cost(window, by="cluster", params=judged_by)
        slow = history.stragglers(window, min_share=judged_by.chronic_share, params=judged_by)
    end = start + window  # the newest snapshot
    stragglers = [
        (str(cluster_id), int(rank), float(share))
        for cluster_id, rank, share in zip(
            slow["cluster_id"],
            slow["rank"].astype("int64"),
            slow["share"].astype(float),
            strict=True,
        )
    ]
    result = CheckResult(
        start=start,
        end=end,
        window=window,
        idle_cost=float(totals["idle_cost"]),
        total_cost=float(totals["total_cost"]),
        unobserved_hours=float(totals["unobserved_hours"]),
        observed_hours=float(totals["observed_hours"]),
        stragglers=stragglers,
        chronic_share=judged_by.chronic_share,
        observed_from=None if pd.isna(first) else pd.Timestamp(first).tz_convert("UTC"),
    )
    breaches = []
    if max_idle_cost is not None and result.idle_cost > max_idle_cost:
        breaches.append(_idle_sentence(result, max_idle_cost, per_cluster))
    if max_stragglers is not None and len(stragglers) > max_stragglers:
        breaches.append(_stragglers_sentence(result, max_stragglers))
    return CheckResult(**{**result.__dict__, "breaches": breaches})


def _idle_sentence(result: CheckResult, limit: float, per_cluster: Any) -> str:
    share = result.idle_cost / result.total_cost if result.total_cost > 0 else 0.0
    worst = per_cluster[per_cluster["idle_cost"] > 0.005].sort_values(
        ["idle_cost", "cluster_id"], ascending=[False, True]
    )
    named = [
        f"{row.cluster_id} {row.idle_cost:,.2f} USD"
        for row in worst.head(NAMED_IN_SENTENCE).itertuples(index=False)
    ]
    more = len(worst) - len(named)
    where = ", ".join(named) + (f" and {more} more cluster(s)" if more > 0 else "")
    return (
        f"Idle GPUs cost {result.idle_cost:,.2f} USD in the last "
        f"{describe_duration(result.window)}, over the limit of {limit:,.2f} USD "
        f"({format_share(share)} of {result.total_cost:,.2f} USD spent): {where}."
    )


def _stragglers_sentence(result: CheckResult, limit: int) -> str:
    named = [
        f"{cluster_id} rank {rank} ({share:.0%})"
        for cluster_id, rank, share in result.stragglers[:NAMED_IN_SENTENCE]
    ]
    more = len(result.stragglers) - len(named)
    ranks = ", ".join(named) + (f" and {more} more" if more > 0 else "")
    count = len(result.stragglers)
    return (
        f"{count} rank{'s' if count != 1 else ''} straggled in at least "
        f"{'half' if result.chronic_share == 0.5 else format_share(result.chronic_share)} "
        "of the snapshots "
        f"of the last {describe_duration(result.window)}, over the limit of {limit}: {ranks}."
    )


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
    from ccanalytics.history.queries._history import History, catalog_of

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
) -> CheckRun:
    """Judge a store as ``ccanalytics check`` does, write the textfile, notify on change.

    The flags (``window``, ``max_idle_cost``, ``max_stragglers``) are judged by
    :func:`check_store` when a threshold is given, at ``params``'s thresholds (the
    CLI's ``--idle-threshold``, ``--straggler-z``, ``--min-gap``, ``--chronic-share``; a
    policy's rules set theirs in the file); ``policy`` (a :class:`Policy` or a
    TOML file) by :func:`check_policy`. ``textfile`` (with a policy) receives the judged
    figures for node_exporter, each sample labelled with its source (``textfile_labels``,
    by default ``store=`` the store's name: :func:`~._textfile.source_labels`); a textfile that cannot be written is kept in
    :attr:`CheckRun.textfile_error` rather than raised, so that the alerts still go out.
    Every alert with a route (the rule's webhook, else ``notify``) is posted by
    :func:`notify_on_change` when its state changed; ``now`` and ``post`` are passed to
    it. Raises :class:`~ccanalytics.errors.PolicyError` for a bad policy,
    :class:`~ccanalytics.errors.ArgumentsError` (a ``ValueError``) for a bad ``notify``
    URL (never echoed: a webhook URL is a secret), no threshold at all or a textfile
    without a policy (:func:`check_arguments`), and :class:`~ccanalytics.errors.StoreError` when the store cannot
    be read, holds no snapshot, or the alert state cannot be saved.
    """
    from ccanalytics.errors import CheckOutputError
    from ccanalytics.history.alerts._alerts import notify_on_change
    from ccanalytics.history.alerts._policy import Policy, load_policy
    from ccanalytics.history.alerts._textfile import source_labels, write_textfile

    check_arguments(
        max_idle_cost=max_idle_cost,
        max_stragglers=max_stragglers,
        policy=policy,
        notify=notify,
        textfile=textfile,
    )
    labels = source_labels(store, textfile_labels)
    flags = max_idle_cost is not None or max_stragglers is not None
    rules = policy if isinstance(policy, Policy) or policy is None else load_policy(policy)

    alerts: list[Alert] = []
    thresholds = judged = None
    textfile_error = None
    if flags:
        thresholds = check_store(
            store,
            window=window,
            max_idle_cost=max_idle_cost,
            max_stragglers=max_stragglers,
            params=params,
        )
        key = _flags_key(window, max_idle_cost, max_stragglers, params)
        alerts.append(thresholds.alert(key, notify))
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
    max_idle_cost: float | None,
    max_stragglers: int | None,
    policy: object,
    notify: str | None,
    textfile: object,
) -> None:
    """Raise :class:`~ccanalytics.errors.ArgumentsError` for arguments of :func:`check`
    that do not go together, or a ``notify`` URL that cannot be one (never echoed: a
    webhook URL is a secret). The one home of these rules: ``ccanalytics check`` spells
    the same errors with its flags."""
    from ccanalytics.errors import ArgumentsError
    from ccanalytics.history.alerts._alerts import webhook_problem

    if policy is None and max_idle_cost is None and max_stragglers is None:
        raise ArgumentsError(
            "give at least one threshold ({max_idle_cost}, {max_stragglers}) or {policy}",
            "max_idle_cost",
            "max_stragglers",
            "policy",
        )
    if textfile is not None and policy is None:
        raise ArgumentsError(
            "{textfile} writes the figures a {policy} judges: give {policy}", "textfile", "policy"
        )
    if notify is not None and (problem := webhook_problem(notify)):
        escaped = problem.replace("{", "{{").replace("}", "}}")
        raise ArgumentsError("{notify}: " + escaped, "notify", python={"notify": "notify"})


def _flags_key(
    window: timedelta,
    max_idle_cost: float | None,
    max_stragglers: int | None,
    params: Params | None = None,
) -> str:
    """The alert state the flags keep: each set of window and thresholds its own (the
    default thresholds keep the key they always had)."""
    key = (
        f"window={window.total_seconds():g}s "
        f"max-idle-cost={max_idle_cost} max-stragglers={max_stragglers}"
    )
    if params is not None and params != Params():
        changed = {k: v for k, v in params.sql().items() if v != Params().sql()[k]}
        key += "".join(f" {k.replace('_', '-')}={v:g}" for k, v in changed.items())
    return key

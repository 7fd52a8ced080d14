"""Judging a policy over a store: each threshold, for each cluster it covers, fine or breached.

:func:`judge_policy` asks :class:`~ccanalytics.history.History` once per figure and span
(spend and projections from :meth:`History.spend`; idle cost, idle share and stragglers
over each rule's window; the waste classes from :meth:`History.waste`), so ``check``, the report and a notebook agree to the cent.
Each :class:`Judgement` carries one plain sentence naming the cluster, the figure, the
threshold, the span, and the three pods that cost most while idle in that span; a budget
projected over its limit adds the day the spend reaches it
(:func:`~ccanalytics.measures.breach_instant`, the projection's own line),
and a budget of a rule with ``warn_at`` its tier: the highest share of the limit reached.
``max_spend_anomaly_z`` is judged by :meth:`History.spend_anomalies`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, Literal

from ccanalytics.history.alerts._alerts import Alert, Snooze
from ccanalytics.history.alerts._policy import Policy, Rule, Threshold
from ccanalytics.measures import (
    MEASURES,
    Params,
    breach_instant,
    budget_tier,
    by_policy_key,
    format_share,
)
from ccanalytics.measures.rules import SPEND_MIN_BASELINE_WEEKS

if TYPE_CHECKING:
    import pandas as pd

    from ccanalytics.history.queries import History

__all__ = ["ALL_CLUSTERS", "Judgement", "PolicyReport", "format_share", "judge_policy"]

#: How many pods a sentence names as the costliest idle ones.
TOP_IDLE_PODS: Final = 3
#: The cluster of a pooled rule's judgements: the store's clusters together.
ALL_CLUSTERS: Final = "all clusters"

#: The registry's sums and shares a policy can limit over a window (``max_idle_cost``,
#: ``max_memory_risk_pod_hours``, ...): what :meth:`_Answers.window_figure` asks of
#: :meth:`History.measures`.
_POLICY_SUMS: Final = tuple(m.name for m in MEASURES if m.policy_key and m.kind in ("sum", "share"))
_PERIOD_WORDS: Final = {"day": "today", "week": "this week", "month": "this month"}
_FOR_PERIOD: Final = {"day": "for today", "week": "for this week", "month": "for the month"}


@dataclass(frozen=True)
class Judgement:
    """One threshold judged for one cluster."""

    threshold: Threshold
    cluster_id: str
    value: float  #: the figure judged (USD, a count, or a share 0-1)
    breached: bool
    start: Any  #: pandas.Timestamp: the span judged, [start, end)
    end: Any
    sentence: str  #: one plain sentence, Slack-compatible text
    #: 1.0 breached; else the highest of its rule's ``warn_at`` shares the figure reached
    #: (a budget's: of the spend so far or of the projection), else 0.0
    tier: float = 0.0
    #: pandas.Timestamp: when the spend reaches a budget's limit, for a projection over
    #: it (None otherwise, and for every other figure)
    breach_at: Any = None
    #: the rule warns of this budget (``warn_at``): its alert escalates through the tiers
    tiered: bool = False
    #: pandas.Timestamp: a forecast-judged budget's breach date interval, the P90's
    #: crossing (the earliest likely) and the P10's (the latest; None: not this period)
    breach_at_p90: Any = None
    breach_at_p10: Any = None

    @property
    def budget_tier(self) -> float:
        """:attr:`tier`, by the registry's name (the textfile's budget_tier_ratio)."""
        return self.tier

    @property
    def key(self) -> str:
        """``rule/figure[.period]@cluster``: where its state is kept."""
        return f"{self.threshold.key}@{self.cluster_id}"


@dataclass(frozen=True)
class PolicyReport:
    """Every judgement of a policy, its patterns that matched nothing, active snoozes."""

    judgements: tuple[Judgement, ...]
    #: One line per rule with a pattern of ``clusters`` that matches no cluster of the
    #: store (unless the rule says ``may_match_nothing``): a typo would check nothing.
    unmatched: tuple[str, ...]
    now: Any  #: pandas.Timestamp of the newest snapshot judged, or None for an empty store
    #: judgement key -> the snooze silencing its rule now
    snoozed: Mapping[str, Snooze] = field(default_factory=dict)

    @property
    def breaches(self) -> tuple[Judgement, ...]:
        """The judgements over their limit, snoozed or not."""
        return tuple(j for j in self.judgements if j.breached)

    @property
    def unsnoozed_breaches(self) -> tuple[Judgement, ...]:
        return tuple(j for j in self.breaches if j.key not in self.snoozed)

    def with_snoozes(self, snoozed: Mapping[str, Snooze]) -> PolicyReport:
        return replace(self, snoozed=dict(snoozed))

    def lines(self, *, every: bool = False) -> list[str]:
        """One sentence per breach (per judgement with ``every``), snoozed ones marked."""
        chosen = self.judgements if every else self.breaches
        return [
            j.sentence + (f" ({self.snoozed[j.key].describe()})" if j.key in self.snoozed else "")
            for j in chosen
        ]

    def alerts(self, policy: Policy, default_url: str | None = None) -> list[Alert]:
        """Each judgement as an alert routed by its rule (else to ``default_url``)."""
        found = []
        for j in self.judgements:
            rule = policy.rule(j.threshold.rule)
            prefix = "ccanalytics check: " if j.breached else "ccanalytics check: fine again. "
            if j.tiered and not j.breached and j.tier > 0:
                prefix = f"ccanalytics check: warning, past {format_share(j.tier)} of a budget. "
            url = rule.webhook() or default_url
            tier, period = (j.tier, f"{j.start:%Y-%m-%d}") if j.tiered else (None, None)
            found.append(
                Alert(j.key, j.breached, prefix + j.sentence, url, rule.name, tier, period)
            )
        return found


def judge_policy(policy: Policy, history: History, *, at: Any = None) -> PolicyReport:
    """Judge every threshold of ``policy`` for every cluster of the store it matches."""
    from ccanalytics.history.queries import catalog_of

    with catalog_of(history).one_listing():  # every threshold judged on the same files
        answers = _Answers(history, at)
        clusters = answers.clusters()
        judgements: list[Judgement] = []
        unmatched: list[str] = []
        for rule in policy.rules:
            matched = [c for c in clusters if _matches(rule.clusters, c)]
            idle = [p for p in rule.clusters if not any(_matches((p,), c) for c in clusters)]
            if idle and not rule.may_match_nothing:
                unmatched.append(
                    f"rule {rule.name!r}: no cluster in the store matches {', '.join(idle)} "
                    "(set may_match_nothing = true on the rule if it may)"
                )
            for threshold in rule.thresholds:
                targets = matched
                if rule.pooled and matched and by_policy_key(threshold.figure).kind != "anomaly":
                    targets = [ALL_CLUSTERS]
                judgements += [_judge(rule, threshold, c, answers) for c in targets]
    return PolicyReport(tuple(judgements), tuple(unmatched), answers.now)


def _matches(patterns: tuple[str, ...], cluster_id: str) -> bool:
    return any(fnmatch.fnmatchcase(cluster_id, pattern) for pattern in patterns)


def _judge(rule: Rule, threshold: Threshold, cluster_id: str, answers: _Answers) -> Judgement:
    if by_policy_key(threshold.figure).kind == "anomaly":
        return answers.anomaly(rule, threshold, cluster_id)
    breach_at, between = None, None
    if threshold.period is not None:
        value, start, end, span = answers.spend_figure(threshold, cluster_id, rule.forecast)
        breach_at, between = answers.breach_at(threshold, cluster_id, rule.forecast)
    else:
        value, start, end = answers.window_figure(
            threshold.figure, rule.window, cluster_id, rule.params
        )
        span = f"in the last {_duration(rule.window)}"
    breached = value > threshold.limit
    tiered = bool(rule.warn_at) and threshold.period is not None
    tier = budget_tier(value, threshold.limit, rule.warn_at if tiered else ())
    sentence = _sentence(
        rule,
        threshold,
        cluster_id,
        value,
        span,
        answers.named(threshold, rule, start, end, cluster_id),
        tier,
    )
    if breach_at is not None:
        sentence += f" {_breach_words(threshold, cluster_id, breach_at, between)}"
    early, late = between if between is not None else (None, None)
    return Judgement(
        threshold,
        cluster_id,
        value,
        breached,
        start,
        end,
        sentence,
        tier,
        breach_at,
        tiered,
        breach_at_p90=_instant(early),
        breach_at_p10=_instant(late),
    )


def _instant(when: Any) -> Any:
    """``when``, or None for no instant (None or NaT: that quantile never gets there)."""
    import pandas as pd

    return None if when is None or pd.isna(when) else when


def _sentence(
    rule: Rule,
    threshold: Threshold,
    cluster_id: str,
    value: float,
    span: str,
    top: str,
    tier: float = 0.0,
) -> str:
    figure, limit = _words(threshold, value)
    state = "over the limit" if value > threshold.limit else "within the limit"
    if 0 < tier < 1:
        state = f"past {format_share(tier)} of the limit"
    tail = f"; {top}" if top else ""
    return f"{cluster_id}: {figure} {span}, {state} of {limit} (rule {rule.name!r}){tail}."


def _breach_words(
    threshold: Threshold, cluster_id: str, breach_at: Any, between: tuple[Any, Any] | None = None
) -> str:
    """``cl-x reaches its 4,000 USD month on 2026-11-17.``: the UTC day of the crossing;
    with a forecast's interval, ``(between 2026-11-15 and 2026-11-20)`` (P90 to P10; an
    open end when that quantile does not get there this period)."""
    import pandas as pd

    limit = f"{threshold.limit:,.2f}".removesuffix(".00")
    words = f"{cluster_id} reaches its {limit} USD {threshold.period} on {breach_at:%Y-%m-%d}"
    if between is not None:
        early, late = (
            "the period's end" if when is None or pd.isna(when) else f"{when:%Y-%m-%d}"
            for when in between
        )
        words += f" (between {early} and {late})"
    return words + "."


def _words(threshold: Threshold, value: float) -> tuple[str, str]:
    """The figure and the limit in words, in the figure's unit (the registry's sentence)."""
    measure = by_policy_key(threshold.figure)
    if measure.fmt == "count":
        count = int(value)
        shown = f"{count} rank{'s' if count != 1 else ''}"
        return str(measure.sentence).format(value=shown), f"{int(threshold.limit)}"
    return (
        str(measure.sentence).format(value=measure.format(value)),
        measure.format(threshold.limit),
    )


def _duration(span: timedelta) -> str:
    from ccanalytics._durations import describe_duration

    return describe_duration(span)


def _number(column: pd.Series) -> float:
    """The first value of ``column`` as a float; ``<NA>`` (nothing covered) is 0."""
    import pandas as pd

    value = column.iloc[0]
    return 0.0 if pd.isna(value) else float(value)


class _Answers:
    """History's answers, asked once per span and shared by every threshold."""

    def __init__(self, history: History, at: Any) -> None:
        self.history = history
        self._cache: dict[Hashable, Any] = {}
        self.spend = self._once(("spend",), lambda: history.spend(at))
        self.at = at
        #: pandas.Timestamp: the instant judged (None for an empty store: nothing to judge)
        self.now: Any = self.spend["now"].iloc[0] if len(self.spend) else None

    def _once(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def clusters(self) -> list[str]:
        return sorted(set(self.spend["cluster_id"].astype(str)))

    def _spend_row(self, threshold: Threshold, cluster_id: str) -> Any:
        """The spend of ``cluster_id`` (of every cluster: :data:`ALL_CLUSTERS`) in the period."""
        if cluster_id == ALL_CLUSTERS:
            every = self._once(("spend", None), lambda: self.history.spend(self.at, by=None))
            return every[every["period"] == threshold.period].iloc[0]
        rows = self.spend[
            (self.spend["cluster_id"] == cluster_id) & (self.spend["period"] == threshold.period)
        ]
        return rows.iloc[0]

    def spend_figure(
        self, threshold: Threshold, cluster_id: str, forecast: str = "linear"
    ) -> tuple[float, Any, Any, str]:
        row = self._spend_row(threshold, cluster_id)
        since = f"{row['period_start']:%Y-%m-%d}"
        words = _PERIOD_WORDS[str(threshold.period)]
        if threshold.figure == "max_spend":
            return float(row["spent"]), row["period_start"], self.now, f"{words} (since {since})"
        spent = f"{float(row['spent']):,.2f} USD spent since {since}"
        if forecast != "linear" and row["forecast"] == "seasonal":
            span = (
                f"{_FOR_PERIOD[str(threshold.period)]} ({spent}, then the "
                f"{forecast.upper()} of the seasonal forecast to its end)"
            )
            return float(row[f"projected_{forecast}"]), row["period_start"], self.now, span
        line = f"then {float(row['burn_rate']):,.2f} USD/h to its end"
        if forecast != "linear":  # asked for the forecast, which fell back to the line
            line += f"; no seasonal forecast: {row['forecast_note']}"
        span = f"{_FOR_PERIOD[str(threshold.period)]} ({spent}, {line})"
        return float(row["projected"]), row["period_start"], self.now, span

    def breach_at(
        self, threshold: Threshold, cluster_id: str, forecast: str = "linear"
    ) -> tuple[Any, tuple[Any, Any] | None]:
        """When this cluster's spend reaches the budget's limit (or None): at its burn rate,
        or by the forecast's quantile with the P90-P10 interval of that date."""
        row = self._spend_row(threshold, cluster_id)
        if forecast != "linear" and row["forecast"] == "seasonal":
            limited = self._forecast_row(threshold, cluster_id)
            when = limited[f"breach_at_{forecast}"]
            between = (limited["breach_at_p90"], limited["breach_at_p10"])
            import pandas as pd

            return (None, None) if pd.isna(when) else (when, between)
        crossing = breach_instant(
            float(row["spent"]),
            float(row["burn_rate"]),
            threshold.limit,
            row["now"],
            row["period_end"],
        )
        return crossing, None

    def _forecast_row(self, threshold: Threshold, cluster_id: str) -> Any:
        """The spend row with the forecast's breach dates against this budget's limit."""
        period, limit = str(threshold.period), threshold.limit
        by: Literal["cluster"] | None = None if cluster_id == ALL_CLUSTERS else "cluster"
        frame = self._once(
            ("spend", by, period, limit),
            lambda: self.history.spend(self.at, by=by, limit={period: limit}),
        )
        if by is not None:
            frame = frame[frame["cluster_id"] == cluster_id]
        return frame[frame["period"] == period].iloc[0]

    def anomaly(self, rule: Rule, threshold: Threshold, cluster_id: str) -> Judgement:
        """The spend anomaly of ``cluster_id``'s latest complete hour, at the rule's z."""
        import pandas as pd

        found = self._once(
            ("anomalies", threshold.limit),
            lambda: self.history.spend_anomalies(self.now, z=threshold.limit),
        )
        hit = found[found["cluster_id"] == cluster_id]
        start = pd.Timestamp(self.now).floor("h") - pd.Timedelta(hours=1)
        end = start + pd.Timedelta(hours=1)
        hour = f"{start:%A %H:%M}"
        where = f"(rule {rule.name!r})"
        if not len(hit):
            sentence = (
                f"{cluster_id}: nothing observed in the hour from {start:%Y-%m-%d %H:%M} UTC, "
                f"no spend anomaly judged {where}."
            )
            return Judgement(threshold, cluster_id, float("nan"), False, start, end, sentence)
        row = hit.iloc[0]
        if pd.isna(row["robust_z"]):
            sentence = (
                f"{cluster_id}: no spend anomaly judged for {hour} UTC: {int(row['weeks'])} "
                f"week(s) of baseline, {SPEND_MIN_BASELINE_WEEKS} needed {where}."
            )
            return Judgement(threshold, cluster_id, float("nan"), False, start, end, sentence)
        z, usual, spend = float(row["robust_z"]), float(row["usual"]), float(row["spend"])
        unusual = bool(row["unusual"])
        how = f"{float(row['ratio']):.1f}x its usual" if usual > 0 else "in its usually idle"
        state = "over" if unusual else "within"
        sentence = (
            f"{cluster_id} spent {how} {hour} UTC ({spend:,.2f} USD/h in the hour from "
            f"{start:%Y-%m-%d %H:%M}; usually {usual:,.2f}, the median of {int(row['weeks'])} "
            f"weeks; robust z {z:.1f}), {state} the limit of z {threshold.limit:g} {where}."
        )
        tier = 1.0 if unusual else 0.0
        return Judgement(threshold, cluster_id, z, unusual, start, end, sentence, tier)

    def window_figure(
        self, figure: str, window: timedelta, cluster_id: str, params: Params
    ) -> tuple[float, Any, Any]:
        """The registry's measure for ``figure`` over ``window``, at ``params``.

        The window is ``[now - window, now]``: the newest snapshot is judged too (it is a
        reading), as ``check``'s flags and :meth:`History.stragglers` with no end judge it.
        """
        start = self.now - window
        measure = by_policy_key(figure)
        if measure.kind == "count":
            slow = self._chronic(window, params)
            mine = slow if cluster_id == ALL_CLUSTERS else slow[slow["cluster_id"] == cluster_id]
            return float(len(mine)), start, self.now
        by: Literal["cluster"] | None = None if cluster_id == ALL_CLUSTERS else "cluster"
        costs = (
            self._window_waste(start, params, by)
            if measure.kind == "waste"
            else self._window_costs(start, params, by)
        )
        hit = costs if by is None else costs[costs["cluster_id"] == cluster_id]
        return (_number(hit[measure.name]) if len(hit) else 0.0), start, self.now

    def _through_now(self) -> Any:
        """The end of a window that holds the snapshot at ``now`` (the newest judged)."""
        import pandas as pd

        return self.now + pd.Timedelta(microseconds=1)

    def _window_costs(self, start: Any, params: Params, by: Any = "cluster") -> pd.DataFrame:
        costs: pd.DataFrame = self._once(
            ("measures", start, params, by),
            lambda: self.history.measures(_POLICY_SUMS, start, self.now, by=by, params=params),
        )
        return costs

    def _window_waste(self, start: Any, params: Params, by: Any = "cluster") -> pd.DataFrame:
        waste: pd.DataFrame = self._once(
            ("waste", start, params, by),
            lambda: self.history.waste(start, self.now, by=by, params=params),
        )
        return waste

    def named(self, threshold: Threshold, rule: Rule, start: Any, end: Any, cluster_id: str) -> str:
        """What a sentence names: the straggling ranks of a straggler limit, else the
        costliest idle pods."""
        if by_policy_key(threshold.figure).kind == "count" and threshold.period is None:
            ranks = self.chronic_ranks(rule.window, cluster_id, rule.params)
            return f"straggling ranks: {ranks}" if ranks else ""
        top = self.top_idle(start, end, cluster_id, rule.params)
        return f"costliest idle pods: {top}" if top else ""

    def chronic_ranks(self, window: timedelta, cluster_id: str, params: Params) -> str:
        """The ranks a straggler limit counts, worst first: ``cl-x rank 3 (100%)``."""
        slow = self._chronic(window, params)
        if cluster_id != ALL_CLUSTERS:
            slow = slow[slow["cluster_id"] == cluster_id]
        top = slow.head(TOP_IDLE_PODS)
        named = [
            f"{cluster} rank {rank} ({share:.0%})"
            for cluster, rank, share in zip(
                top["cluster_id"].astype(str),
                top["rank"].astype("int64"),
                top["share"].astype(float),
                strict=True,
            )
        ]
        more = len(slow) - len(named)
        return ", ".join(named) + (f" and {more} more" if more > 0 else "")

    def _chronic(self, window: timedelta, params: Params) -> pd.DataFrame:
        """The ranks flagged in at least ``chronic_share`` of the window's snapshots."""
        slow: pd.DataFrame = self._once(
            ("stragglers", window, params),
            lambda: self.history.stragglers(
                self.now - window,
                self._through_now(),
                min_share=params.chronic_share,
                params=params,
            ),
        )
        return slow

    def top_idle(self, start: Any, end: Any, cluster_id: str, params: Params) -> str:
        pods = self._once(
            ("pods", start, params),
            lambda: self.history.idle_cost(start, end, by="pod", params=params),
        )
        if cluster_id != ALL_CLUSTERS:
            pods = pods[pods["cluster_id"] == cluster_id]
        mine = pods[pods["idle_cost"] > 0.005]
        worst = mine.sort_values(["idle_cost", "name"], ascending=[False, True]).head(TOP_IDLE_PODS)
        return ", ".join(f"{row.name} {row.idle_cost:,.2f} USD" for row in worst.itertuples())

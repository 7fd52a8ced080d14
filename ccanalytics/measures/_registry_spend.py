"""The registry's measures of money over calendar periods and of rules' judgements.

Spend so far and its projections per period (History.spend), a budget's judgement (its
tier, its breach dates), an hour's spend against past weeks (History.spend_anomalies)
and what an idle rule would have saved (History.backtest): each declared once, as every
measure is, with its own figure: ``sql`` over its kind's relation
(:mod:`~ccanalytics.measures._kinds`), or the judgement function it is decided by
(``compute``, :mod:`~ccanalytics.measures._judgements`).
:data:`~ccanalytics.measures.MEASURES` lists them after the sums over pod rows.
"""

from __future__ import annotations

from typing import Final

from ccanalytics.measures._measure import Measure, Metric
from ccanalytics.measures.rules import SPEND_MIN_BASELINE_WEEKS, robust_z_sql

__all__ = ["SPEND_MEASURES"]

#: In the order the docs, the policy and the textfile list them.
SPEND_MEASURES: Final[tuple[Measure, ...]] = (
    Measure(
        name="spent",
        kind="spend",
        sql="total_cost",
        unit="USD",
        meaning="USD spent so far in the UTC day, ISO week or month (History.spend)",
        label="spent",
        fmt="usd",
        policy_key="max_spend",
        periodic=True,
        metric=Metric(
            "spend_usd", "gauge", "USD spent so far in the period (UTC day, ISO week, month)"
        ),
        sentence="{value} spent",
    ),
    Measure(
        name="projected",
        kind="spend",
        sql="total_cost + burn_rate * hours_left",
        unit="USD",
        meaning="spent so far plus the latest burn rate to the period's end (History.spend)",
        label="projected",
        fmt="usd",
        policy_key="max_projected_spend",
        periodic=True,
        metric=Metric("projected_spend_usd", "gauge", "USD projected by the end of the period"),
        sentence="{value} projected",
    ),
    # Budgets that warn before they breach, the breach date, spend anomalies.
    Measure(
        name="budget_tier",
        kind="judgement",
        compute="budget_tier",
        unit="0-1",
        meaning="per budget and cluster: the highest warn_at share of the limit its figure "
        "reached (1 over the limit, 0 below every tier)",
        label="budget tier",
        fmt="share",
        metric=Metric(
            "budget_tier_ratio",
            "gauge",
            "the highest warn_at share of its limit a budget reached (1: over the limit)",
        ),
    ),
    Measure(
        name="breach_at",
        kind="judgement",
        compute="breach_instant",
        unit="UTC instant",
        meaning="when spent + burn rate reaches the budget's limit, for a projection over it "
        "(History.spend(limit=))",
        label="breach date",
        fmt="date",
        metric=Metric(
            "projected_breach_timestamp_seconds",
            "gauge",
            "Unix time at which the spend reaches the limit at the current burn rate",
        ),
    ),
    Measure(
        name="spend_anomaly_z",
        kind="anomaly",
        sql=f"CASE WHEN weeks >= {SPEND_MIN_BASELINE_WEEKS} "
        f"THEN {robust_z_sql('spend', 'usual', 'mad')} END",
        column="robust_z",
        unit="robust z",
        meaning="the latest complete hour's spend against the same hour of the week over the "
        "last weeks: MAD_SCALE·(spend − median)/MAD (History.spend_anomalies)",
        label="spend anomaly",
        fmt="z",
        policy_key="max_spend_anomaly_z",
        metric=Metric(
            "spend_anomaly_z",
            "gauge",
            "robust z of the latest complete hour's spend against the same hour of past weeks",
        ),
        sentence="{value}",
    ),
    # The seasonal forecast's interval (History.spend) and its breach dates.
    *(
        Measure(
            name=f"projected_{q}",
            kind="spend",
            sql=f"total_cost + rest_{q}",
            unit="USD",
            meaning=f"spent so far plus the seasonal forecast's {words} of the rest of the "
            "period (the burn-rate line with too little history; History.spend)",
            label=f"projected ({q.upper()})",
            fmt="usd",
            periodic=True,
            sentence=f"{{value}} projected ({q.upper()})",
        )
        for q, words in (("p10", "10th percentile"), ("p50", "median"), ("p90", "90th percentile"))
    ),
    *(
        Measure(
            name=f"breach_at_{q}",
            kind="judgement",
            compute="forecast_breach",
            unit="UTC instant",
            meaning=f"when spent + the forecast's {q.upper()} reaches a forecast-judged "
            f"budget's limit: the {edge} of its breach date (History.spend(limit=))",
            label=f"breach date ({edge})",
            fmt="date",
            metric=Metric(
                f"projected_breach_{q}_timestamp_seconds",
                "gauge",
                f"Unix time at which spent + the forecast's {q.upper()} reaches the limit",
            ),
        )
        for q, edge in (("p90", "earliest likely"), ("p10", "latest likely"))
    ),
    # What an idle rule would have saved (History.backtest), per rule.
    Measure(
        name="stops",
        kind="backtest",
        sql="sum(stops)",
        unit="stops",
        meaning="stops an idle rule would have made: a running GPU pod idle for its idle_for",
        label="stops",
        fmt="count",
        sentence="{value} stops",
    ),
    Measure(
        name="false_stops",
        kind="backtest",
        sql="sum(false_stops)",
        unit="stops",
        meaning="stops followed by the pod being busy again within regret (default 1h)",
        label="false stops",
        fmt="count",
        sentence="{value} false stops",
    ),
    Measure(
        name="saved_usd",
        kind="backtest",
        sql="sum(saved_usd)",
        unit="USD",
        meaning="USD saved: Σ cost·Δt from each stop until the pod is next seen busy, "
        "leaves or the window ends",
        label="saved",
        fmt="usd",
        sentence="{value} saved",
    ),
    Measure(
        name="saved_gpu_hours",
        kind="backtest",
        sql="sum(saved_gpu_hours)",
        unit="GPU-hours",
        meaning="GPU-hours saved over the same spans: Σ gpu_count·Δt",
        label="GPU-hours saved",
        fmt="hours",
        sentence="{value} GPU-hours saved",
    ),
    Measure(
        name="interrupted_usd",
        kind="backtest",
        sql="sum(interrupted_usd)",
        unit="USD",
        meaning="USD of the work the false stops would have interrupted: Σ cost·Δt of the "
        "busy stretch each comes back to",
        label="work interrupted",
        fmt="usd",
        sentence="{value} of work interrupted",
    ),
)

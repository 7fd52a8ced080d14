"""The registry: every measure declared once, and everything else generated from it.

A :class:`Measure` names one quantity and says, once, how it is computed (SQL over pod
rows), in which unit, what it means, which parameters judge it, which policy key limits
it, which Prometheus metric carries it, how the report labels it and how an alert says
it. The live summary's columns (:func:`ccanalytics.analysis.cluster_summary`), History's
columns (:meth:`ccanalytics.history.History.idle_cost`), the policy's keys, the alert
sentences, the textfile's metrics, the report's cards and the docs' measures page are
read off :data:`MEASURES`. A new measure is one entry here.

Kinds:

- ``"sum"``: a sum over pod rows of ``row`` (per hour) where ``where`` holds. Live, the
  sum per cluster in ``live`` (USD/h, or GPUs); over a window, the time integral
  Σ row·Δt in ``name`` (USD, or GPU-hours), with the store's time accounting.
- ``"share"``: ``numerator / denominator`` of two sum measures (0-1; NULL when the
  denominator is 0), live and over a window alike.
- ``"waste"``: a waste class (:data:`ccanalytics.measures.rules.WASTE_CLASSES`): a
  "sum" over pod rows that carry what :func:`~ccanalytics.measures.rules.waste_ctes`
  adds (idle GPUs from the per-GPU table, the straggler rule's deficit); live, USD/h per
  cluster (``cluster_summary``), over a window, USD (``History.waste``). A pod row is in
  one class at most.
- ``"count"``: stragglers: the rows of ``source`` (per cluster and rank over the
  straggler rule's judgements) where ``where`` holds, counted per cluster or over the
  fleet (History.measures; History.stragglers lists the rows).
- ``"spend"``: spend so far and its projection per period; ``"pod_share"``: a share per
  pod over a window (History.pod_lifetimes).
- ``"anomaly"``: an hour's spend against the same hour of the week
  (History.spend_anomalies); ``"judgement"``: a figure of one budget's judgement (its
  tier, its breach date), written to the textfile per rule.

Every entry of these kinds carries its own figure (``sql`` over its kind's relation,
:mod:`~ccanalytics.measures._kinds`, or a judgement's ``compute``): the queries that
answer them select the entries, never a figure of their own.

The waste classes and their sum are declared in
:mod:`~ccanalytics.measures._registry_waste`; the report's GPU-type table and waste
chart's sums and quotients in
:mod:`~ccanalytics.measures._registry_report`, after the waste classes; the spend,
judgement, anomaly and backtest entries in :mod:`~ccanalytics.measures._registry_spend`,
last in :data:`MEASURES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ccanalytics.measures._measure import Measure, Metric
from ccanalytics.measures._registry_report import REPORT_MEASURES
from ccanalytics.measures._registry_spend import SPEND_MEASURES
from ccanalytics.measures._registry_waste import WASTE_CLASS_NAMES, WASTE_MEASURES
from ccanalytics.measures.rules import (
    IDLE_SQL,
    JUDGED_SQL,
    MEMORY_RISK_SQL,
    NOT_RUNNING_SQL,
    RUNNING_SQL,
    RUNNING_WITHOUT_METRICS_SQL,
    STRAGGLER_RANKS_SQL,
    UNUSED_COST_SQL,
    UTIL_WEIGHT_SQL,
)

__all__ = [
    "MEASURES",
    "by_name",
    "by_policy_key",
    "policy_keys",
    "sum_shares",
    "waste_classes",
]


_HAS_GPUS: Final = "gpu_count > 0"


#: Every measure, in the order the docs, History's columns and the textfile list them.
MEASURES: Final[tuple[Measure, ...]] = (
    Measure(
        name="total_cost",
        kind="sum",
        unit="USD",
        meaning="what the pods cost: Σ cost·Δt (a missing cost counts as 0)",
        label="spend",
        fmt="usd",
        live="cost_per_hour",
        live_unit="USD/h",
        row="cost",
        card=True,
    ),
    Measure(
        name="gpu_cost",
        kind="sum",
        unit="USD",
        meaning="what the GPU pods cost, running or not",
        label="GPU spend",
        fmt="usd",
        live="gpu_cost_per_hour",
        live_unit="USD/h",
        row="cost",
        where=_HAS_GPUS,
    ),
    Measure(
        name="idle_gpu_hours",
        kind="sum",
        unit="GPU-hours",
        meaning="GPU-hours of idle pods: running GPU pods whose busiest GPU is below "
        "idle_threshold",
        label="idle GPU-hours",
        fmt="hours",
        live="idle_gpus",
        live_unit="GPUs",
        row="CAST(gpu_count AS DOUBLE)",
        where=IDLE_SQL,
        params=("idle_threshold",),
    ),
    Measure(
        name="idle_cost",
        kind="sum",
        unit="USD",
        meaning="the whole cost of idle pods: an idle GPU pod buys nothing",
        label="idle GPU spend",
        fmt="usd",
        live="idle_cost_per_hour",
        live_unit="USD/h",
        row="cost",
        where=IDLE_SQL,
        params=("idle_threshold",),
        policy_key="max_idle_cost",
        metric=Metric("idle_cost_usd", "gauge", "USD spent on idle GPUs over the window"),
        sentence="idle GPUs cost {value}",
        card=True,
        card_share="idle_cost_share",
    ),
    Measure(
        name="unused_cost",
        kind="sum",
        unit="USD",
        meaning="unused capacity: Σ cost·(1 − gpu_util_mean/100)·Δt over running GPU pods "
        "reporting utilization, idle pods included",
        label="unused GPU spend",
        fmt="usd",
        live="unused_cost_per_hour",
        live_unit="USD/h",
        row=UNUSED_COST_SQL,
        where=JUDGED_SQL,
        old_names=("unused_gpu_cost",),
        card=True,
        card_share="unused_cost_share",
    ),
    Measure(
        name="idle_cost_share",
        kind="share",
        unit="0-1",
        meaning="idle cost over all spend (total_cost)",
        label="idle share of spend",
        fmt="share",
        live="idle_cost_share",
        live_unit="0-1",
        numerator="idle_cost",
        denominator="total_cost",
        params=("idle_threshold",),
        policy_key="max_idle_cost_share",
        old_policy_keys=("max_idle_share",),
        metric=Metric(
            "idle_cost_share_ratio", "gauge", "idle GPU spend over all spend in the window"
        ),
        sentence="idle GPUs were {value} of the spend",
    ),
    Measure(
        name="idle_gpu_cost_share",
        kind="share",
        unit="0-1",
        meaning="idle cost over GPU spend (gpu_cost)",
        label="idle share of GPU spend",
        fmt="share",
        live="idle_gpu_cost_share",
        live_unit="0-1",
        numerator="idle_cost",
        denominator="gpu_cost",
        params=("idle_threshold",),
        old_names=("idle_share",),
    ),
    Measure(
        name="unused_cost_share",
        kind="share",
        unit="0-1",
        meaning="unused capacity over all spend (total_cost), idle pods included",
        label="unused share of spend",
        fmt="share",
        live="unused_cost_share",
        live_unit="0-1",
        numerator="unused_cost",
        denominator="total_cost",
    ),
    Measure(
        name="idle_time_share",
        kind="pod_share",
        sql="coalesce(sum(covered_us) FILTER (WHERE idle), 0) / nullif(sum(covered_us), 0)",
        unit="0-1",
        meaning="per pod: idle hours over observed hours (History.pod_lifetimes)",
        label="idle share of its time",
        fmt="share",
        params=("idle_threshold",),
        old_names=("idle_share",),
    ),
    Measure(
        name="stragglers",
        kind="count",
        unit="ranks",
        meaning="ranks flagged in at least chronic_share of their snapshots (live: in the "
        "one snapshot)",
        label="straggling ranks",
        fmt="count",
        live="stragglers",
        live_unit="ranks",
        source=STRAGGLER_RANKS_SQL,
        where="share >= $chronic_share",
        params=("idle_threshold", "z", "min_gap", "chronic_share"),
        policy_key="max_stragglers",
        metric=Metric(
            "stragglers",
            "gauge",
            "ranks flagged in at least chronic_share of the window's snapshots",
        ),
        sentence="{value} straggled",
        card=True,
    ),
    Measure(
        name="memory_risk_pod_hours",
        kind="sum",
        unit="pod-hours",
        meaning="running GPU pods whose fullest GPU's memory is above memory_threshold "
        "(95 %): the next allocation may fail",
        label="GPU memory at risk",
        fmt="hours",
        live="memory_risk_pods",
        live_unit="pods",
        row="CAST(1 AS DOUBLE)",
        where=MEMORY_RISK_SQL,
        params=("memory_threshold",),
        policy_key="max_memory_risk_pod_hours",
        metric=Metric(
            "memory_risk_pod_seconds",
            "gauge",
            "pod time (seconds) with a GPU's memory above memory_threshold over the window",
        ),
        sentence="GPU memory was above the risk line for {value} of pod time",
        card=True,
    ),
    Measure(
        name="saturated_pod_hours",
        kind="sum",
        unit="pod-hours",
        meaning="running GPU pods whose least busy GPU (gpu_util_min) is above "
        "saturation_threshold: more work would queue",
        label="saturated GPU pods",
        fmt="hours",
        live="saturated_pods",
        live_unit="pods",
        row="CAST(1 AS DOUBLE)",
        where=f"({RUNNING_SQL} AND gpu_util_min IS NOT NULL "
        "AND gpu_util_min > $saturation_threshold)",
        params=("saturation_threshold",),
        policy_key="max_saturated_pod_hours",
        metric=Metric(
            "saturated_pod_seconds",
            "gauge",
            "pod time (seconds) with every GPU above saturation_threshold over the window",
        ),
        sentence="every GPU was above the saturation line for {value} of pod time",
        card=True,
    ),
    # Time idle and judged, and the time- and GPU-weighted utilization as a share of two
    # sums: what showback charges per pod and period, split like any other sum. A pod
    # counts as a DOUBLE 1: a sum of the literal 1.0 keeps a 128-bit DECIMAL per group.
    Measure(
        name="idle_pod_hours",
        kind="sum",
        unit="pod-hours",
        meaning="time of idle pods: running GPU pods whose busiest GPU is below idle_threshold",
        label="idle pod-hours",
        fmt="hours",
        live="idle_pods",
        live_unit="pods",
        row="CAST(1 AS DOUBLE)",
        where=IDLE_SQL,
        params=("idle_threshold",),
    ),
    Measure(
        name="judged_pod_hours",
        kind="sum",
        unit="pod-hours",
        meaning="time of pods judged busy or idle: running GPU pods reporting utilization, "
        "idle pods included",
        label="judged pod-hours",
        fmt="hours",
        live="judged_pods",
        live_unit="pods",
        row="CAST(1 AS DOUBLE)",
        where=f"({JUDGED_SQL} OR {IDLE_SQL})",
        params=("idle_threshold",),
    ),
    Measure(
        name="reporting_gpu_hours",
        kind="sum",
        unit="GPU-hours",
        meaning="GPU-hours of running GPU pods reporting utilization: Σ GPUs reporting·Δt "
        "(all the pod's GPUs when the count is unknown)",
        label="GPU-hours reporting",
        fmt="hours",
        live="reporting_gpus",
        live_unit="GPUs",
        row=f"CAST({UTIL_WEIGHT_SQL} AS DOUBLE)",
        where=JUDGED_SQL,
    ),
    Measure(
        name="used_gpu_hours",
        kind="sum",
        unit="GPU-hours",
        meaning="GPU-hours of work done by the same pods: Σ GPUs reporting·gpu_util_mean/100·Δt",
        label="GPU-hours used",
        fmt="hours",
        live="used_gpus",
        live_unit="GPU-equivalents",
        row=f"gpu_util_mean / 100 * CAST({UTIL_WEIGHT_SQL} AS DOUBLE)",
        where=JUDGED_SQL,
    ),
    Measure(
        name="gpu_utilization",
        kind="share",
        unit="0-1",
        meaning="mean GPU utilization, weighted by time and GPUs reporting: "
        "used_gpu_hours / reporting_gpu_hours",
        label="GPU utilization",
        fmt="share",
        live="gpu_utilization",
        live_unit="0-1",
        numerator="used_gpu_hours",
        denominator="reporting_gpu_hours",
    ),
    # What the listing says of pods it cannot judge: they count, but never as idle or busy.
    Measure(
        name="no_metrics_pod_hours",
        kind="sum",
        unit="pod-hours",
        meaning="running pods without the metric of their kind (GPU utilization on a GPU "
        "pod, CPU utilization on the others): their utilization is unknown, so never judged",
        label="running, no metrics",
        fmt="hours",
        live="running_without_metrics",
        live_unit="pods",
        row="CAST(1 AS DOUBLE)",
        where=RUNNING_WITHOUT_METRICS_SQL,
        card=True,
        card_marked=True,
    ),
    Measure(
        name="no_metrics_cost",
        kind="sum",
        unit="USD",
        meaning="what the running pods without metrics cost: in the spend, in no waste "
        "figure, since nothing says whether they work",
        label="spend of pods without metrics",
        fmt="usd",
        live="running_without_metrics_cost_per_hour",
        live_unit="USD/h",
        row="cost",
        where=RUNNING_WITHOUT_METRICS_SQL,
    ),
    Measure(
        name="not_running_pod_hours",
        kind="sum",
        unit="pod-hours",
        meaning="pods listed in any state but RUNNING (provisioning, starting, exited, ...) "
        "or none: never judged idle",
        label="not running",
        fmt="hours",
        live="pods_not_running",
        live_unit="pods",
        row="CAST(1 AS DOUBLE)",
        where=NOT_RUNNING_SQL,
        card=True,
    ),
    Measure(
        name="not_running_cost",
        kind="sum",
        unit="USD",
        meaning="what the pods not running cost (a pod is billed from provisioning on): "
        "in the spend, never idle",
        label="spend of pods not running",
        fmt="usd",
        live="not_running_cost_per_hour",
        live_unit="USD/h",
        row="cost",
        where=NOT_RUNNING_SQL,
    ),
    Measure(
        name="uncosted_pod_hours",
        kind="sum",
        unit="pod-hours",
        meaning="pods the service gives no price for: they count as 0 in every cost",
        label="pods without a price",
        fmt="hours",
        live="pods_without_cost",
        live_unit="pods",
        row="CAST(1 AS DOUBLE)",
        where="cost IS NULL",
    ),
    *WASTE_MEASURES,
    *REPORT_MEASURES,
    *SPEND_MEASURES,
)

_BY_NAME: Final[Mapping[str, Measure]] = MappingProxyType({m.name: m for m in MEASURES})
_BY_KEY: Final[Mapping[str, Measure]] = MappingProxyType(
    {key: m for m in MEASURES for key in (m.policy_key, *m.old_policy_keys) if key}
)


def by_name(name: str) -> Measure:
    """The measure called ``name`` (KeyError naming the known ones otherwise)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no measure {name!r} (known: {', '.join(_BY_NAME)})") from None


def by_policy_key(key: str) -> Measure:
    """The measure a policy key (or one of its old spellings) limits."""
    return _BY_KEY[key]


def waste_classes() -> tuple[Measure, ...]:
    """The waste classes' measures, in the order a pod row is assigned to them (the other
    "waste" measure, ``waste_cost``, is their sum)."""
    return tuple(m for m in MEASURES if m.name in WASTE_CLASS_NAMES)


def sum_shares() -> tuple[Measure, ...]:
    """The shares of two "sum" measures: what a sum over pod rows alone answers (a share
    of ``waste_cost`` needs the waste classes' relation too)."""
    return tuple(
        m
        for m in MEASURES
        if m.kind == "share"
        and all(by_name(str(part)).kind == "sum" for part in (m.numerator, m.denominator))
    )


def policy_keys() -> tuple[str, ...]:
    """Every current policy key, in the registry's order."""
    return tuple(m.policy_key for m in MEASURES if m.policy_key)

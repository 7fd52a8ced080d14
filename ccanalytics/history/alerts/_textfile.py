"""The figures ``check`` judged, as a node_exporter textfile, so an existing Grafana shows them.

Written with ``prometheus_client`` (the reference implementation of the text format, so
names, escaping and ``# HELP``/``# TYPE`` lines are right by construction), in the
Prometheus text exposition format that node_exporter's textfile collector reads, and
replaced atomically (:func:`ccanalytics._files.write_atomic`) so the collector never
scrapes half a file. Names follow Prometheus conventions: a ``ccanalytics_`` prefix,
base units in the name (``_usd``, ``_seconds``, ``_ratio``), ``_total`` on the one counter.

========================================  =======  ==========================================
metric                                    type     labels
========================================  =======  ==========================================
``ccanalytics_spend_usd_total``           counter  cluster, period (resets when it starts)
``ccanalytics_projected_spend_usd``       gauge    cluster, period
``ccanalytics_idle_cost_usd``             gauge    cluster, window
``ccanalytics_idle_cost_share_ratio``     gauge    cluster, window
``ccanalytics_stragglers``                gauge    cluster, window
``ccanalytics_<waste class>_usd``         gauge    cluster, window (``idle_gpus_cost_usd``, ...)
``ccanalytics_spend_anomaly_z``           gauge    cluster, window (1h): when judged
``ccanalytics_budget_tier_ratio``         gauge    rule, figure, period, cluster: 0, a
                                                   warn_at share, or 1 (breached)
``ccanalytics_projected_breach_*``        gauge    rule, figure, period, cluster: when the
                                                   spend reaches the limit (see below)
``ccanalytics_threshold``                 gauge    rule, figure, period, cluster: the limit
``ccanalytics_breached``                  gauge    rule, figure, period, cluster: 1 or 0
``ccanalytics_snoozed``                   gauge    rule, figure, period, cluster: 1 or 0
``ccanalytics_newest_snapshot_seconds``   gauge    (none): when the newest snapshot was taken
========================================  =======  ==========================================

``ccanalytics_projected_breach_timestamp_seconds`` is the Unix time at which the spend
reaches a budget's limit at the current burn rate, for a projection over it.

The figures' metrics are the registry's (each :data:`ccanalytics.measures.MEASURES`
entry with a policy key names its metric, and each ``"judgement"`` measure its metric
per rule): a new measure brings its metric. A figure not judged (a spend anomaly without
enough baseline) writes no sample.
``ccanalytics_idle_share_ratio``, the old name of ``ccanalytics_idle_cost_share_ratio``,
is written beside it for one release so that dashboards can move.
No webhook URL or other secret is ever a label.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccanalytics._durations import format_duration
from ccanalytics._files import write_atomic
from ccanalytics.errors import CheckOutputError
from ccanalytics.measures import MEASURES

if TYPE_CHECKING:
    from ccanalytics.history.alerts._judge import Judgement, PolicyReport

__all__ = ["render_textfile", "write_textfile"]

#: Policy key -> (metric name, type, help, per period): the registry's metrics.
_FIGURE_METRICS = {
    str(m.policy_key): (m.metric.name, m.metric.kind, m.metric.help, m.periodic)
    for m in MEASURES
    if m.policy_key and m.metric
}
#: The registry's figures of each judgement (its tier, its breach date), per rule.
_JUDGEMENT_METRICS = tuple(m for m in MEASURES if m.kind == "judgement" and m.metric)
#: Old metric names still written, beside the new, for one release: old -> policy key.
_OLD_METRICS = {"idle_share_ratio": "max_idle_cost_share"}


def render_textfile(report: PolicyReport, snoozed: Collection[str] = ()) -> bytes:
    """The text format for ``report``'s judgements; ``snoozed`` holds judgement keys."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(report, frozenset(snoozed)))
    return bytes(generate_latest(registry))


def write_textfile(
    path: str | PathLike[str], report: PolicyReport, snoozed: Collection[str] = ()
) -> Path:
    """Replace ``path`` atomically with :func:`render_textfile`'s text.

    A path that cannot be written (a missing folder, a folder, a read-only disk) is a
    :class:`~ccanalytics.errors.CheckOutputError` naming it.
    """
    target = Path(path)
    text = render_textfile(report, snoozed)
    try:
        return write_atomic(target, lambda sink: sink.write(text))
    except OSError as err:
        reason = err.strerror or str(err)
        raise CheckOutputError(f"cannot write the textfile {target}: {reason}", target) from None


class _Collector:
    """A one-shot prometheus_client collector over a policy report."""

    def __init__(self, report: PolicyReport, snoozed: frozenset[str]) -> None:
        self.report = report
        self.snoozed = snoozed

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        judgements = self.report.judgements
        yield from self._figures(judgements, CounterMetricFamily, GaugeMetricFamily)
        rule_labels = ["rule", "figure", "period", "cluster"]
        for measure in _JUDGEMENT_METRICS:
            assert measure.metric is not None
            family = GaugeMetricFamily(
                f"ccanalytics_{measure.metric.name}", measure.metric.help, labels=rule_labels
            )
            for j in judgements:
                value = _sample(getattr(j, measure.name))
                if value is not None:
                    family.add_metric(_rule_labels(j), value)
            yield family
        for name, doc, value_of in (
            (
                "threshold",
                "the limit a rule sets, in the figure's unit",
                lambda j: j.threshold.limit,
            ),
            ("breached", "1 when the figure is over its limit", lambda j: float(j.breached)),
            (
                "snoozed",
                "1 when the rule is snoozed for this cluster",
                lambda j: float(j.key in self.snoozed),
            ),
        ):
            family = GaugeMetricFamily(f"ccanalytics_{name}", doc, labels=rule_labels)
            for j in judgements:
                family.add_metric(_rule_labels(j), value_of(j))
            yield family
        if self.report.now is not None:
            newest = GaugeMetricFamily(
                "ccanalytics_newest_snapshot_seconds",
                "Unix time of the newest snapshot the figures are computed to",
                value=self.report.now.timestamp(),
            )
            yield newest

    def _figures(
        self, judgements: tuple[Judgement, ...], counter: Any, gauge: Any
    ) -> Iterator[Any]:
        metrics = [(figure, *spec) for figure, spec in _FIGURE_METRICS.items()]
        metrics += [
            (figure, old, "gauge", f"deprecated: {_FIGURE_METRICS[figure][0]}", False)
            for old, figure in _OLD_METRICS.items()
        ]
        for figure, name, kind, doc, periodic in metrics:
            labels = ["cluster", "period" if periodic else "window"]
            family = (counter if kind == "counter" else gauge)(
                f"ccanalytics_{name}", doc, labels=labels
            )
            seen: set[tuple[str, str]] = set()
            for j in judgements:
                if j.threshold.figure != figure:
                    continue
                span = j.threshold.period or format_duration((j.end - j.start).total_seconds())
                if (j.cluster_id, span) in seen or j.value != j.value:  # one sample; NaN: none
                    continue
                seen.add((j.cluster_id, span))
                family.add_metric([j.cluster_id, span], j.value)
            yield family


def _sample(value: Any) -> float | None:
    """A judgement's figure as a sample: an instant as Unix seconds; None: no sample."""
    if value is None:
        return None
    if hasattr(value, "timestamp"):
        return float(value.timestamp())
    return float(value)


def _rule_labels(j: Judgement) -> list[str]:
    return [j.threshold.rule, j.threshold.figure, j.threshold.period or "", j.cluster_id]

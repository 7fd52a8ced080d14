"""The figures ``check`` judged, as a node_exporter textfile, so an existing Grafana shows them.

Written with ``prometheus_client`` (the reference implementation of the text format, so
names, escaping and ``# HELP``/``# TYPE`` lines are right by construction), in the
Prometheus text exposition format that node_exporter's textfile collector reads, and
replaced atomically (:func:`ccanalytics._files.write_atomic`) so the collector never
scrapes half a file. Names follow Prometheus conventions (``promtool check metrics`` is
clean): a ``ccanalytics_`` prefix, one base unit per name at its end (``_usd``,
``_seconds``, ``_ratio``: a figure in hours is written in seconds), an instant as
``*_timestamp_seconds``, and every figure a gauge (spend so far resets each period).

=================================================  =====  =================================
metric                                             type   labels (and the source's, below)
=================================================  =====  =================================
``ccanalytics_spend_usd``                          gauge  cluster, period
``ccanalytics_projected_spend_usd``                gauge  cluster, period
``ccanalytics_idle_cost_usd``                      gauge  cluster, window
``ccanalytics_idle_cost_share_ratio``              gauge  cluster, window
``ccanalytics_stragglers``                         gauge  cluster, window
``ccanalytics_memory_risk_pod_seconds``            gauge  cluster, window
``ccanalytics_<waste class>_usd``                  gauge  cluster, window (``idle_gpus_cost_usd``)
``ccanalytics_spend_anomaly_z``                    gauge  cluster, window (1h): when judged
``ccanalytics_budget_tier_ratio``                  gauge  rule, figure, period, cluster: 0, a
                                                          warn_at share, or 1 (breached)
``ccanalytics_projected_breach_timestamp_seconds`` gauge  rule, figure, period, cluster: when
                                                          the spend reaches the limit
``ccanalytics_threshold_<unit>``                   gauge  rule, figure, period, cluster: the
                                                          limit, one metric per unit (``usd``,
                                                          ``ratio``, ``ranks``, ``pod_seconds``,
                                                          ``z``)
``ccanalytics_breached``                           gauge  rule, figure, period, cluster: 1 or 0
``ccanalytics_snoozed``                            gauge  rule, figure, period, cluster: 1 or 0
``ccanalytics_newest_snapshot_timestamp_seconds``  gauge  (none): when the newest snapshot was
                                                          taken
=================================================  =====  =================================

Every sample also carries the labels naming its source (:func:`source_labels`: ``store``,
the store's folder name, unless told otherwise), so that two textfiles in one
node_exporter folder never write the same series (node_exporter keeps one and drops the
other's silently).

The figures' metrics are the registry's (each :data:`ccanalytics.measures.MEASURES`
entry with a policy key names its metric, and each ``"judgement"`` measure its metric
per rule): a new measure brings its metric. A figure not judged (a spend anomaly without
enough baseline) writes no sample.
``ccanalytics_idle_share_ratio``, the old name of ``ccanalytics_idle_cost_share_ratio``,
and ``ccanalytics_newest_snapshot_seconds``, the old name of the newest snapshot's
timestamp, are written beside the new for one release so that dashboards can move.
No webhook URL or other secret is ever a label.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccanalytics._durations import format_duration
from ccanalytics._files import write_atomic
from ccanalytics.errors import ArgumentsError, CheckOutputError
from ccanalytics.measures import MEASURES, by_policy_key

if TYPE_CHECKING:
    from ccanalytics.history.alerts._judge import Judgement, PolicyReport

__all__ = ["render_textfile", "source_labels", "write_textfile"]

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
#: A measure's unit -> the base unit its metrics name, and the factor to it (hours are
#: written as seconds, Prometheus' base unit of time).
_BASE_UNITS = {
    "USD": ("usd", 1.0),
    "0-1": ("ratio", 1.0),
    "ranks": ("ranks", 1.0),
    "pod-hours": ("pod_seconds", 3600.0),
    "robust z": ("z", 1.0),
}
#: The labels the metrics have of their own: a source label cannot be one of them.
_OWN_LABELS = frozenset({"cluster", "period", "window", "rule", "figure"})
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def source_labels(
    store: str | PathLike[str], labels: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The labels naming a textfile's source: ``store`` (the store's folder or prefix
    name) unless ``labels`` gives it, and ``labels``' others.

    Raises :class:`~ccanalytics.errors.ArgumentsError` for a name Prometheus does not
    take as a label, one starting ``__`` (reserved) or one the metrics have already.
    """
    name = str(store).rstrip("/").replace("\\", "/").rsplit("/", 1)[-1] or str(store)
    chosen = {"store": name, **(labels or {})}
    for key in chosen:
        if not _LABEL_NAME.fullmatch(key) or key.startswith("__"):
            raise ArgumentsError(
                f"{{textfile_labels}}: {key!r} is not a Prometheus label name "
                "(letters, digits and _, not starting with a digit or __)",
                "textfile_labels",
            )
        if key in _OWN_LABELS:
            raise ArgumentsError(
                f"{{textfile_labels}}: {key!r} is a label of the metrics themselves "
                f"({', '.join(sorted(_OWN_LABELS))})",
                "textfile_labels",
            )
    return chosen


def render_textfile(
    report: PolicyReport,
    snoozed: Collection[str] = (),
    labels: Mapping[str, str] | None = None,
) -> bytes:
    """The text format for ``report``'s judgements; ``snoozed`` holds judgement keys;
    ``labels`` (:func:`source_labels`) go on every sample."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(report, frozenset(snoozed), dict(labels or {})))
    return bytes(generate_latest(registry))


def write_textfile(
    path: str | PathLike[str],
    report: PolicyReport,
    snoozed: Collection[str] = (),
    labels: Mapping[str, str] | None = None,
) -> Path:
    """Replace ``path`` atomically with :func:`render_textfile`'s text.

    A path that cannot be written (a missing folder, a folder, a read-only disk) is a
    :class:`~ccanalytics.errors.CheckOutputError` naming it.
    """
    target = Path(path)
    text = render_textfile(report, snoozed, labels)
    try:
        return write_atomic(target, lambda sink: sink.write(text))
    except OSError as err:
        reason = err.strerror or str(err)
        raise CheckOutputError(f"cannot write the textfile {target}: {reason}", target) from None


class _Collector:
    """A one-shot prometheus_client collector over a policy report."""

    def __init__(
        self, report: PolicyReport, snoozed: frozenset[str], labels: dict[str, str]
    ) -> None:
        self.report = report
        self.snoozed = snoozed
        self.labels = labels

    def _gauge(self, name: str, doc: str, labels: list[str]) -> Any:
        from prometheus_client.core import GaugeMetricFamily

        return GaugeMetricFamily(f"ccanalytics_{name}", doc, labels=[*labels, *self.labels])

    def _add(self, family: Any, values: list[str], value: float) -> None:
        family.add_metric([*values, *self.labels.values()], value)

    def collect(self) -> Iterator[Any]:
        judgements = self.report.judgements
        yield from self._figures(judgements)
        rule_labels = ["rule", "figure", "period", "cluster"]
        for measure in _JUDGEMENT_METRICS:
            assert measure.metric is not None
            family = self._gauge(measure.metric.name, measure.metric.help, rule_labels)
            for j in judgements:
                value = _sample(getattr(j, measure.name))
                if value is not None:
                    self._add(family, _rule_labels(j), value)
            yield family
        yield from self._thresholds(judgements, rule_labels)
        flags: list[tuple[str, str, Callable[[Judgement], float]]] = [
            ("breached", "1 when the figure is over its limit", lambda j: float(j.breached)),
            (
                "snoozed",
                "1 when the rule is snoozed for this cluster",
                lambda j: float(j.key in self.snoozed),
            ),
        ]
        for name, doc, value_of in flags:
            family = self._gauge(name, doc, rule_labels)
            for j in judgements:
                self._add(family, _rule_labels(j), value_of(j))
            yield family
        if self.report.now is not None:
            for name, doc in (
                ("newest_snapshot_timestamp_seconds", "Unix time of the newest snapshot"),
                ("newest_snapshot_seconds", "deprecated: newest_snapshot_timestamp_seconds"),
            ):
                newest = self._gauge(name, doc, [])
                self._add(newest, [], self.report.now.timestamp())
                yield newest

    def _thresholds(
        self, judgements: tuple[Judgement, ...], rule_labels: list[str]
    ) -> Iterator[Any]:
        """Each rule's limits, one metric per unit (a USD limit and a share never share a name)."""
        families: dict[str, Any] = {}
        for j in judgements:
            unit, factor = _BASE_UNITS[by_policy_key(j.threshold.figure).unit]
            if unit not in families:
                doc = f"the limit a rule sets on a figure in {unit.replace('_', ' ')}"
                families[unit] = self._gauge(f"threshold_{unit}", doc, rule_labels)
            self._add(families[unit], _rule_labels(j), j.threshold.limit * factor)
        yield from families.values()

    def _figures(self, judgements: tuple[Judgement, ...]) -> Iterator[Any]:
        metrics = [(figure, *spec) for figure, spec in _FIGURE_METRICS.items()]
        metrics += [
            (figure, old, "gauge", f"deprecated: {_FIGURE_METRICS[figure][0]}", False)
            for old, figure in _OLD_METRICS.items()
        ]
        for figure, name, _kind, doc, periodic in metrics:
            factor = _BASE_UNITS[by_policy_key(figure).unit][1]
            family = self._gauge(name, doc, ["cluster", "period" if periodic else "window"])
            seen: set[tuple[str, str]] = set()
            for j in judgements:
                if j.threshold.figure != figure:
                    continue
                span = j.threshold.period or format_duration((j.end - j.start).total_seconds())
                if (j.cluster_id, span) in seen or j.value != j.value:  # one sample; NaN: none
                    continue
                seen.add((j.cluster_id, span))
                self._add(family, [j.cluster_id, span], j.value * factor)
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

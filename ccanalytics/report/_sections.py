"""The report's sections, one function each, in the order the page shows them.

Every section is a function of one :class:`_Report` (the frames, the findings computed
once, and the options) returning HTML; :data:`SECTIONS` lists them in page order, so
a new section (a window over history, say) is one function and one entry. The plot
section lives in :mod:`ccanalytics.report._figures`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

import pandas as pd
from markupsafe import Markup

from ccanalytics.analysis import BY_GPU_MEASURES, POD_STATES
from ccanalytics.measures import by_name, waste_classes
from ccanalytics.measures.rules import DAYS_PER_MONTH
from ccanalytics.report._actions import Headline
from ccanalytics.report._cards import measure_cards, measure_column
from ccanalytics.report._findings import (
    HOURS_PER_DAY,
    _Findings,
    _plural,
    _sentences,
    _usd,
)
from ccanalytics.report._html import _Card, _cards, _columns, _details, _note, _table
from ccanalytics.report._templates import block

# Underscored names are for ``report``, not public API.
__all__ = [
    "TEXT_SECTIONS",
    "_Report",
    "_Section",
    "_headline",
    "_headline_cards",
    "live_cards",
    "live_headline",
]


@dataclass(frozen=True)
class _Report:
    """What every section reads: the frames, their findings, and the page's options."""

    pods: pd.DataFrame
    gpus: pd.DataFrame
    findings: _Findings
    title: str
    generated_at: datetime | None
    cluster_ids: Sequence[str] | None
    max_rank_plots: int


#: A section: its HTML (Markup, from the templates; "" when it has nothing to show).
_Section = Callable[[_Report], Markup]


def _header(r: _Report) -> Markup:
    f = r.findings
    meta = []
    if r.generated_at is not None:
        meta.append(f"Generated {r.generated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
    loaded = sorted(str(c) for c in r.pods["cluster_id"].dropna().unique())
    meta.append(f"{_plural(f.clusters, 'cluster')}: " + ", ".join(loaded))
    return block("header", r.title, ". ".join(meta))


def _headline(r: _Report) -> Markup:
    return block("headline", " ".join(_sentences(r.findings)))


def _headline_cards(r: _Report) -> Markup:
    """The reading's headline figures (first on the page without a store)."""
    return _cards(live_cards(r))


def live_cards(r: _Report) -> list[_Card]:
    """The registry's cards at the reading's rate, then the listing's own facts.

    The measures' cards (:func:`~ccanalytics.report._cards.measure_cards`: spend, idle
    and unused spend with their shares, straggling ranks, pods without metrics or not
    running, ...) read the summary's totals; the waste classes are one card. Clusters that
    could not be loaded are not a measure: no pod row of theirs was read, so no sum over
    pod rows counts them.
    """
    f = r.findings
    slow = f.stragglers
    slow_note = ", ".join(f"{row.cluster_id} rank {row.rank}" for row in slow.head(3).itertuples())
    if len(slow) > 3:
        slow_note += f", +{len(slow) - 3} more"
    day = f.total_cost * HOURS_PER_DAY
    states = ", ".join(f"{n} {state}" for state, n in f.states.items())
    notes = {
        "total_cost": f"{day:,.0f} USD/day, {day * DAYS_PER_MONTH:,.0f} USD/{DAYS_PER_MONTH} days",
        "idle_cost": _plural(f.idle_pods, "pod"),
        "stragglers": slow_note or "none",
        "no_metrics_pod_hours": _usd(f.silent_cost) if len(f.silent) else "none",
        "not_running_pod_hours": states or "none",
    }
    cards = measure_cards(f.totals, live=True, notes=notes, kinds=_LIVE_CARD_KINDS)
    cards.append(_waste_card(f))
    if f.failed:
        cards.append(("could not load", str(len(f.failed)), ", ".join(f.failed), True))
    return cards


#: The live page's measure cards: every kind but the waste classes, which one card sums.
_LIVE_CARD_KINDS: Final = ("sum", "share", "count")


def live_headline(f: _Findings) -> Headline:
    """The reading's waste per day at its rate: the registry's waste, and each class."""
    return Headline.of(f.total, HOURS_PER_DAY, "at this reading's rate")


def _waste_card(f: _Findings) -> _Card:
    """The waste classes' USD/h over every cluster: their total, and each class that wastes."""
    total = f.total("waste_cost")
    per_class = [(m.label, f.total(m.name)) for m in waste_classes()]
    note = "; ".join(f"{label} {_usd(value)}" for label, value in per_class if value > 0)
    return ("waste by class", _usd(total), note or "none", total > 0)


def _notes(r: _Report) -> Markup:
    parts = []
    empty = sorted(
        set(r.cluster_ids or ()) - set(r.pods["cluster_id"].dropna()) - set(r.findings.failed)
    )
    if empty:
        parts.append(_note(f"Clusters with no pods: {', '.join(empty)}."))
    parts.append(
        _note(
            "Costs are each pod's price in USD per hour; utilization is in percent. "
            "Projections per day and per 30 days assume today's rate holds. "
            f"A running GPU pod is idle when every one of its GPUs is below "
            f"{r.findings.idle_threshold:g}%; a rank straggles when its mean GPU utilization "
            "is far below its cluster's median (robust z-score and at least 10 points). "
            "Only running pods report metrics, so only they are judged."
        )
    )
    return Markup("\n").join(parts)


def _shown_tables(r: _Report) -> list[tuple[str, str]]:
    """The table sections the page holds, (anchor, title): one with no row is left out."""
    f = r.findings
    tables = [
        ("clusters", "Clusters", f.summary),
        ("idle", "Idle pods", f.idle),
        ("stragglers", "Stragglers", f.stragglers),
        ("gpu-types", "GPU types", f.by_gpu),
        ("no-metrics", "No metrics", f.silent),
        ("not-running", "Not running", f.not_running),
    ]
    return [(anchor, title) for anchor, title, frame in tables if len(frame)]


def _shown(r: _Report, anchor: str) -> bool:
    return any(a == anchor for a, _ in _shown_tables(r))


def _nav(r: _Report) -> Markup:
    links = _shown_tables(r)
    if r.findings.failed:
        links.append(("could-not-load", "Could not load"))
    links.append(("plots", "Plots"))
    return block("nav", links)


def _heading(anchor: str, title: str) -> Markup:
    return block("heading", anchor, title)


def _states_text(summary: pd.DataFrame) -> pd.Series:
    """Per cluster, its pods not running by state: ``2 provisioning, 1 exited`` (or ``–``)."""
    text = pd.Series("", index=summary.index, dtype="object")
    states = [s.lower() for s in POD_STATES if s != "RUNNING"]
    for state, column in [*((s, f"pods_{s}") for s in states), ("other", "pods_other_status")]:
        counts = summary[column].fillna(0).astype(int)
        piece = counts.astype(str) + f" {state}"
        joined = text.where(text == "", text + ", ") + piece
        text = text.where(counts == 0, joined)
    return text.where(text != "", "–")


def _clusters(r: _Report) -> Markup:
    """The columns a reader needs first, visible at 1,280 px; the rest folded below."""
    if not _shown(r, "clusters"):
        return Markup()  # no row: no section
    summary = r.findings.summary.sort_values("cost_per_hour", ascending=False, kind="stable")
    summary = summary.assign(not_running=_states_text(summary))
    return (
        _heading("clusters", "Clusters")
        + _table(
            summary,
            _columns(
                ("cluster_id", "cluster", "text"),
                ("gpus", "GPUs", "int"),
                measure_column("total_cost", live=True),
                ("gpu_util_mean", "GPU util %", "pct"),
                ("idle_pods", "idle pods", "int"),
                measure_column("idle_cost", live=True),
                measure_column("unused_cost", live=True),
                measure_column("stragglers", live=True),
            ),
            "No pods.",
        )
        + _details(
            "More columns: pods by state, cost-weighted utilization, idle share",
            _table(
                summary,
                _columns(
                    ("cluster_id", "cluster", "text"),
                    ("pods", "pods", "int"),
                    ("pods_running", "running", "int"),
                    ("not_running", "not running", "text"),
                    ("running_without_metrics", "running, no metrics", "int"),
                    ("gpu_util_cost_weighted", "cost-weighted GPU util %", "pct"),
                    measure_column("idle_gpu_cost_share", live=True),
                ),
                "No pods.",
            ),
        )
    )


def _idle(r: _Report) -> Markup:
    """Which pod, how idle, what it costs now and since it started; ids and uptime below."""
    if not _shown(r, "idle"):
        return Markup()  # no row: no section
    idle = r.findings.idle
    return (
        _heading("idle", "Idle pods")
        + _table(
            idle,
            _columns(
                ("cluster_id", "cluster", "text"),
                ("name", "pod", "text"),
                ("gpu_type", "GPU type", "text"),
                ("gpu_count", "GPUs", "int"),
                ("gpu_util_mean", "GPU util %", "pct"),
                measure_column("idle_cost", live=True, column="wasted_cost_per_hour"),
                ("cost_so_far", "USD since it started", "usd"),
            ),
            "No idle GPU pods.",
        )
        + _details(
            "More columns: pod id, rank, busiest GPU, uptime",
            _table(
                idle,
                _columns(
                    ("cluster_id", "cluster", "text"),
                    ("name", "pod", "text"),
                    ("pod_id", "pod id", "text"),
                    ("rank", "rank", "int"),
                    ("gpu_util_max", "busiest GPU %", "pct"),
                    ("uptime_s", "uptime", "duration"),
                ),
                "No idle GPU pods.",
            ),
        )
        + _note(
            "Uptime: since the pod's container last started. USD since it started: uptime × "
            "USD per hour, a lower bound if the container restarted."
        )
    )


def _stragglers(r: _Report) -> Markup:
    if not _shown(r, "stragglers"):
        return Markup()  # no row: no section
    return _heading("stragglers", "Straggling ranks") + _table(
        r.findings.stragglers,
        _columns(
            ("cluster_id", "cluster", "text"),
            ("rank", "rank", "int"),
            ("name", "pod", "text"),
            ("pod_id", "pod id", "text"),
            ("gpu_util_mean", "GPU util %", "pct"),
            ("cluster_median", "cluster median %", "pct"),
            ("deficit", "points below median", "pct"),
            ("robust_z", "robust z", "num"),
        ),
        "No straggling ranks.",
    )


def _gpu_types(r: _Report) -> Markup:
    if not _shown(r, "gpu-types"):
        return Markup()  # no row: no section
    return (
        _heading("gpu-types", "Cost by GPU type")
        + _note(
            "Every column of a row describes the same pods: the running GPU pods of that "
            "type that report utilization (pods without metrics are in their own table)."
        )
        + _table(
            r.findings.by_gpu,
            _columns(
                ("gpu_type", "GPU type", "text"),
                *(measure_column(name, live=True) for name in BY_GPU_MEASURES),
            ),
            "No running GPU pod reports utilization.",
        )
        + _note(
            f"{_label('cost_per_utilized_gpu_hour')}: {_meaning('cost_per_utilized_gpu_hour')}."
        )
    )


def _label(name: str) -> str:
    """A measure's label as a sentence starts it."""
    label = by_name(name).label
    return label[:1].upper() + label[1:]


def _meaning(name: str) -> str:
    return by_name(name).meaning


_POD_COLUMNS: Final = (
    ("cluster_id", "cluster", "text"),
    ("name", "pod", "text"),
    ("pod_id", "pod id", "text"),
    ("rank", "rank", "int"),
    ("status", "status", "text"),
    ("gpu_type", "GPU type", "text"),
    ("gpu_count", "GPUs", "int"),
    ("cost", "USD/h", "usd"),
)


def _no_metrics(r: _Report) -> Markup:
    if not _shown(r, "no-metrics"):
        return Markup()  # no row: no section
    return _heading("no-metrics", "Running pods without metrics") + _table(
        r.findings.silent, _columns(*_POD_COLUMNS), "Every running pod reports metrics."
    )


def _not_running(r: _Report) -> Markup:
    if not _shown(r, "not-running"):
        return Markup()  # no row: no section
    return _heading("not-running", "Pods not running") + _table(
        r.findings.not_running, _columns(*_POD_COLUMNS), "Every pod is running."
    )


def _could_not_load(r: _Report) -> Markup:
    failed = r.findings.failed
    if not failed:
        return Markup()
    frame = pd.DataFrame({"cluster_id": list(failed), "reason": list(failed.values())})
    return (
        _heading("could-not-load", "Could not load")
        + _note("These clusters are missing from every figure and table of this report.")
        + _table(frame, _columns(("cluster_id", "cluster", "text"), ("reason", "why", "text")), "")
    )


#: The sections before the plots, in page order.
TEXT_SECTIONS: Final[tuple[_Section, ...]] = (
    _header,
    _headline,
    _headline_cards,
    _notes,
    _nav,
    _could_not_load,
    _clusters,
    _idle,
    _stragglers,
    _gpu_types,
    _no_metrics,
    _not_running,
)

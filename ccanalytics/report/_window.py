"""The report's "over the last 24 h" section: what the stored history says about a window.

:func:`window_findings` asks :class:`~ccanalytics.History` once for each answer over
the window that ends at the store's newest snapshot (spend, idle and unused spend,
per cluster and per day; waste by class; stragglers; pods' lifetimes; utilization over
time; right-sizing hints), and
:func:`render_window_section` lays them out as plain sentences, tables and the three
time plots. Every figure printed is History's own, rounded to the cent, so the report,
``ccanalytics check`` and a notebook agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from os import PathLike
from typing import Any

import pandas as pd
from markupsafe import Markup

from ccanalytics._durations import describe_duration
from ccanalytics.measures import MEASURES, Params, by_name
from ccanalytics.report._cards import measure_cards, measure_column
from ccanalytics.report._draw import Plot, figure
from ccanalytics.report._html import _Card, _columns, _table
from ccanalytics.report._templates import block

__all__ = [
    "WindowFindings",
    "flag_runs",
    "render_window_section",
    "window_cards",
    "window_findings",
    "window_sentences",
]

#: A pod idle for at least this share of its observed time is "idle most of the window".
MOSTLY_IDLE_SHARE = 0.5
#: Bucket widths the utilization plot may use; the finest giving <= MAX_BUCKETS is chosen.
BUCKET_WIDTHS = ("5min", "15min", "30min", "1h", "3h", "6h", "1D")
MAX_BUCKETS = 120
#: Clusters drawn as a rank x time heatmap at most (those with stragglers first).
MAX_HEATMAPS = 3
#: Rows in the idle-pods table at most.
MAX_POD_ROWS = 20
#: The registry's measures the window's totals hold (History.measures over the window):
#: every sum, share and waste class, which the cards and sentences read.
WINDOW_MEASURES = tuple(m.name for m in MEASURES if m.kind in ("sum", "share", "waste"))
#: The waste chart's measures per cluster: idle pods, the unused capacity of the pods
#: in use, their sum (a bar's length) and its share of the cluster's spend.
WASTE_MEASURES = (
    "idle_cost",
    "busy_unused_cost",
    "idle_and_unused_cost",
    "idle_and_unused_cost_share",
)
#: The window's hours, from :meth:`~ccanalytics.history.History.idle_cost`.
_HOURS = ("observed_hours", "unobserved_hours")


@dataclass(frozen=True)
class WindowFindings:
    """History's answers over one window (frames as History returns them)."""

    window: timedelta
    start: pd.Timestamp
    end: pd.Timestamp
    #: The window's hours, each of :data:`WINDOW_MEASURES` and the chronic stragglers.
    totals: pd.Series
    by_cluster: pd.DataFrame
    by_day: pd.DataFrame
    stragglers: pd.DataFrame  #: every rank flagged at least once (min_share=0)
    lifetimes: pd.DataFrame
    utilization: pd.DataFrame  #: by cluster
    rank_utilization: pd.DataFrame  #: by rank, for the heatmaps' clusters
    #: Transient stragglers' runs of consecutive flagged snapshots (see :func:`flag_runs`).
    runs: pd.DataFrame
    #: The thresholds every answer was judged at (the chronic share among them).
    params: Params = field(default_factory=Params)
    #: Right-sizing hints over the window (History.rightsizing), largest saving first.
    rightsizing: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: Per cluster, History.measures of :data:`WASTE_MEASURES`: what the waste chart draws.
    waste_by_cluster: pd.DataFrame = field(default_factory=pd.DataFrame)


#: Columns of :func:`flag_runs`.
RUN_COLUMNS = ("cluster_id", "rank", "start", "end", "snapshots")


def flag_runs(flags: pd.DataFrame, ranks: pd.DataFrame) -> pd.DataFrame:
    """Each (cluster, rank) of ``ranks``: its runs of consecutive flagged snapshots.

    ``flags`` is :meth:`History.straggler_flags` over the window: the store's own
    judgement of every snapshot, at the thresholds the rest of the report uses (never a
    second judgement here). A run is consecutive snapshots of the cluster in which the
    rank was flagged: ``start`` is the first, ``end`` the cluster's next snapshot after
    the last (or the last itself, when none follows), so ``end - start`` is the time the
    run covers; ``snapshots`` counts them.
    """
    out: list[tuple[object, ...]] = []
    wanted = {(str(c), int(r)) for c, r in zip(ranks["cluster_id"], ranks["rank"], strict=True)}
    mine = flags[flags["cluster_id"].isin({c for c, _ in wanted})]
    for cid, cluster in mine.groupby("cluster_id", sort=True):
        times = sorted(cluster["observed_at"].dropna().unique())
        flagged: dict[int, set[object]] = {}
        hit = cluster[cluster["flagged"].fillna(False).astype(bool)]
        for when, rank in zip(hit["observed_at"], hit["rank"].astype(int), strict=True):
            flagged.setdefault(int(rank), set()).add(when)
        for rank in sorted(r for c, r in wanted if c == str(cid)):
            marks = [t in flagged.get(rank, set()) for t in times]
            i = 0
            while i < len(times):
                if not marks[i]:
                    i += 1
                    continue
                j = i
                while j + 1 < len(times) and marks[j + 1]:
                    j += 1
                end = times[j + 1] if j + 1 < len(times) else times[j]
                out.append((str(cid), rank, times[i], end, j - i + 1))
                i = j + 1
    frame = pd.DataFrame(out, columns=list(RUN_COLUMNS))
    for column in ("start", "end"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame


def span_text(f: WindowFindings) -> str:
    """The window as a reader says it: ``24 h``, ``7 days``."""
    return describe_duration(f.window)


def bucket_width(window: timedelta) -> str:
    """The finest of :data:`BUCKET_WIDTHS` that cuts ``window`` into <= MAX_BUCKETS buckets."""
    for width in BUCKET_WIDTHS:
        if window / pd.Timedelta(width) <= MAX_BUCKETS:
            return width
    return BUCKET_WIDTHS[-1]


def window_findings(
    store: str | PathLike[str],
    window: timedelta,
    *,
    idle_threshold: float | None = None,
    params: Params | None = None,
) -> WindowFindings:
    """History's answers over the ``window`` ending at the store's newest snapshot.

    Every answer at ``params``'s thresholds (``idle_threshold`` overrides its idle line):
    the stragglers, their runs, the idle costs and the pods' idle time share.

    Raises :class:`~ccanalytics.errors.StoreError` when the store holds no snapshot.
    """
    from ccanalytics.errors import StoreError
    from ccanalytics.history import History

    with History(store) as history:
        start, _ = history.window_bounds(window)
        if start is None:
            raise StoreError(f"the store {history.store} holds no snapshot", history.store)
        since = window
        judged_by = Params.of(params, idle_threshold=idle_threshold)
        slow = history.stragglers(since, min_share=0.0, params=judged_by)
        slow = slow[slow["flagged"] > 0].reset_index(drop=True)
        freq = bucket_width(window)
        heat = list(dict.fromkeys(slow["cluster_id"].astype(str)))[:MAX_HEATMAPS]
        ranks = history.utilization(since, freq=freq, by="rank")
        chronic = judged_by.chronic_share
        transient = slow[slow["share"] < chronic]
        runs = flag_runs(history.straggler_flags(since, params=judged_by), transient)
        # The hours from idle_cost (its documented columns), every other figure of the
        # window from History.measures: the sums, shares and waste classes, and the count
        # of chronic stragglers, each the registry's.
        hours = history.idle_cost(since, by=None, params=judged_by).iloc[0][list(_HOURS)]
        sums = history.measures(WINDOW_MEASURES, since, by=None, params=judged_by)
        counted = history.measures("stragglers", since, by=None, params=judged_by)
        return WindowFindings(
            window=window,
            start=start,
            end=start + window,
            totals=pd.concat(
                [hours, sums.iloc[0][list(WINDOW_MEASURES)], counted.iloc[0][["stragglers"]]]
            ),
            by_cluster=history.idle_cost(since, by="cluster", params=judged_by),
            waste_by_cluster=history.measures(
                WASTE_MEASURES, since, by="cluster", params=judged_by
            ),
            by_day=history.idle_cost(since, by="day", params=judged_by),
            stragglers=slow,
            lifetimes=history.pod_lifetimes(since, params=judged_by),
            params=judged_by,
            utilization=history.utilization(since, freq=freq, by="cluster"),
            rank_utilization=ranks[ranks["cluster_id"].isin(heat)].reset_index(drop=True),
            runs=runs,
            rightsizing=history.rightsizing(since, params=judged_by),
        )


def _usd(value: Any) -> str:
    return f"{float(value):,.2f} USD"


def _share(totals: pd.Series, measure: str) -> str:
    """History's share ``measure`` (a registry share) as the registry writes it."""
    value = totals.get(measure)
    return by_name(measure).format(0.0 if value is None or pd.isna(value) else float(value))


def window_sentences(f: WindowFindings) -> list[str]:
    """The section's opening paragraph, as plain sentences (escaped by the caller)."""
    span = describe_duration(f.window)
    t = f.totals
    out = [
        f"Over the last {span} ({f.start:%Y-%m-%d %H:%M} to {f.end:%Y-%m-%d %H:%M} UTC) the "
        f"fleet spent {_usd(t['total_cost'])}: {_usd(t['idle_cost'])} "
        f"({_share(t, 'idle_cost_share')}) on idle GPU pods, and "
        f"{_usd(t['unused_cost'])} ({_share(t, 'unused_cost_share')}) "
        "paid for GPU capacity left unused."
    ]
    chronic = f.stragglers[f.stragglers["share"] >= f.params.chronic_share]
    transient = f.stragglers[f.stragglers["share"] < f.params.chronic_share]
    if len(chronic):
        named = ", ".join(
            f"{row.cluster_id} rank {row.rank} ({row.share:.0%} of {row.snapshots} snapshots)"
            for row in chronic.itertuples(index=False)
        )
        out.append(f"Chronic stragglers, flagged in at least half of their snapshots: {named}.")
    else:
        out.append("No rank straggled in half of its snapshots or more.")
    if len(transient):
        named = "; ".join(_transient(f, row) for row in transient.itertuples(index=False))
        out.append(f"Straggled for a stretch only: {named}.")
    idle = f.lifetimes[f.lifetimes["idle_time_share"].fillna(0) >= MOSTLY_IDLE_SHARE]
    if len(idle):
        named = ", ".join(
            f"{row.cluster_id} {row.name} (idle {row.idle_time_share:.0%} of "
            f"{row.observed_hours:.1f} h, {_usd(row.total_cost)} in this window)"
            for row in idle.itertuples(index=False)
        )
        out.append(f"Pods idle most of the time they were watched: {named}.")
    else:
        out.append("No pod was idle for most of the time it was watched.")
    # Only the clusters with a figure that shows as non-zero: 0.0 h is noise.
    unobserved = f.by_cluster[f.by_cluster["unobserved_hours"].fillna(0).round(1) > 0]
    if len(unobserved):
        named = ", ".join(
            f"{row.cluster_id} {row.unobserved_hours:.1f} h"
            for row in unobserved.itertuples(index=False)
        )
        out.append(
            f"Not observed: {float(t['unobserved_hours']):.1f} cluster-hours ({named}); "
            "that time is counted neither idle nor busy."
        )
    return out


def _run_text(start: pd.Timestamp, end: pd.Timestamp) -> str:
    return f"{start:%H:%M} to {end:%H:%M} UTC ({describe_duration((end - start).to_pytimedelta())})"


def _transient(f: WindowFindings, row: Any) -> str:
    """``cl-x rank 5: flagged in 48 of 288 snapshots, 10:00 to 14:00 UTC (4 h)``."""
    runs = f.runs[(f.runs["cluster_id"] == row.cluster_id) & (f.runs["rank"] == row.rank)]
    head = (
        f"{row.cluster_id} rank {row.rank}: flagged in {row.flagged} of {row.snapshots} snapshots"
    )
    if runs.empty:
        return head
    if len(runs) <= 3:
        spans = ", ".join(_run_text(r.start, r.end) for r in runs.itertuples(index=False))
        return f"{head}, {spans}"
    longest = (
        runs.assign(length=runs["end"] - runs["start"])
        .sort_values(["length", "start"], ascending=[False, True], kind="stable")
        .iloc[0]
    )
    return (
        f"{head} in {len(runs)} runs, the longest "
        f"{describe_duration(longest['length'].to_pytimedelta())} at {longest['start']:%H:%M} UTC"
    )


def _wasting(waste: pd.DataFrame) -> int:
    """How many clusters wasted anything (bars of the waste chart)."""
    return min(int((waste["idle_and_unused_cost"].fillna(0) > 0).sum()), 15)


def window_cards(f: WindowFindings) -> list[_Card]:
    """The window's figures: a card per registry measure it marks ``card``, from History.

    Straggling ranks are the registry's (flagged in at least the chronic share of their
    snapshots); the note says how many more straggled for a stretch only.
    """
    span = describe_duration(f.window)
    chronic = int(f.totals.get("stragglers", 0))
    notes = {
        "total_cost": f"over the last {span}",
        "stragglers": f"{len(f.stragglers) - chronic} more for a stretch",
    }
    return measure_cards(f.totals, live=False, notes=notes)


def render_window_section(f: WindowFindings) -> Markup:
    """The section's HTML: headline, tables and the three time plots."""
    span = describe_duration(f.window)
    by_cluster = _table(
        f.by_cluster.sort_values("total_cost", ascending=False, kind="stable"),
        _columns(
            ("cluster_id", "cluster", "text"),
            ("observed_hours", "hours observed", "num"),
            measure_column("total_cost", live=False),
            measure_column("idle_cost", live=False),
            measure_column("idle_gpu_hours", live=False),
            measure_column("unused_cost", live=False),
            ("unobserved_hours", "hours not observed", "num"),
        ),
        "No cluster was observed in the window.",
    )
    stragglers = _table(
        f.stragglers,
        _columns(
            ("cluster_id", "cluster", "text"),
            ("rank", "rank", "int"),
            ("snapshots", "snapshots", "int"),
            ("flagged", "flagged", "int"),
            ("share", "share flagged", "share"),
            ("mean_deficit", "mean points below median", "pct"),
        ),
        "No rank was flagged in any snapshot.",
    )
    idle_pods = _table(
        f.lifetimes[f.lifetimes["idle_hours"] > 0].head(MAX_POD_ROWS),
        _columns(
            ("cluster_id", "cluster", "text"),
            ("name", "pod", "text"),
            ("observed_hours", "hours watched", "num"),
            measure_column("idle_time_share", live=False),
            measure_column("idle_cost", live=False),
            measure_column("total_cost", live=False),
        ),
        "No pod was idle in the window.",
    )
    figures = [
        figure(
            Plot("waste_breakdown", f.waste_by_cluster),
            (10.0, 1.6 + 0.42 * max(int(_wasting(f.waste_by_cluster)), 1)),
            f"Waste by cluster over the last {span}",
            "Only what was wasted, most first: idle GPU pods (hatched), then the rest of "
            "the unused capacity of pods in use; beside each bar, its share of the spend.",
        ),
        figure(
            Plot("utilization_over_time", f.utilization),
            (10.0, 4.2),
            f"GPU utilization over the last {span}",
            "Mean GPU utilization per cluster; a gap is time no snapshot covered.",
        ),
        figure(
            Plot("idle_cost_by_day", f.by_day),
            (10.0, 4.0),
            "Idle and unused cost per day",
            "Each UTC day's spend in the window: idle pods, unused capacity, the rest.",
        ),
    ]
    ranks = f.rank_utilization
    # One cluster's rows per figure (pickled to a worker), in the order they first appear.
    for cluster_id, rows in ranks.groupby(ranks["cluster_id"].astype(str), sort=False):
        figures.append(
            figure(
                Plot("rank_time_heatmap", rows, cluster_id=cluster_id),
                (10.0, 5.0),
                f"{cluster_id}: ranks over time",
                "One row per rank; a dark row all along is a chronic straggler, "
                "a dark patch a transient one.",
            )
        )
    sentences = " ".join(window_sentences(f))
    return block("window", span, sentences, by_cluster, stragglers, idle_pods, figures)

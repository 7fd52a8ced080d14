"""The report's plot section: fleet-wide charts, then some clusters rank by rank.

Charts stay readable and the file small at any fleet size: the cost charts draw at
most :data:`MAX_COST_BARS` bars (the most expensive groups, then "N others"), and at most ``max_rank_plots`` clusters are drawn rank by rank, those with
findings (idle pods, straggling ranks) first, then the most expensive.
"""

from __future__ import annotations

from typing import Final

import pandas as pd
from markupsafe import Markup

from ccanalytics.measures import by_name
from ccanalytics.plots.reads import COST_BREAKDOWN, COST_VS_UTILIZATION
from ccanalytics.report._draw import Plot, figure
from ccanalytics.report._findings import _Findings
from ccanalytics.report._html import _note
from ccanalytics.report._sections import _Report
from ccanalytics.report._templates import block

# Underscored names are for ``report``, not public API.
__all__ = ["MAX_COST_BARS", "MAX_RANK_PLOTS", "_plots", "_rank_clusters"]

#: Clusters drawn rank by rank at most by default; every cluster is in the tables, and
#: those not drawn are named under the plots. Each drawn cluster adds two figures (a rank
#: plot and a heatmap), each as costly to draw as a fleet-wide chart and below the fold.
MAX_RANK_PLOTS: Final = 3
#: Bars of a cost chart at most: the most expensive groups, then one bar for the others
#: (so the figure keeps its size at any fleet size).
MAX_COST_BARS: Final = 20
#: Height of a GPU heatmap at most, inches. Its cost grows with its pixels (the image
#: is resampled and coloured at output size): 8 inches drew 100 ranks in 0.46 s of CPU,
#: 5.5 in 0.25 s, and a 100-rank cluster still gets 5 pixels a rank (10 at 2x).
MAX_HEATMAP_HEIGHT: Final = 5.5
#: Clusters not drawn that the note under the plots names at most.
MAX_NAMED_UNDRAWN: Final = 20


def _rank_clusters(gpus: pd.DataFrame, findings: _Findings) -> list[str]:
    """GPU clusters with at least two ranks reporting: with findings first, then by cost."""
    reporting = gpus[gpus["util"].notna() & gpus["rank"].notna()]
    ranks = reporting.groupby("cluster_id")["rank"].nunique()
    multi = ranks[ranks >= 2].index.astype(str)
    per_cluster = findings.summary.set_index("cluster_id")[str(by_name("total_cost").live)]
    cost = per_cluster.astype("float64")
    flagged = sorted(findings.clusters_with_findings)
    order = pd.DataFrame(
        {
            "cluster_id": multi,
            "plain": ~multi.isin(flagged),
            "cost": -cost.reindex(multi).fillna(0.0).to_numpy(),
        }
    ).sort_values(["plain", "cost", "cluster_id"], kind="stable")
    return order["cluster_id"].tolist()


def _verdicts(r: _Report, index: pd.Index) -> pd.DataFrame:
    """The findings' verdicts of these pods, only the columns a plot reads: the plot is
    pickled to a worker, which then need not judge them again."""
    return r.findings.verdicts.loc[index, ["idle", "judged"]]


def _groups(pods: pd.DataFrame, by: str) -> int:
    """How many bars a cost chart by ``by`` would need without a cap."""
    groups = pods[by].astype("string").nunique(dropna=True)
    return int(groups) + int(by == "gpu_type" and bool(pods[by].isna().any()))


def _cost_chart(r: _Report, by: str, what: str) -> Markup:
    n_groups = _groups(r.pods, by)
    n_bars = min(n_groups, MAX_COST_BARS)
    threshold = r.findings.idle_threshold
    caption = (
        f"Each bar is a {what}'s cost per hour, split into pods in use, idle GPU pods "
        "(hatched) and pods without metrics (dotted)."
    )
    if n_groups > MAX_COST_BARS:
        caption += (
            f" The {MAX_COST_BARS - 1} most expensive of {n_groups} {what}s; the last bar "
            "sums the others (every one is in the tables)."
        )
    return figure(
        Plot(
            "cost_breakdown",
            r.pods[list(COST_BREAKDOWN)],  # only what it reads: it is pickled to a worker
            by="cluster" if by == "cluster_id" else "gpu_type",
            idle_threshold=threshold,
            max_bars=MAX_COST_BARS,
        ),
        (10.0, 1.4 + 0.45 * max(n_bars, 1)),
        f"Cost per hour by {what}",
        caption,
    )


def _waste(r: _Report) -> Markup:
    """Idle and unused-capacity cost per cluster and per GPU type, ranked by waste."""
    parts = []
    # Per GPU type, of the GPU pods alone: their spend is the GPU spend.
    for frame, by, what in (
        (r.findings.summary, "cluster_id", "cluster"),
        (r.findings.waste_by_gpu, "gpu_type", "GPU type"),
    ):
        n_bars = min(int((frame[WASTED_LIVE].fillna(0) > 0).sum()), MAX_COST_BARS)
        parts.append(
            figure(
                Plot(
                    "waste_breakdown",
                    frame,
                    by=by,
                    idle=str(by_name("idle_cost").live),
                    unused=str(by_name("busy_unused_cost").live),
                    share=str(by_name("idle_and_unused_cost_share").live),
                    unit="USD/h",
                    max_bars=MAX_COST_BARS,
                ),
                (10.0, 1.6 + 0.42 * max(n_bars, 1)),
                f"Waste per hour by {what}",
                WASTE_CAPTION,
            )
        )
    return Markup("\n").join(parts)


#: The waste charts' groups that waste anything (a bar each): the registry's sum.
WASTED_LIVE: Final = str(by_name("idle_and_unused_cost").live)
#: The waste charts' caption, live and over a window.
WASTE_CAPTION: Final = (
    "Only what is wasted, most first: idle GPU pods (hatched), then the unused capacity "
    "of the pods in use. Beside each bar, its share of the group's spend."
)


def _scatter(r: _Report) -> Markup:
    threshold = r.findings.idle_threshold
    return figure(
        Plot(
            "cost_vs_utilization",
            r.pods[list(COST_VS_UTILIZATION)],
            idle_threshold=threshold,
            verdicts=_verdicts(r, r.pods.index),
        ),
        (10.0, 5.0),
        "Cost vs GPU utilization per pod",
        "One point per GPU pod. Points in the shaded band on the left are paid for "
        "and doing nothing.",
    )


def _rank_caption(r: _Report, cid: str) -> str:
    """What the rank plot shows, naming stragglers and idle ranks only where it has them."""
    caption = (
        "Bars: mean GPU utilization per rank, with the range over its GPUs; "
        "markers: CPU and memory."
    )
    if r.findings.stragglers["cluster_id"].eq(cid).any():
        caption += " Straggling ranks are vermillion and hatched."
    if r.findings.idle["cluster_id"].eq(cid).any():
        caption += " Idle ranks are reddish purple, in a shaded column."
    return caption


def _one_cluster(r: _Report, cid: str) -> Markup:
    slow = r.findings.stragglers
    pods = r.pods[r.pods["cluster_id"].eq(cid).fillna(False)]  # its rows: pickled to a worker
    gpus = r.gpus[r.gpus["cluster_id"].eq(cid).fillna(False)]
    # The pods' ranks: one that lists no GPU (exited) is a row of the heatmap too, so
    # both figures count the ranks the cluster has.
    ranks = sorted(int(rank) for rank in pods["rank"].dropna().unique())
    return Markup("\n").join(
        [
            block("subheading", cid),
            figure(
                # Every threshold of the report's, the idle line among them: the plot marks
                # the ranks the tables name, and only those.
                Plot(
                    "utilization_by_rank",
                    pods,
                    cluster_id=cid,
                    stragglers=slow,
                    params=r.findings.params,
                    verdicts=_verdicts(r, pods.index),
                ),
                (10.0, 4.4),
                f"{cid}: utilization by rank",
                _rank_caption(r, cid),
            ),
            figure(
                Plot("gpu_heatmap", gpus, cluster_id=cid, ranks=ranks),
                (8.0, min(max(2.2 + 0.11 * len(ranks), 3.0), MAX_HEATMAP_HEIGHT)),
                f"{cid}: utilization per GPU",
                "One cell per GPU; a dark row is a rank lagging, a dark cell one GPU.",
            ),
        ]
    )


def _plots(r: _Report) -> Markup:
    parts = [
        block("heading", "plots", "Plots"),
        _waste(r),
        _cost_chart(r, "cluster_id", "cluster"),
        _cost_chart(r, "gpu_type", "GPU type"),
        _scatter(r),
    ]
    ranked = _rank_clusters(r.gpus, r.findings)
    drawn = ranked[: max(r.max_rank_plots, 0)]
    parts += [_one_cluster(r, cid) for cid in drawn]
    if len(ranked) > len(drawn):
        rest = ", ".join(ranked[len(drawn) : len(drawn) + MAX_NAMED_UNDRAWN])
        if len(ranked) > len(drawn) + MAX_NAMED_UNDRAWN:
            rest += f" and {len(ranked) - len(drawn) - MAX_NAMED_UNDRAWN} more"
        parts.append(
            _note(
                f"Drawn rank by rank: the clusters with idle pods or stragglers first, then "
                f"the most expensive. Not drawn (see the tables): {rest}."
            )
        )
    return Markup("\n").join(parts)

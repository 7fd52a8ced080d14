"""Utilization by rank: one cluster's ranks, GPU mean with range, CPU and memory."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ccanalytics.plots._style import (
    COLORS,
    MAX_ANNOTATIONS,
    MAX_RANK_TICKS,
    UTIL_LABEL,
    NoDataError,
    _axes,
    _doc,
    _floats,
    _one_cluster,
    _require,
    _straggler_ranks,
)


@_doc
def utilization_by_rank(
    pods: pd.DataFrame,
    *,
    cluster_id: str | None = None,
    stragglers: pd.DataFrame | Iterable[int] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """One cluster's ranks side by side: are they all doing the same work?

    In a data-parallel job every rank should look alike; a rank that does not is
    where the whole job waits. Each rank's mean GPU utilization is a bar with its
    GPUs' min-max range as a black line, CPU and memory utilization are markers,
    and the dashed line is the median GPU utilization of the ranks. Straggling
    ranks are drawn in vermillion with a hatch and annotated with their
    utilization against the cluster median. Ranks that report no metrics
    (starting, exited) are marked with a grey ``x`` at 0; pods without a rank
    (pending) are not drawn.

    Readable from 2 to a few hundred ranks: at most 20 integer rank ticks, and
    markers and lines thin out as ranks are added.

    Parameters
    ----------
    {pods}
    {cluster_id}
    stragglers : pandas.DataFrame or iterable of int, optional
        The ranks to highlight: a frame like
        :func:`ccanalytics.analysis.stragglers` returns (its ``cluster_median`` is
        used in the annotation), or plain rank numbers. ``None``: computed with
        :func:`ccanalytics.analysis.stragglers` and its defaults. Pass ``[]`` to
        highlight nothing.
    {ax}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    _require(
        pods,
        ["cluster_id", "rank", "gpu_util_mean", "gpu_util_min", "gpu_util_max", "cpu_util"],
        "a pods frame (ccanalytics.pods_frame)",
    )
    cid, cluster = _one_cluster(pods, cluster_id)
    ranked = cluster[cluster["rank"].notna()].sort_values("rank", kind="stable")
    gpu_mean = _floats(ranked["gpu_util_mean"])
    if np.isnan(gpu_mean).all():
        raise NoDataError(
            f"cluster {cid} has no rank reporting GPU utilization (CPU-only, or not running)"
        )
    marked = _straggler_ranks(stragglers, cluster, cid)
    ax = _axes(ax)

    ranks = ranked["rank"].to_numpy(dtype=np.int64)
    n = len(np.unique(ranks))
    reporting = ~np.isnan(gpu_mean)
    is_slow = np.isin(ranks, list(marked)) & reporting
    # Thin out with the number of ranks: ~5 pt markers at 32 ranks, 1.5 pt at 250.
    marker_size = float(np.clip(160.0 / n, 1.5, 6.0))
    line_width = float(np.clip(40.0 / n, 0.5, 1.5))
    median = float(np.median(gpu_mean[reporting]))

    many = n > 64  # beyond this, bars touch and lines between ranks are only noise
    bars = ax.bar(
        ranks[reporting],
        gpu_mean[reporting],
        width=1.0 if many else 0.8,
        color=[COLORS["straggler"] if s else COLORS["gpu"] for s in is_slow[reporting]],
        linewidth=0,
        zorder=2,
    )
    for bar, slow in zip(bars.patches, is_slow[reporting], strict=True):
        if slow:
            bar.set_hatch("//")
            bar.set_edgecolor("white")
    # A bar of ~0% is invisible, and would read as "no data"; a dash at 0 in the
    # bar's colour says "reports, and does nothing".
    flat = reporting & (gpu_mean < 1.0)
    if flat.any():
        half = 0.5 if many else 0.4
        ax.hlines(
            np.zeros(int(flat.sum())),
            ranks[flat] - half,
            ranks[flat] + half,
            color=COLORS["gpu"],
            linewidth=3,
            clip_on=False,
            zorder=3,
        )
    low, high = _floats(ranked["gpu_util_min"]), _floats(ranked["gpu_util_max"])
    spread = reporting & ~np.isnan(low) & ~np.isnan(high)
    ax.vlines(
        ranks[spread],
        low[spread],
        high[spread],
        color=COLORS["range"],
        linewidth=line_width,
        zorder=3,
    )
    # Legend entries are drawn by hand: a bar container's entry takes the colour of
    # its first bar, which is the straggler's when rank 0 straggles.
    handles: list[Artist] = [
        Patch(facecolor=COLORS["gpu"], label="GPU mean"),
        Line2D([], [], color=COLORS["range"], linewidth=1, label="GPU min–max"),
    ]
    if is_slow.any():
        handles.append(
            Patch(facecolor=COLORS["straggler"], hatch="//", edgecolor="white", label="straggler")
        )
    for column, color, marker, label in (
        ("cpu_util", COLORS["cpu"], "o", "CPU"),
        ("memory_util", COLORS["memory"], "s", "memory"),
    ):
        if column in ranked.columns:
            (line,) = ax.plot(
                ranks,
                _floats(ranked[column]),
                color=color,
                marker=marker,
                markersize=marker_size,
                linestyle="none" if many else "-",
                linewidth=line_width * 0.6,
                label=label,
                zorder=4,
            )
            handles.append(line)
    handles.append(
        ax.axhline(
            median,
            color=COLORS["median"],
            linestyle="--",
            linewidth=1,
            zorder=1,
            label="median GPU mean",
        )
    )
    silent = ~reporting
    if silent.any():
        (line,) = ax.plot(
            ranks[silent],
            np.zeros(int(silent.sum())),
            linestyle="none",
            marker="x",
            markersize=8,
            markeredgewidth=2,
            color=COLORS["no_metrics"],
            clip_on=False,
            label="no metrics",
            zorder=5,
        )
        handles.append(line)

    slow_rows = [(int(r), float(u)) for r, u, s in zip(ranks, gpu_mean, is_slow, strict=True) if s]
    slow_rows.sort(key=lambda row: row[1])
    left, right = int(ranks.min()), int(ranks.max())
    for i, (rank, util) in enumerate(slow_rows[:MAX_ANNOTATIONS]):
        ref = marked.get(rank) or median
        on_right = rank > (left + right) / 2
        ax.annotate(
            f"rank {rank}: {util:.1f}%\nmedian {ref:.1f}%",
            xy=(rank, util),
            xytext=(-12 if on_right else 12, -28 - 30 * i),
            textcoords="offset points",
            ha="right" if on_right else "left",
            va="top",
            fontsize="small",
            color=COLORS["straggler"],
            bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": COLORS["straggler"]},
            arrowprops={"arrowstyle": "-", "color": COLORS["straggler"], "linewidth": 1},
            zorder=6,
        )

    ax.set_xlim(left - 0.6, right + 0.6)
    ax.set_ylim(0, 100)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=MAX_RANK_TICKS, integer=True))
    ax.set_xlabel("rank")
    ax.set_ylabel(UTIL_LABEL)
    slow_note = f", {len(slow_rows)} straggling" if slow_rows else ""
    ax.set_title(f"{cid or 'cluster'}: utilization by rank ({n} ranks{slow_note})")
    ax.grid(axis="y", color="0.9", linewidth=0.8, zorder=0)
    ax.set_axisbelow(True)
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.13),
        ncol=len(handles),
        frameon=False,
        fontsize="small",
    )
    return ax

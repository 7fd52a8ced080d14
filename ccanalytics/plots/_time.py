"""Plots of time: utilization per cluster, a rank x time heatmap, and idle cost per day.

They draw the frames :class:`ccanalytics.History` returns (``utilization`` by cluster
or by rank, ``idle_cost`` by day). Time not observed is never drawn as a value: a line
breaks, a cell is hatched, and the legend says so. Times are UTC, drawn as such.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FuncFormatter

from ccanalytics.plots._buckets import (
    bucket_edges,
    bucket_table,
    date_numbers,
    naive_utc,
    time_axis,
)
from ccanalytics.plots._layout import RankLocator, legend_below, legend_beside, set_title
from ccanalytics.plots._style import (
    COLORS,
    COST_USD_LABEL,
    GPU_UTIL_LABEL,
    FloatArray,
    NoDataError,
    _axes,
    _doc,
    _floats,
    _literal,
    _one_cluster,
    _require,
)

#: Line colours for clusters, in order: Okabe-Ito without grey, then three of Paul Tol's
#: muted colours unlike any of them (wine, olive, indigo), so a fleet of ten clusters
#: gets ten colours; then again, dashed.
_LINE_COLORS = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#882255",
    "#999933",
    "#332288",
)
_LINE_STYLES = ("-", "--", ":", "-.")
_UNOBSERVED_HATCH = "////"
#: Clusters named in the legend at most; the rest are counted in one last entry.
_MAX_LEGEND_LINES = 14


@_doc
def utilization_over_time(
    util: pd.DataFrame,
    *,
    cluster_ids: Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Each cluster's mean GPU utilization over time: one line per cluster.

    A bucket nobody observed (``<NA>``, or no row at all) is a gap in the line,
    never bridged: the frame is reindexed to every bucket from the first to the
    last, and missing buckets stay NaN. A bucket observed alone between two gaps is
    a dot. Clusters are coloured from ten colours (Okabe-Ito, then three of Tol's),
    then the same dashed, and so on; the legend names the first 13 and counts the rest (pass
    ``cluster_ids`` to choose which are drawn).

    Parameters
    ----------
    util : pandas.DataFrame
        ``History.utilization(freq=..., by="cluster")``: columns ``time`` (bucket
        start, UTC), ``cluster_id`` and ``gpu_util_mean`` (percent, 0-100).
    cluster_ids : sequence of str, optional
        The clusters to draw, in this order. ``None``: every cluster in the frame.
    {ax}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    _require(util, ["time", "cluster_id", "gpu_util_mean"], "History.utilization(by='cluster')")
    table = bucket_table(util, "cluster_id")
    if cluster_ids is not None:
        unknown = [c for c in cluster_ids if c not in table.columns]
        if unknown:
            raise ValueError(f"no rows for clusters {unknown}; the frame holds {list(table)}")
        table = table[list(cluster_ids)]
    # A cluster without a single value (CPU-only) would be a legend entry with no line.
    table = table.loc[:, table.notna().any()]
    if table.empty or table.isna().all().all():
        raise NoDataError("no cluster has an observed utilization: nothing to draw")
    ax = _axes(ax)

    times = naive_utc(table.index)
    dots = len(table) <= 200  # beyond, a lone bucket is too thin to see anyway
    for i, cluster in enumerate(table.columns):
        ax.plot(
            times,
            table[cluster].to_numpy(dtype=np.float64),
            color=_LINE_COLORS[i % len(_LINE_COLORS)],
            linestyle=_LINE_STYLES[(i // len(_LINE_COLORS)) % len(_LINE_STYLES)],
            marker="o" if dots else None,
            markersize=3,
            linewidth=1.5,
            label=_literal(cluster),
        )
    time_axis(ax, table.index)
    ax.set_ylim(0, 100)
    ax.set_ylabel(GPU_UTIL_LABEL)
    ax.grid(color="0.9", linewidth=0.8)
    ax.set_axisbelow(True)
    legend = legend_beside(ax, _capped(ax.get_lines()), title="cluster (gap: not observed)")
    set_title(ax, "GPU utilization over time, per cluster", beside=legend)
    return ax


def _capped(lines: Sequence[Artist]) -> list[Artist]:
    """The first lines' legend entries, and "and N more" for the rest (a fleet has 500)."""
    if len(lines) <= _MAX_LEGEND_LINES:
        return list(lines)
    more = len(lines) - (_MAX_LEGEND_LINES - 1)
    rest = Line2D([], [], linestyle="none", label=f"and {more} more clusters")
    return [*lines[: _MAX_LEGEND_LINES - 1], rest]


@_doc
def rank_time_heatmap(
    util: pd.DataFrame,
    *,
    cluster_id: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """One cluster's ranks over time: a chronic straggler is a dark row.

    One row per rank that appears in the frame (only those), one column per time
    bucket from the first to the last; the colour is the rank's mean GPU
    utilization in that bucket (viridis, 0-100 %: dark is low). Buckets where a rank
    was not observed (``<NA>``, or no row) are hatched, and the legend below says so.

    Parameters
    ----------
    util : pandas.DataFrame
        ``History.utilization(freq=..., by="rank")``: columns ``time`` (bucket
        start, UTC), ``cluster_id``, ``rank`` and ``gpu_util_mean`` (percent).
    {cluster_id}
    {ax}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    _require(
        util, ["time", "cluster_id", "rank", "gpu_util_mean"], "History.utilization(by='rank')"
    )
    cid, cluster = _one_cluster(util, cluster_id)
    ranked = cluster[cluster["rank"].notna()]
    table = bucket_table(ranked, "rank")
    if table.empty or table.isna().all().all():
        raise NoDataError(f"cluster {cid} has no rank with an observed utilization")
    ax = _axes(ax)

    ranks = [int(r) for r in table.columns]
    values = np.ma.masked_invalid(table.to_numpy(dtype=np.float64).T)  # rank x time
    left, right = bucket_edges(table.index)
    extent = (left, right, len(ranks) - 0.5, -0.5)
    image = ax.imshow(
        values,
        aspect="auto",
        interpolation="nearest",
        cmap=matplotlib.colormaps["viridis"].with_extremes(bad=(0.0, 0.0, 0.0, 0.0)),
        vmin=0,
        vmax=100,
        extent=extent,
        zorder=1,
    )
    handles = _hatch_unobserved(ax, values, extent)
    time_axis(ax, table.index)
    ax.yaxis.set_major_locator(RankLocator(len(ranks)))
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda pos, _: str(ranks[round(pos)]) if 0 <= pos < len(ranks) else "")
    )
    ax.set_ylabel("rank")
    set_title(
        ax,
        f"{_literal(cid or 'cluster')}: GPU utilization by rank over time\n"
        f"{len(ranks)} ranks x {len(table)} buckets",
    )
    colorbar = ax.figure.colorbar(image, ax=ax, fraction=0.08, pad=0.03)
    colorbar.set_label(GPU_UTIL_LABEL)
    if handles:
        legend_below(ax, handles)
    return ax


@_doc
def idle_cost_by_day(costs: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Where each day's money went: idle pods, unused capacity, the rest (stacked bars).

    One bar per day (UTC) as tall as the day's ``total_cost`` (USD), stacked from
    the bottom:

    - **idle**: ``idle_cost``, the whole cost of idle pods (busiest GPU below the
      threshold) while they were idle;
    - **unused on pods in use**: ``busy_unused_cost``, the registry's unused capacity
      (cost x (1 - GPU utilization / 100)) of the running GPU pods reporting that are
      not idle, as given;
    - **the rest**: ``total_cost`` less both: GPU time used, CPU pods, and pods
      without metrics.

    A day with unobserved time has its hours noted above its bar: its cost covers
    only the observed hours.

    Parameters
    ----------
    costs : pandas.DataFrame
        ``History.idle_cost(by="day")``: columns ``day`` (UTC midnight, or a date),
        ``total_cost``, ``idle_cost``, ``busy_unused_cost`` (USD) and optionally
        ``unobserved_hours``.
    {ax}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    _require(
        costs, ["day", "total_cost", "idle_cost", "busy_unused_cost"], "History.idle_cost(by='day')"
    )
    parts = _cost_parts(costs)
    if parts.empty or not (parts.sum(axis=1) > 0).any():
        raise NoDataError("no day has a cost: nothing to draw")
    ax = _axes(ax)

    days = date_numbers(parts.index)
    bottom = np.zeros(len(parts))
    handles: list[Artist] = []
    for column, label, color, hatch in (
        ("idle", "idle pods", COLORS["idle"], "xx"),
        ("unused", "unused on pods in use", COLORS["cpu"], "//"),
        ("rest", "the rest (used, CPU, no metrics)", COLORS["gpu"], ""),
    ):
        heights = parts[column].to_numpy(dtype=np.float64)
        ax.bar(
            days,
            heights,
            bottom=bottom,
            width=0.8,
            color=color,
            hatch=hatch,
            edgecolor="white",
            linewidth=0.5,
            label=label,
        )
        handles.append(Patch(facecolor=color, hatch=hatch, edgecolor="white", label=label))
        bottom = bottom + heights
    _note_unobserved(ax, costs, days, bottom)
    ax.set_ylim(0, float(bottom.max()) * 1.15)  # room for the notes above the bars
    time_axis(ax, parts.index, daily=True)
    ax.set_ylabel(COST_USD_LABEL)
    ax.grid(axis="y", color="0.9", linewidth=0.8)
    ax.set_axisbelow(True)
    set_title(ax, "Spend per day: idle and unused", beside=legend_beside(ax, handles[::-1]))
    return ax


# ---------------------------------------------------------------------------------
# Steps shared by the three.


def _hatch_unobserved(
    ax: Axes, values: np.ma.MaskedArray, extent: tuple[float, float, float, float]
) -> list[Artist]:
    """Hatch behind the image, showing through the cells nobody observed."""
    if not np.ma.getmaskarray(values).any():
        return []
    left, right, bottom, top = extent
    style = {"facecolor": "white", "hatch": _UNOBSERVED_HATCH, "edgecolor": "0.75"}
    ax.add_patch(
        Rectangle(
            (left, top),
            right - left,
            bottom - top,
            facecolor=style["facecolor"],
            hatch=style["hatch"],
            edgecolor=style["edgecolor"],
            linewidth=0,
            zorder=0.5,
            label="_not observed",
        )
    )
    return [
        Patch(
            facecolor=style["facecolor"],
            hatch=style["hatch"],
            edgecolor=style["edgecolor"],
            label="not observed",
        )
    ]


def _cost_parts(costs: pd.DataFrame) -> pd.DataFrame:
    """Per day (UTC): idle, unused on pods in use, and the rest of the spend (USD)."""
    rows = costs[costs["day"].notna()]
    day = pd.to_datetime(rows["day"], utc=True)
    total = np.nan_to_num(_floats(rows["total_cost"]))
    idle = np.nan_to_num(_floats(rows["idle_cost"]))
    unused = np.nan_to_num(_floats(rows["busy_unused_cost"]))
    rest = np.clip(total - idle - unused, 0.0, None)
    parts = pd.DataFrame(
        {"idle": idle, "unused": unused, "rest": rest}, index=pd.DatetimeIndex(day)
    )
    return parts.groupby(level=0).sum().sort_index()


def _note_unobserved(ax: Axes, costs: pd.DataFrame, days: FloatArray, tops: FloatArray) -> None:
    """ "N h unobserved" above each day that has some (its cost covers less than 24 h)."""
    if "unobserved_hours" not in costs.columns or len(days) > 62:
        return  # beyond two months the notes would overlap: the frame has the numbers
    rows = costs[costs["day"].notna()]
    hours = (
        pd.Series(
            np.nan_to_num(_floats(rows["unobserved_hours"])),
            index=pd.DatetimeIndex(pd.to_datetime(rows["day"], utc=True)),
        )
        .groupby(level=0)
        .sum()
        .sort_index()
    )
    for x, top, h in zip(days, tops, hours.to_numpy(), strict=True):
        if h > 0:
            ax.annotate(
                f"{h:.3g} h\nunobserved",
                xy=(x, top),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize="x-small",
                color=COLORS["median"],
            )

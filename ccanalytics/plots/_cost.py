"""Cost plots: price against utilization, and spend split by what it buys."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Final, Literal

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator

from ccanalytics.analysis import DEFAULT_IDLE_THRESHOLD
from ccanalytics.measures import Params
from ccanalytics.plots._layout import legend_below, legend_right, set_title
from ccanalytics.plots._reads import COST_BREAKDOWN, COST_VS_UTILIZATION
from ccanalytics.plots._style import (
    COLORS,
    COST_LABEL,
    GPU_UTIL_LABEL,
    BoolArray,
    FloatArray,
    NoDataError,
    _axes,
    _doc,
    _floats,
    _judged,
    _literal,
    _require,
)

#: Bars at most in :func:`cost_breakdown` by default; the last sums the cheaper groups.
DEFAULT_MAX_BARS: Final = 15


@_doc
def cost_vs_utilization(
    pods: pd.DataFrame,
    *,
    idle_threshold: float = DEFAULT_IDLE_THRESHOLD,
    logy: bool | None = None,
    ax: Axes | None = None,
    verdicts: pd.DataFrame | None = None,
) -> Axes:
    """Every GPU pod's price against its GPU utilization: where is money idle?

    One point per GPU pod that reports GPU metrics, at its mean GPU utilization
    (percent, 0-100; x) and cost (USD per hour; y). The shaded band left of
    ``idle_threshold`` is where idle pods sit; idle pods (every GPU below the
    threshold, as :func:`ccanalytics.analysis.idle_pods` judges them) are reddish
    purple diamonds, and their legend entry gives their number and total cost per
    hour. Pods without metrics cannot be placed and are left out. The legend sits
    right of the axes, off the data.

    Parameters
    ----------
    {pods}
    {idle_threshold}
    logy : bool, optional
        Log-scale the cost axis. ``None``: when costs span more than 20x, so cheap
        pods are not squashed against the axis by a few expensive ones.
    {ax}
    {verdicts}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    _require(
        pods,
        COST_VS_UTILIZATION,
        "a pods frame (ccanalytics.pods_frame)",
    )
    if not 0 <= idle_threshold <= 100:
        raise ValueError("idle_threshold is a utilization in percent (0-100)")
    gpu = pods[
        pods["gpu_count"].fillna(0).gt(0) & pods["gpu_util_mean"].notna() & pods["cost"].notna()
    ]
    if gpu.empty:
        raise NoDataError("no GPU pod reports both a cost and GPU utilization")
    util = _floats(gpu["gpu_util_mean"])
    cost = _floats(gpu["cost"])
    judged = _judged(gpu, verdicts, Params(idle_threshold=idle_threshold))
    idle = judged["idle"].to_numpy(dtype=bool)
    ax = _axes(ax)

    handles = [
        _draw_idle_band(ax, idle_threshold),
        *_scatter_pods(ax, util, cost, idle),
    ]
    _cost_axis(ax, cost, logy)
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"mean {GPU_UTIL_LABEL}")
    ax.grid(color="0.9", linewidth=0.8, zorder=0)
    ax.set_axisbelow(True)
    set_title(ax, "Cost vs GPU utilization, per pod", beside=legend_right(ax, handles))
    return ax


def _draw_idle_band(ax: Axes, idle_threshold: float) -> Artist:
    ax.axvspan(0, idle_threshold, color=COLORS["idle"], alpha=0.08, linewidth=0, zorder=0)
    ax.axvline(idle_threshold, color=COLORS["idle"], linewidth=0.8, linestyle=":", zorder=1)
    return Patch(facecolor=COLORS["idle"], alpha=0.15, label=f"idle band (< {idle_threshold:g}%)")


def _scatter_pods(ax: Axes, util: FloatArray, cost: FloatArray, idle: BoolArray) -> list[Artist]:
    """Pods in use as blue dots; idle pods as diamonds, their count and spend in the legend."""
    handles: list[Artist] = [
        ax.scatter(
            util[~idle],
            cost[~idle],
            s=36,
            color=COLORS["gpu"],
            alpha=0.7,
            edgecolors="white",
            linewidths=0.5,
            marker="o",
            label=f"in use: {int((~idle).sum())} pods",
            clip_on=False,
            zorder=3,
        )
    ]
    if idle.any():
        idle_cost = float(cost[idle].sum())
        handles.append(
            ax.scatter(
                util[idle],
                cost[idle],
                s=52,
                color=COLORS["idle"],
                edgecolors="black",
                linewidths=0.6,
                marker="D",
                label=f"idle: {int(idle.sum())} pods,\n{idle_cost:,.2f} USD/h",
                clip_on=False,
                zorder=3,
            )
        )
    return handles


def _cost_axis(ax: Axes, cost: FloatArray, logy: bool | None) -> None:
    """Log scale when costs span more than 20x (unless told), else linear from 0."""
    positive = cost[cost > 0]
    if logy is None:
        logy = positive.size > 0 and float(positive.max()) > 20 * float(positive.min())
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    else:
        ax.set_ylim(bottom=0, top=max(float(cost.max()) * 1.1, 1e-9))
    ax.set_ylabel(COST_LABEL)


_CATEGORIES: Final = (
    # (key, legend label, colour, hatch)
    ("in_use", "in use", COLORS["gpu"], ""),
    ("idle", "idle GPUs", COLORS["idle"], "//"),
    ("no_metrics", "no metrics (pending, starting, exited)", COLORS["no_metrics"], ".."),
)


def _spend_categories(
    pods: pd.DataFrame, idle_threshold: float, verdicts: pd.DataFrame | None = None
) -> pd.Series:
    """Each pod's spend category: ``in_use``, ``idle`` or ``no_metrics``.

    Honest by construction: a pod's whole cost goes to one category, decided by
    what it reports. Idle is :func:`ccanalytics.analysis.idle_pods`'s rule; a pod
    with no metrics for its kind (GPU utilization for GPU pods, CPU utilization
    for CPU pods) is unknown, not idle and not in use.
    """
    has_gpus = pods["gpu_count"].fillna(0).gt(0)
    cpu_known = pods["cpu_util"].notna()
    judged = _judged(pods, verdicts, Params(idle_threshold=idle_threshold))  # the one rule
    idle = judged["idle"].to_numpy(dtype=bool)
    # A GPU pod the rules cannot judge (no metrics, or no status) is neither idle nor
    # in use; the rules judge no CPU pod, so one is in use when it reports its CPU.
    unknown = (has_gpus & ~judged["judged"].to_numpy(dtype=bool)) | (~has_gpus & ~cpu_known)
    category = np.where(idle, "idle", np.where(unknown, "no_metrics", "in_use"))
    return pd.Series(category, index=pods.index)


@_doc
def cost_breakdown(
    pods: pd.DataFrame,
    *,
    by: Literal["gpu_type", "cluster", "cluster_id"] = "gpu_type",
    idle_threshold: float = DEFAULT_IDLE_THRESHOLD,
    max_bars: int | None = DEFAULT_MAX_BARS,
    ax: Axes | None = None,
    verdicts: pd.DataFrame | None = None,
) -> Axes:
    """Where the money goes: cost per hour by GPU type or cluster, split by use.

    One horizontal bar per group, most expensive on top, stacked into spend on
    pods in use, on idle GPU pods, and on pods reporting no metrics (pending,
    starting, exited: their utilization is unknown, so their spend is neither
    called idle nor used). Each pod's whole cost (USD per hour) goes to one part;
    the bar's length is the group's total, printed at its end with the idle share.
    Pods without a cost count as 0. CPU-only pods are grouped as "CPU only" by GPU
    type.

    A fleet of hundreds of clusters stays one readable chart: beyond ``max_bars``
    groups, the ``max_bars - 1`` most expensive are drawn and every other group is
    summed into one last bar, "N others", split the same way. The bars' total is
    always the fleet's. The chart's height in bars is at most ``max_bars``, so a
    figure sized for ``max_bars`` bars fits any fleet.

    Parameters
    ----------
    {pods}
    by : {{"gpu_type", "cluster"}}
        Group by GPU type or by cluster (``"cluster_id"`` is the old spelling of
        ``"cluster"``: DeprecationWarning).
    {idle_threshold}
    max_bars : int or None
        The most bars drawn (at least 2; default 15), the last one summing the
        cheaper groups. ``None``: one bar per group, however many.
    {ax}
    {verdicts}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    if by == "cluster_id":
        warnings.warn(
            'by="cluster_id" is now by="cluster" (the old spelling goes in the next release)',
            DeprecationWarning,
            stacklevel=2,
        )
        by = "cluster"
    if by not in ("gpu_type", "cluster"):
        raise ValueError(f"by must be 'gpu_type' or 'cluster', got {by!r}")
    if max_bars is not None and max_bars < 2:
        raise ValueError(f"max_bars must be at least 2 (or None), got {max_bars}")
    _require(
        pods,
        COST_BREAKDOWN,
        "a pods frame (ccanalytics.pods_frame)",
    )
    if pods.empty or not pods["cost"].fillna(0.0).gt(0).any():
        raise NoDataError("no pod has a cost: nothing to break down")
    column = "gpu_type" if by == "gpu_type" else "cluster_id"
    spend = _cap_groups(_spend_by_group(pods, column, idle_threshold, verdicts), max_bars)
    ax = _axes(ax)

    handles = _draw_stacked_bars(ax, spend)
    _annotate_totals(ax, spend)
    ax.set_yticks(np.arange(len(spend)), labels=[_literal(g) for g in spend.index])
    ax.invert_yaxis()  # most expensive on top, in reading order
    ax.set_xlim(0, float(spend.sum(axis=1).max()) * 1.3)
    ax.set_xlabel(COST_LABEL)
    set_title(ax, f"Cost per hour by {'GPU type' if by == 'gpu_type' else 'cluster'}")
    ax.grid(axis="x", color="0.9", linewidth=0.8)
    ax.set_axisbelow(True)
    legend_below(ax, handles)
    return ax


def _spend_by_group(
    pods: pd.DataFrame, by: str, idle_threshold: float, verdicts: pd.DataFrame | None
) -> pd.DataFrame:
    """USD/h per group (rows, most expensive first) and spend category (columns)."""
    if by == "gpu_type":
        has_gpus = pods["gpu_count"].fillna(0).gt(0)
        fallback = np.where(has_gpus, "unknown GPU", "CPU only")
    else:
        fallback = np.full(len(pods), "unknown cluster")
    names = pods[by].astype("string")
    group = np.where(names.isna().to_numpy(dtype=bool), fallback, names.fillna("").to_numpy(str))
    spend = (
        pd.DataFrame(
            {
                "group": group,
                "category": _spend_categories(pods, idle_threshold, verdicts),
                "cost": pods["cost"].fillna(0.0).to_numpy(dtype=np.float64),
            }
        )
        .pivot_table(index="group", columns="category", values="cost", aggfunc="sum")
        .reindex(columns=[key for key, *_ in _CATEGORIES])
        .fillna(0.0)
    )
    total = spend.sum(axis=1)
    order = np.lexsort((spend.index.to_numpy(dtype=str), -total.to_numpy()))
    return spend.iloc[order]


def _cap_groups(spend: pd.DataFrame, max_bars: int | None) -> pd.DataFrame:
    """The ``max_bars - 1`` first groups, and the rest summed into "N others"."""
    if max_bars is None or len(spend) <= max_bars:
        return spend
    kept, rest = spend.iloc[: max_bars - 1], spend.iloc[max_bars - 1 :]
    others = rest.sum().to_frame(f"{len(rest)} others").T
    return pd.concat([kept, others])


def _draw_stacked_bars(ax: Axes, spend: pd.DataFrame) -> list[Artist]:
    """One bar container per spend category present, left to right; their legend entries."""
    return stacked_bars(ax, spend, _CATEGORIES)


def stacked_bars(
    ax: Axes, frame: pd.DataFrame, parts: Sequence[tuple[str, str, str, str | None]]
) -> list[Artist]:
    """Horizontal bars, one row of ``frame`` each, stacked by ``parts`` (column, label,
    colour, hatch) left to right; a part that is zero everywhere is left out. Returns
    the legend entries of the parts drawn (the cost and waste charts share this)."""
    handles: list[Artist] = []
    y = np.arange(len(frame))
    left = np.zeros(len(frame))
    for key, label, color, hatch in parts:
        widths = frame[key].to_numpy(dtype=np.float64)
        if not widths.any():
            continue
        ax.barh(
            y,
            widths,
            left=left,
            height=0.65,
            color=color,
            hatch=hatch,
            edgecolor="white",
            linewidth=0.5,
            label=label,
        )
        left = left + widths
        handles.append(Patch(facecolor=color, hatch=hatch, edgecolor="white", label=label))
    return handles


def _annotate_totals(ax: Axes, spend: pd.DataFrame) -> None:
    """Each bar's total, and its idle share, just past the bar's end."""
    totals = spend.sum(axis=1).to_numpy(dtype=np.float64)
    idle = spend["idle"].to_numpy(dtype=np.float64)
    for pos, (total, idle_cost) in enumerate(zip(totals, idle, strict=True)):
        note = f"{total:,.2f} USD/h"
        if idle_cost > 0:
            note += f"  ({idle_cost / total:.0%} idle)"
        ax.annotate(
            note,
            xy=(float(total), float(pos)),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize="small",
        )

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

from ccanalytics.analysis import DEFAULT_IDLE_THRESHOLD, measures_by
from ccanalytics.measures import Params, by_name
from ccanalytics.plots._layout import legend_below, legend_right, set_title
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
from ccanalytics.plots.reads import COST_BREAKDOWN, COST_VS_UTILIZATION

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
    params = Params(idle_threshold=idle_threshold)
    idle = _judged(gpu, verdicts, params)["idle"].to_numpy(dtype=bool)
    ax = _axes(ax)

    handles = [
        _draw_idle_band(ax, idle_threshold),
        *_scatter_pods(ax, util, cost, idle, _idle_legend(gpu, params) if idle.any() else ""),
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


def _idle_legend(gpu: pd.DataFrame, params: Params) -> str:
    """The idle pods' count and spend among the pods drawn: the registry's idle_pods and
    idle_cost over them, summed by the engine."""
    count, spend = measures_by(gpu, ["idle_pod_hours", "idle_cost"], None, params=params).iloc[0]
    return f"idle: {int(count)} pods,\n{float(spend):,.2f} USD/h"


def _scatter_pods(
    ax: Axes, util: FloatArray, cost: FloatArray, idle: BoolArray, idle_label: str
) -> list[Artist]:
    """Pods in use as blue dots; idle pods as diamonds, ``idle_label`` in the legend."""
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
        handles.append(
            ax.scatter(
                util[idle],
                cost[idle],
                s=52,
                color=COLORS["idle"],
                edgecolors="black",
                linewidths=0.6,
                marker="D",
                label=idle_label,
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
    # (key, the registry's measure, legend label, colour, hatch): every pod's whole cost
    # is in one of the three measures.
    ("in_use", "in_use_cost", "in use", COLORS["gpu"], ""),
    ("idle", "idle_cost", "idle GPUs", COLORS["idle"], "//"),
    (
        "no_metrics",
        "unjudged_cost",
        "no metrics (pending, starting, exited)",
        COLORS["no_metrics"],
        "..",
    ),
)
_PARTS: Final = tuple(key for key, *_ in _CATEGORIES)
#: The bar's length and the share printed at its end.
_TOTAL_MEASURE: Final = "total_cost"
_SHARE_MEASURE: Final = "idle_cost_share"
_TOTAL: Final = "total"
_SHARE: Final = "idle_share"


def _verdicts_unread() -> None:
    warnings.warn(
        "cost_breakdown no longer reads verdicts: the engine sums each part by the "
        "registry's measures (the argument goes in the next release)",
        DeprecationWarning,
        stacklevel=3,
    )


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
    called idle nor used). Each pod's whole cost (USD per hour) goes to one part: the
    registry's ``in_use_cost``, ``idle_cost`` and ``unjudged_cost``, summed by the
    engine as every path sums them; the bar's length is the group's ``total_cost``,
    printed at its end with its ``idle_cost_share``.
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
    verdicts : pandas.DataFrame, optional
        Deprecated and not read (DeprecationWarning): the parts are the registry's
        measures, judged by the engine at ``idle_threshold``.

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
    if verdicts is not None:
        _verdicts_unread()
    labelled = _labelled(pods, column)
    spend = _spend_by_group(labelled, column, idle_threshold)
    spend = _cap_groups(spend, labelled, column, idle_threshold, max_bars)
    ax = _axes(ax)

    handles = _draw_stacked_bars(ax, spend)
    _annotate_totals(ax, spend)
    ax.set_yticks(np.arange(len(spend)), labels=[_literal(g) for g in spend.index])
    ax.invert_yaxis()  # most expensive on top, in reading order
    ax.set_xlim(0, float(spend[_TOTAL].max()) * 1.3)
    ax.set_xlabel(COST_LABEL)
    set_title(ax, f"Cost per hour by {'GPU type' if by == 'gpu_type' else 'cluster'}")
    ax.grid(axis="x", color="0.9", linewidth=0.8)
    ax.set_axisbelow(True)
    legend_below(ax, handles)
    return ax


def _spend_by_group(labelled: pd.DataFrame, by: str, idle_threshold: float) -> pd.DataFrame:
    """USD/h per group of ``labelled`` (rows, most expensive first): each spend part's
    measure and the idle share, the registry's, summed by the engine."""
    spend = _measured(labelled, by, idle_threshold)
    order = np.lexsort((spend.index.to_numpy(dtype=str), -spend[_TOTAL].to_numpy()))
    return spend.iloc[order]


def _labelled(pods: pd.DataFrame, by: str) -> pd.DataFrame:
    """The columns the parts read, and ``by`` with a name for the pods without one: a
    GPU type's NULL is "unknown GPU" on a GPU pod, "CPU only" on the others."""
    if by == "gpu_type":
        has_gpus = pods["gpu_count"].fillna(0).gt(0)
        fallback = np.where(has_gpus, "unknown GPU", "CPU only")
    else:
        fallback = np.full(len(pods), "unknown cluster")
    names = pods[by].astype("string")
    group = np.where(names.isna().to_numpy(dtype=bool), fallback, names.fillna("").to_numpy(str))
    return pods[[*COST_VS_UTILIZATION, "cpu_util"]].assign(**{by: group})


def _measured(labelled: pd.DataFrame, by: str, idle_threshold: float) -> pd.DataFrame:
    """The engine's parts and idle share of each group of ``labelled`` by ``by``."""
    columns = {key: measure for key, measure, *_ in _CATEGORIES}
    columns |= {_TOTAL: _TOTAL_MEASURE, _SHARE: _SHARE_MEASURE}
    dimension = "gpu_type" if by == "gpu_type" else "cluster"
    params = Params(idle_threshold=idle_threshold)
    answer = measures_by(labelled, list(columns.values()), dimension, params=params)
    columns = {str(by_name(m).live): key for key, m in columns.items()}
    return (
        answer.set_index(by)
        .rename(columns=columns)[[*_PARTS, _TOTAL, _SHARE]]
        .astype({**dict.fromkeys([*_PARTS, _TOTAL], "float64")})
        .rename_axis("group")
    )


def _cap_groups(
    spend: pd.DataFrame,
    labelled: pd.DataFrame,
    by: str,
    idle_threshold: float,
    max_bars: int | None,
) -> pd.DataFrame:
    """The ``max_bars - 1`` first groups, and the rest measured as one, "N others"."""
    if max_bars is None or len(spend) <= max_bars:
        return spend
    kept, rest = spend.index[: max_bars - 1], spend.index[max_bars - 1 :]
    others = f"{len(rest)} others"
    relabelled = labelled.assign(**{by: labelled[by].where(labelled[by].isin(kept), others)})
    capped = _measured(relabelled, by, idle_threshold)
    return capped.loc[[*kept, others]]


def _draw_stacked_bars(ax: Axes, spend: pd.DataFrame) -> list[Artist]:
    """One bar container per spend category present, left to right; their legend entries."""
    return stacked_bars(ax, spend, [(key, label, c, h) for key, _, label, c, h in _CATEGORIES])


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
    """Each bar's total, and its idle share (the registry's), just past the bar's end."""
    totals = spend[_TOTAL].to_numpy(dtype=np.float64)
    idle = spend["idle"].to_numpy(dtype=np.float64)
    shares = spend[_SHARE].astype("Float64").fillna(0.0).to_numpy(dtype=np.float64)
    for pos, (total, idle_cost, share) in enumerate(zip(totals, idle, shares, strict=True)):
        note = f"{total:,.2f} USD/h"
        if idle_cost > 0:
            note += f"  ({share:.0%} idle)"
        ax.annotate(
            note,
            xy=(float(total), float(pos)),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize="small",
        )

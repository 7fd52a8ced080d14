"""Cost plots: price against utilization, and spend split by what it buys."""

from __future__ import annotations

from typing import Final, Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, LogLocator

from ccanalytics.analysis import DEFAULT_IDLE_THRESHOLD
from ccanalytics.plots._style import (
    COLORS,
    COST_LABEL,
    GPU_UTIL_LABEL,
    NoDataError,
    _axes,
    _doc,
    _floats,
    _require,
)


@_doc
def cost_vs_utilization(
    pods: pd.DataFrame,
    *,
    idle_threshold: float = DEFAULT_IDLE_THRESHOLD,
    logy: bool | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Every GPU pod's price against its GPU utilization: where is money idle?

    One point per GPU pod that reports GPU metrics, at its mean GPU utilization
    (x) and cost per hour (y). The shaded band left of ``idle_threshold`` is where
    idle pods sit; idle pods (every GPU below the threshold, as
    :func:`ccanalytics.analysis.idle_pods` judges them) are vermillion diamonds,
    and the note in the band gives their number and total cost per hour. Pods
    without metrics cannot be placed and are left out.

    Parameters
    ----------
    {pods}
    {idle_threshold}
    logy : bool, optional
        Log-scale the cost axis. ``None``: when costs span more than 20x, so cheap
        pods are not squashed against the axis by a few expensive ones.
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
        ["cost", "gpu_count", "gpu_util_mean", "gpu_util_max"],
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
    idle = _floats(gpu["gpu_util_max"]) < idle_threshold
    ax = _axes(ax)

    ax.axvspan(0, idle_threshold, color=COLORS["idle"], alpha=0.08, linewidth=0, zorder=0)
    ax.axvline(idle_threshold, color=COLORS["idle"], linewidth=0.8, linestyle=":", zorder=1)
    ax.scatter(
        util[~idle],
        cost[~idle],
        s=36,
        color=COLORS["gpu"],
        alpha=0.7,
        edgecolors="white",
        linewidths=0.5,
        marker="o",
        label=f"in use ({int((~idle).sum())} pods)",
        clip_on=False,
        zorder=3,
    )
    if idle.any():
        ax.scatter(
            util[idle],
            cost[idle],
            s=52,
            color=COLORS["idle"],
            edgecolors="black",
            linewidths=0.6,
            marker="D",
            label=f"idle ({int(idle.sum())} pods)",
            clip_on=False,
            zorder=3,
        )
    idle_cost = float(cost[idle].sum())
    ax.text(
        idle_threshold + 1.5,
        0.97,
        f"idle: {int(idle.sum())} pods, {idle_cost:,.2f} USD/h\n(every GPU < {idle_threshold:g}%)",
        transform=ax.get_xaxis_transform(),
        ha="left",
        va="top",
        fontsize="small",
        color=COLORS["idle"],
        bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": COLORS["idle"], "alpha": 0.9},
        zorder=4,
    )
    positive = cost[cost > 0]
    if logy is None:
        logy = positive.size > 0 and float(positive.max()) > 20 * float(positive.min())
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    else:
        ax.set_ylim(bottom=0, top=max(float(cost.max()) * 1.1, 1e-9))
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"mean {GPU_UTIL_LABEL}")
    ax.set_ylabel(COST_LABEL)
    ax.set_title("Cost vs GPU utilization, per pod")
    ax.grid(color="0.9", linewidth=0.8, zorder=0)
    ax.set_axisbelow(True)
    ax.legend(loc="lower right", fontsize="small", framealpha=0.9)
    return ax


_CATEGORIES: Final = (
    # (key, legend label, colour, hatch)
    ("in_use", "in use", COLORS["gpu"], ""),
    ("idle", "idle GPUs", COLORS["idle"], "//"),
    ("no_metrics", "no metrics (pending, starting, exited)", COLORS["no_metrics"], ".."),
)


def _spend_categories(pods: pd.DataFrame, idle_threshold: float) -> pd.Series:
    """Each pod's spend category: ``in_use``, ``idle`` or ``no_metrics``.

    Honest by construction: a pod's whole cost goes to one category, decided by
    what it reports. Idle is :func:`ccanalytics.analysis.idle_pods`'s rule; a pod
    with no metrics for its kind (GPU utilization for GPU pods, CPU utilization
    for CPU pods) is unknown, not idle and not in use.
    """
    has_gpus = pods["gpu_count"].fillna(0).gt(0)
    gpu_known = pods["gpu_util_mean"].notna()
    cpu_known = pods["cpu_util"].notna()
    idle = has_gpus & pods["gpu_util_max"].lt(idle_threshold).fillna(False)
    unknown = (has_gpus & ~gpu_known) | (~has_gpus & ~cpu_known)
    category = np.where(idle, "idle", np.where(unknown, "no_metrics", "in_use"))
    return pd.Series(category, index=pods.index)


@_doc
def cost_breakdown(
    pods: pd.DataFrame,
    *,
    by: Literal["gpu_type", "cluster_id"] = "gpu_type",
    idle_threshold: float = DEFAULT_IDLE_THRESHOLD,
    ax: Axes | None = None,
) -> Axes:
    """Where the money goes: cost per hour by GPU type or cluster, split by use.

    One horizontal bar per group, most expensive on top, stacked into spend on
    pods in use, on idle GPU pods, and on pods reporting no metrics (pending,
    starting, exited: their utilization is unknown, so their spend is neither
    called idle nor used). Each pod's whole cost goes to one part; the bar's
    length is the group's total, printed at its end with the idle share. Pods
    without a cost count as 0. CPU-only pods are grouped as "CPU only" by GPU type.

    Parameters
    ----------
    {pods}
    by : {{"gpu_type", "cluster_id"}}
        Group by GPU type or by cluster.
    {idle_threshold}
    {ax}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    if by not in ("gpu_type", "cluster_id"):
        raise ValueError(f"by must be 'gpu_type' or 'cluster_id', got {by!r}")
    _require(
        pods,
        [
            "cluster_id",
            "cost",
            "gpu_type",
            "gpu_count",
            "gpu_util_mean",
            "gpu_util_max",
            "cpu_util",
        ],
        "a pods frame (ccanalytics.pods_frame)",
    )
    cost = pods["cost"].fillna(0.0).astype("float64")
    if pods.empty or not cost.gt(0).any():
        raise NoDataError("no pod has a cost: nothing to break down")
    if by == "gpu_type":
        has_gpus = pods["gpu_count"].fillna(0).gt(0).to_numpy(dtype=bool)
        fallbacks = ["unknown GPU" if g else "CPU only" for g in has_gpus]
    else:
        fallbacks = ["unknown cluster"] * len(pods)
    names: list[object] = pods[by].tolist()
    group = [n if isinstance(n, str) else fb for n, fb in zip(names, fallbacks, strict=True)]
    spend = (
        pd.DataFrame({"group": group, "category": _spend_categories(pods, idle_threshold)})
        .assign(cost=cost.to_numpy())
        .pivot_table(index="group", columns="category", values="cost", aggfunc="sum")
        .reindex(columns=[key for key, *_ in _CATEGORIES])
        .fillna(0.0)
    )
    spend = spend.assign(_total=spend.sum(axis=1)).sort_values(
        ["_total", "group"], ascending=[False, True]
    )
    order = [str(g) for g in spend.index]
    totals = spend.pop("_total").to_numpy(dtype=np.float64)
    idle_costs = spend["idle"].to_numpy(dtype=np.float64)
    ax = _axes(ax)

    y = np.arange(len(order))
    left = np.zeros(len(order))
    for key, label, color, hatch in _CATEGORIES:
        widths = spend[key].to_numpy(dtype=np.float64)
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
    for pos, total, idle_cost in zip(y, totals, idle_costs, strict=True):
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
    ax.set_yticks(y, labels=order)
    ax.invert_yaxis()  # most expensive on top, in reading order
    ax.set_xlim(0, float(totals.max()) * 1.3)
    ax.set_xlabel(COST_LABEL)
    ax.set_title(f"Cost per hour by {'GPU type' if by == 'gpu_type' else 'cluster'}")
    ax.grid(axis="x", color="0.9", linewidth=0.8)
    ax.set_axisbelow(True)
    ax.legend(loc="lower right", fontsize="small", framealpha=0.9)
    return ax

"""Plots of pods and GPU frames, drawn the way seaborn draws.

Every function takes the frame first (``pods`` from :func:`ccanalytics.pods_frame` or
:func:`ccanalytics.load_cluster_pods`, ``gpus`` from :func:`ccanalytics.gpus_frame`),
then keyword-only options, draws on ``ax`` (``plt.gca()`` when none is given) and
returns that :class:`~matplotlib.axes.Axes`. Nothing here calls ``plt.show()``,
creates a figure when given an axes, or touches ``rcParams``: a plot is a function
of its arguments, so notebooks, scripts and :mod:`ccanalytics.report` share it.

- :func:`utilization_by_rank`: one cluster's ranks, GPU mean with min-max range,
  CPU and memory, stragglers highlighted and annotated;
- :func:`gpu_heatmap`: per-GPU utilization, rank x GPU index;
- :func:`cost_vs_utilization`: each pod's price against its GPU utilization, with
  the idle region and the idle spend marked;
- :func:`cost_breakdown`: cost per hour by GPU type or cluster, split into spend on
  GPUs in use, on idle GPUs, and on pods reporting no metrics.

Nothing to draw (an empty frame, a cluster without GPU metrics, no pod with a cost)
raises :class:`NoDataError`, a :class:`ValueError`: an empty axes would read as
"zero utilization" or "costs nothing", which is a different and wrong statement.

Colours are the Okabe-Ito palette (distinguishable with the common colour-vision
deficiencies), and the highlighted categories also differ by hatch or marker, so
the plots survive greyscale printing. Units follow the pods frame: utilization in
percent (0-100) and cost per hour in assumed USD (the spec states neither; see
:data:`ccanalytics._frames.POD_COLUMNS`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Literal, TypeVar

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator

from ccanalytics.analysis import DEFAULT_IDLE_THRESHOLD
from ccanalytics.analysis import stragglers as find_stragglers

__all__ = [
    "COLORS",
    "NoDataError",
    "cost_breakdown",
    "cost_vs_utilization",
    "gpu_heatmap",
    "utilization_by_rank",
]

#: Okabe-Ito colours by role. One mapping, so every plot and the report agree.
COLORS: Final = {
    "gpu": "#0072B2",  # blue
    "straggler": "#D55E00",  # vermillion
    "idle": "#D55E00",
    "cpu": "#E69F00",  # orange
    "memory": "#CC79A7",  # reddish purple
    "range": "#000000",
    "no_metrics": "#999999",
    "median": "#555555",
}

#: Axis labels with units, written once.
UTIL_LABEL: Final = "utilization (%)"
GPU_UTIL_LABEL: Final = "GPU utilization (%)"
COST_LABEL: Final = "cost per hour (USD/h, assumed)"

#: Tick labels at most on an axis of ranks, whatever the number of ranks.
MAX_RANK_TICKS: Final = 20
#: Straggler annotations at most (beyond this the colour alone marks them).
MAX_ANNOTATIONS: Final = 6

FloatArray = npt.NDArray[np.float64]
_F = TypeVar("_F", bound=Callable[..., Any])


class NoDataError(ValueError):
    """There is nothing to draw (no rows, no GPU metrics, no cost)."""


# ---------------------------------------------------------------------------------
# Shared parameter documentation, formatted into each docstring (seaborn's
# ``_docstrings``), so a parameter reads the same wherever it appears.

_DOCS: Final = {
    "pods": """\
pods : pandas.DataFrame
        A pods frame (:func:`ccanalytics.pods_frame`, :func:`ccanalytics.load_cluster_pods`).""",
    "gpus": """\
gpus : pandas.DataFrame
        A GPU frame, one row per GPU (:func:`ccanalytics.gpus_frame`).""",
    "cluster_id": """\
cluster_id : str, optional
        The cluster to draw. ``None``: the frame's only cluster; a frame holding
        several clusters then raises ``ValueError`` (pick one rather than have
        ranks of different jobs drawn on top of each other).""",
    "idle_threshold": """\
idle_threshold : float
        A GPU pod is idle when its busiest GPU is below this utilization, in
        percent (the rule of :func:`ccanalytics.analysis.idle_pods`).""",
    "ax": """\
ax : matplotlib.axes.Axes, optional
        The axes to draw on. ``None``: ``plt.gca()``, the current axes of the
        current figure (a new one only if there is none), as seaborn does.""",
    "returns": """\
matplotlib.axes.Axes
        The axes drawn on, for further styling.""",
    "raises": """\
NoDataError
        (a ``ValueError``) when there is nothing to draw: an empty axes would
        read as zero utilization or zero cost.
    ValueError
        When the frame lacks a required column.""",
}


def _doc(func: _F) -> _F:
    """Fill ``{name}`` fields of ``func``'s docstring from :data:`_DOCS`."""
    if func.__doc__:  # ``python -OO`` strips docstrings
        func.__doc__ = func.__doc__.format(**_DOCS)
    return func


# ---------------------------------------------------------------------------------
# Helpers.


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"expected {what}; missing columns: {missing}")


def _floats(values: pd.Series) -> FloatArray:
    """A nullable column as float64 with NaN for ``<NA>`` (matplotlib's missing value)."""
    return np.asarray(values.to_numpy(dtype="float64", na_value=np.nan), dtype=np.float64)


def _one_cluster(frame: pd.DataFrame, cluster_id: str | None) -> tuple[str | None, pd.DataFrame]:
    """The rows of one cluster, and its id; ``ValueError`` if the choice is ambiguous."""
    if frame.empty:
        raise NoDataError("the frame has no rows: nothing to draw")
    ids = sorted(str(c) for c in frame["cluster_id"].dropna().unique())
    if cluster_id is None:
        if len(ids) > 1:
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            raise ValueError(
                f"the frame holds {len(ids)} clusters ({shown}); pass cluster_id= to pick one"
            )
        return (ids[0] if ids else None), frame
    subset = frame[frame["cluster_id"].eq(cluster_id).fillna(False)]
    if subset.empty:
        raise ValueError(f"no rows for cluster {cluster_id!r}; the frame holds {ids}")
    return cluster_id, subset


def _axes(ax: Axes | None) -> Axes:
    """``ax``, or the current axes, created only now (after the inputs were checked)."""
    return ax if ax is not None else plt.gca()


def _nice_step(n: int, max_ticks: int = MAX_RANK_TICKS) -> int:
    """The smallest of 1, 2, 5, 10, 20, 25, 50, 100, ... that labels ``n`` rows in ``max_ticks``."""
    magnitude = 1
    while True:
        for base in (1, 2, 5, 10, 20, 25, 50):
            step = base * magnitude
            if math.ceil(n / step) <= max_ticks:
                return step
        magnitude *= 100


def _straggler_ranks(
    given: pd.DataFrame | Iterable[int] | None, cluster: pd.DataFrame, cluster_id: str | None
) -> dict[int, float | None]:
    """Straggling rank -> its cluster median (``None``: compute from the plot's data)."""
    if given is None:
        given = find_stragglers(cluster)
    if isinstance(given, pd.DataFrame):
        _require(given, ["rank"], "a stragglers frame (ccanalytics.analysis.stragglers)")
        rows = given
        if cluster_id is not None and "cluster_id" in given.columns:
            rows = given[given["cluster_id"].eq(cluster_id).fillna(False)]
        rows = rows[rows["rank"].notna()]
        medians = (
            _floats(rows["cluster_median"])
            if "cluster_median" in rows.columns
            else np.full(len(rows), np.nan)
        )
        return {
            int(r): (None if math.isnan(m) else float(m))
            for r, m in zip(rows["rank"], medians, strict=True)
        }
    return {int(r): None for r in given}


# ---------------------------------------------------------------------------------
# The plots.


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


@_doc
def gpu_heatmap(
    gpus: pd.DataFrame,
    *,
    cluster_id: str | None = None,
    ax: Axes | None = None,
    vmin: float = 0,
    vmax: float = 100,
    cmap: str = "viridis",
) -> Axes:
    """Per-GPU utilization of one cluster as a rank x GPU-index heatmap.

    Shows what per-pod means hide: one slow GPU in a pod, or a whole rank lagging.
    Rows are the ranks present in the frame (sorted), columns the GPU indices;
    GPUs listed without a utilization are grey, and cells of GPUs a pod does not
    have (a 1-GPU pod among 2-GPU pods) are left blank. A colorbar gives the scale in
    percent. The colormap is perceptually uniform and colour-blind safe (viridis;
    ``cividis`` also works).

    Parameters
    ----------
    {gpus}
    {cluster_id}
    {ax}
    vmin, vmax : float
        The utilization the colour scale spans, in percent (default 0-100, so two
        heatmaps compare by colour).
    cmap : str
        A matplotlib colormap name.

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    _require(
        gpus, ["cluster_id", "rank", "gpu_index", "util"], "a GPU frame (ccanalytics.gpus_frame)"
    )
    cid, cluster = _one_cluster(gpus, cluster_id)
    cells = cluster[cluster["rank"].notna() & cluster["gpu_index"].notna()]
    if cells.empty or cells["util"].isna().all():
        raise NoDataError(f"cluster {cid} has no GPU utilization to draw")
    table = (
        cells.assign(util=_floats(cells["util"]))
        .groupby(["rank", "gpu_index"])["util"]
        .mean()
        .unstack("gpu_index")
    )
    n_gpus = int(cells["gpu_index"].max()) + 1
    table = table.reindex(columns=range(n_gpus))
    listed = (
        cells.groupby(["rank", "gpu_index"])
        .size()
        .unstack("gpu_index")
        .reindex(columns=range(n_gpus))
    ).notna()
    values = np.ma.masked_invalid(table.to_numpy(dtype=np.float64))
    ranks = [int(r) for r in table.index]
    ax = _axes(ax)

    # Three kinds of cell: a GPU with a value (coloured), a GPU listed without a
    # value (grey: it exists but does not report), no such GPU (a 1-GPU pod in a
    # cluster of 2-GPU pods: left blank, since nothing is missing there).
    colormap = matplotlib.colormaps[cmap].with_extremes(bad=(0.0, 0.0, 0.0, 0.0))
    image = ax.imshow(
        values,
        aspect="auto",
        interpolation="nearest",
        cmap=colormap,
        vmin=vmin,
        vmax=vmax,
    )
    silent = listed.to_numpy(dtype=bool) & np.ma.getmaskarray(values)
    if silent.any():
        ax.imshow(
            np.ma.masked_array(np.ones(silent.shape), mask=~silent),
            aspect="auto",
            interpolation="nearest",
            cmap=ListedColormap([COLORS["no_metrics"]]),
        )
    # Rows are positions 0..n-1; label them with the rank they hold (ranks may skip).
    step = _nice_step(len(ranks))
    positions = list(range(0, len(ranks), step))
    ax.yaxis.set_major_locator(FixedLocator(positions))
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda pos, _: str(ranks[round(pos)]) if 0 <= pos < len(ranks) else "")
    )
    ax.xaxis.set_major_locator(MaxNLocator(nbins=min(n_gpus, 16), integer=True))
    ax.set_xlabel("GPU index")
    ax.set_ylabel("rank")
    ax.set_title(f"{cid or 'cluster'}: utilization per GPU ({len(ranks)} ranks x {n_gpus} GPUs)")
    colorbar = ax.figure.colorbar(image, ax=ax, fraction=0.08, pad=0.03)
    colorbar.set_label(GPU_UTIL_LABEL)
    return ax


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

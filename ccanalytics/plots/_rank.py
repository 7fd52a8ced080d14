"""Utilization by rank: one cluster's ranks, GPU mean with range, CPU and memory."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from ccanalytics.measures import Params
from ccanalytics.plots._layout import RankLocator, legend_right, set_title
from ccanalytics.plots._style import (
    COLORS,
    MAX_ANNOTATIONS,
    UTIL_LABEL,
    BoolArray,
    FloatArray,
    NoDataError,
    _axes,
    _doc,
    _floats,
    _judged,
    _literal,
    _one_cluster,
    _require,
    _straggler_ranks,
)
from ccanalytics.plots.reads import UTILIZATION_BY_RANK

#: Beyond this many ranks bars touch and lines between ranks are only noise.
_MANY_RANKS = 64
_IDLE_HATCH = "xx"
_STRAGGLER_HATCH = "//"


@_doc
def utilization_by_rank(
    pods: pd.DataFrame,
    *,
    cluster_id: str | None = None,
    stragglers: pd.DataFrame | Iterable[int] | None = None,
    idle_threshold: float | None = None,
    ax: Axes | None = None,
    params: Params | None = None,
    verdicts: pd.DataFrame | None = None,
) -> Axes:
    """One cluster's ranks side by side: are they all doing the same work?

    In a data-parallel job every rank should look alike; a rank that does not is
    where the whole job waits. Each rank's mean GPU utilization (percent, 0-100) is
    a bar with its GPUs' min-max range as a black line, CPU and memory utilization
    are markers, and the dashed line is the median GPU utilization of the ranks.

    - Straggling ranks are vermillion and hatched ``//``, annotated with their
      utilization against the cluster median.
    - Idle ranks (running, busiest GPU below ``idle_threshold``: paid for, doing
      nothing; :func:`ccanalytics.analysis.idle_pods`'s rule) are reddish purple and hatched ``xx``, in a shaded column as tall as the
      axes, so a bar of 2 % is as visible as a straggler. Idle wins over straggler.
    - Ranks that report no metrics (starting, exited) are a grey ``x`` at 0; pods
      without a rank (pending) are not drawn.

    The axis holds only the ranks that exist (a cluster of ranks 0, 1, 2 and 5 has
    four slots, labelled so), and the title's rank count is that number. Readable
    from 2 to a few hundred ranks: at most 20 rank labels, and markers and lines
    thin out as ranks are added. The legend sits right of the axes: draw on a
    figure with ``layout="constrained"`` (or save with ``bbox_inches="tight"``).

    Parameters
    ----------
    {pods}
    {cluster_id}
    stragglers : pandas.DataFrame or iterable of int, optional
        The ranks to highlight: a frame like
        :func:`ccanalytics.analysis.stragglers` returns (its ``cluster_median`` is
        used in the annotation), or plain rank numbers. ``None``: computed with
        :func:`ccanalytics.analysis.stragglers` at this plot's thresholds. Pass ``[]``
        to highlight nothing.
    {idle_threshold}
    {ax}
    params : ccanalytics.measures.Params, optional
        Every threshold at once (the straggler ``z`` and ``min_gap`` too);
        ``idle_threshold`` overrides its idle line.
    {verdicts}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    _require(pods, UTILIZATION_BY_RANK, "a pods frame (ccanalytics.pods_frame)")
    judged_by = Params.of(params, idle_threshold=idle_threshold)  # ValueError unless 0-100
    cid, cluster = _one_cluster(pods, cluster_id)
    marked = _straggler_ranks(stragglers, cluster, cid, judged_by)
    ranked = _ranked_pods(cluster, cid)
    ranks = _Ranks.of(ranked, marked, _judged(ranked, verdicts, judged_by)["idle"].to_numpy(bool))
    ax = _axes(ax)

    handles = [
        *_draw_gpu_bars(ax, ranks),
        *_draw_idle_columns(ax, ranks, judged_by.idle_threshold),
        _draw_gpu_range(ax, ranks),
        *_draw_host_metrics(ax, ranks),
        _draw_median(ax, ranks),
        *_draw_silent(ax, ranks),
    ]
    n_slow = _annotate_stragglers(ax, ranks, marked)
    _rank_axis(ax, ranks)
    counts = [f"{ranks.n} ranks"]
    counts += [f"{n_slow} straggling"] if n_slow else []
    counts += [f"{int(ranks.idle.sum())} idle"] if ranks.idle.any() else []
    title = f"{_literal(cid or 'cluster')}: utilization by rank\n{', '.join(counts)}"
    set_title(ax, title, beside=legend_right(ax, handles))
    return ax


# ---------------------------------------------------------------------------------
# The data: one entry per ranked pod, in rank order.


def _ranked_pods(cluster: pd.DataFrame, cluster_id: str | None) -> pd.DataFrame:
    """The cluster's pods that have a rank, sorted by it; ``NoDataError`` if none reports."""
    ranked = cluster[cluster["rank"].notna()].sort_values("rank", kind="stable")
    if ranked["gpu_util_mean"].isna().all():
        raise NoDataError(
            f"cluster {cluster_id} has no rank reporting GPU utilization (CPU-only, or not running)"
        )
    return ranked


@dataclass(frozen=True)
class _Ranks:
    """A cluster's ranked pods as arrays (one entry per pod) and the rank axis."""

    labels: npt.NDArray[np.int64]  # the distinct ranks, ascending: one axis slot each
    x: FloatArray  # each pod's slot on the axis: the index of its rank in ``labels``
    rank: npt.NDArray[np.int64]
    gpu_mean: FloatArray
    gpu_low: FloatArray
    gpu_high: FloatArray
    host: dict[str, FloatArray]  # "cpu_util" (and "memory_util" when the frame has it)
    reporting: BoolArray  # reports GPU utilization
    idle: BoolArray  # reports, and its busiest GPU is below the idle threshold
    slow: BoolArray  # a straggler that is not idle

    @classmethod
    def of(cls, ranked: pd.DataFrame, marked: dict[int, float | None], idle: BoolArray) -> _Ranks:
        rank = ranked["rank"].to_numpy(dtype=np.int64)
        labels = np.unique(rank)
        gpu_mean = _floats(ranked["gpu_util_mean"])
        gpu_high = _floats(ranked["gpu_util_max"])
        reporting = ~np.isnan(gpu_mean)
        return cls(
            labels=labels,
            x=np.searchsorted(labels, rank).astype(np.float64),
            rank=rank,
            gpu_mean=gpu_mean,
            gpu_low=_floats(ranked["gpu_util_min"]),
            gpu_high=gpu_high,
            host={c: _floats(ranked[c]) for c in ("cpu_util", "memory_util") if c in ranked},
            reporting=reporting,
            idle=idle,
            slow=np.isin(rank, list(marked)) & reporting & ~idle,
        )

    @property
    def n(self) -> int:
        return len(self.labels)

    @property
    def many(self) -> bool:
        return self.n > _MANY_RANKS

    @property
    def median(self) -> float:
        return float(np.median(self.gpu_mean[self.reporting]))

    @property
    def marker_size(self) -> float:
        """~5 pt markers at 32 ranks, 1.5 pt at 250."""
        return float(np.clip(160.0 / self.n, 1.5, 6.0))

    @property
    def line_width(self) -> float:
        return float(np.clip(40.0 / self.n, 0.5, 1.5))


# ---------------------------------------------------------------------------------
# Drawing steps; each returns the legend entries of what it drew.


def _draw_idle_columns(ax: Axes, ranks: _Ranks, threshold: float) -> list[Artist]:
    """A shaded full-height column behind each idle rank: visible even at 0 %."""
    if not ranks.idle.any():
        return []
    ax.bar(
        ranks.x[ranks.idle],
        100.0,
        width=1.0,
        color=COLORS["idle"],
        alpha=0.3,
        linewidth=0,
        label="_idle columns",
        zorder=0.5,
    )
    return [
        Patch(
            facecolor=COLORS["idle"],
            hatch=_IDLE_HATCH,
            edgecolor="white",
            label=f"idle (busiest GPU < {threshold:g}%)",
        )
    ]


def _draw_gpu_bars(ax: Axes, ranks: _Ranks) -> list[Artist]:
    """One bar per reporting rank at its mean GPU utilization, coloured by what it is."""
    shown = ranks.reporting
    colors = np.where(
        ranks.idle, COLORS["idle"], np.where(ranks.slow, COLORS["straggler"], COLORS["gpu"])
    )
    bars = ax.bar(
        ranks.x[shown],
        ranks.gpu_mean[shown],
        width=1.0 if ranks.many else 0.8,
        color=list(colors[shown]),
        linewidth=0,
        label="_gpu bars",
        zorder=2,
    )
    for bar, slow, idle in zip(bars.patches, ranks.slow[shown], ranks.idle[shown], strict=True):
        if slow or idle:
            bar.set_hatch(_STRAGGLER_HATCH if slow else _IDLE_HATCH)
            bar.set_edgecolor("white")
    _draw_flat_bars(ax, ranks, colors)
    # Legend entries are drawn by hand: a bar container's entry takes the colour of
    # its first bar, which is the straggler's when rank 0 straggles.
    handles: list[Artist] = [Patch(facecolor=COLORS["gpu"], label="GPU mean")]
    if ranks.slow.any():
        handles.append(
            Patch(
                facecolor=COLORS["straggler"],
                hatch=_STRAGGLER_HATCH,
                edgecolor="white",
                label="straggler",
            )
        )
    return handles


def _draw_flat_bars(ax: Axes, ranks: _Ranks, colors: npt.NDArray[np.str_]) -> None:
    """A dash at 0 for bars of ~0 %: an invisible bar would read as "no data"."""
    flat = ranks.reporting & (ranks.gpu_mean < 1.0)
    if flat.any():
        half = 0.5 if ranks.many else 0.4
        ax.hlines(
            np.zeros(int(flat.sum())),
            ranks.x[flat] - half,
            ranks.x[flat] + half,
            color=list(colors[flat]),
            linewidth=3,
            clip_on=False,
            label="_flat bars",
            zorder=3,
        )


def _draw_gpu_range(ax: Axes, ranks: _Ranks) -> Artist:
    spread = ranks.reporting & ~np.isnan(ranks.gpu_low) & ~np.isnan(ranks.gpu_high)
    ax.vlines(
        ranks.x[spread],
        ranks.gpu_low[spread],
        ranks.gpu_high[spread],
        color=COLORS["range"],
        linewidth=ranks.line_width,
        label="_gpu range",
        zorder=3,
    )
    return Line2D([], [], color=COLORS["range"], linewidth=1, label="GPU min–max")


def _draw_host_metrics(ax: Axes, ranks: _Ranks) -> list[Artist]:
    """CPU and memory utilization: markers, joined by a line while ranks are few."""
    handles: list[Artist] = []
    for column, color, marker, label in (
        ("cpu_util", COLORS["cpu"], "o", "CPU"),
        ("memory_util", COLORS["memory"], "s", "memory"),
    ):
        if column in ranks.host:
            (line,) = ax.plot(
                ranks.x,
                ranks.host[column],
                color=color,
                marker=marker,
                markersize=ranks.marker_size,
                linestyle="none" if ranks.many else "-",
                linewidth=ranks.line_width * 0.6,
                label=label,
                zorder=4,
            )
            handles.append(line)
    return handles


def _draw_median(ax: Axes, ranks: _Ranks) -> Artist:
    return ax.axhline(
        ranks.median,
        color=COLORS["median"],
        linestyle="--",
        linewidth=1,
        zorder=1,
        label="median GPU mean",
    )


def _draw_silent(ax: Axes, ranks: _Ranks) -> list[Artist]:
    """A grey ``x`` at 0 for each rank without any metric: known to exist, state unknown.

    A rank with CPU or memory figures but no GPU one (a CPU-only controller) is not
    silent: its markers are drawn, so an ``x`` would contradict them.
    """
    host = np.zeros(len(ranks.rank), dtype=bool)
    for values in ranks.host.values():
        host |= ~np.isnan(values)
    silent = ~ranks.reporting & ~host
    if not silent.any():
        return []
    (line,) = ax.plot(
        ranks.x[silent],
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
    return [line]


def _annotate_stragglers(ax: Axes, ranks: _Ranks, marked: dict[int, float | None]) -> int:
    """Annotate the slowest stragglers (at most MAX_ANNOTATIONS); return how many straggle."""
    rows = sorted(
        zip(ranks.gpu_mean[ranks.slow], ranks.rank[ranks.slow], ranks.x[ranks.slow], strict=True)
    )
    middle = (ranks.n - 1) / 2
    for i, (util, rank, x) in enumerate(rows[:MAX_ANNOTATIONS]):
        ref = marked.get(int(rank)) or ranks.median
        on_right = x > middle
        ax.annotate(
            f"rank {rank}: {util:.1f}%\nmedian {ref:.1f}%",
            xy=(x, util),
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
    return len(rows)


def _rank_axis(ax: Axes, ranks: _Ranks) -> None:
    """One slot per existing rank, labelled with its number; at most 20 labels."""
    labels = ranks.labels
    ax.set_xlim(-0.6, ranks.n - 0.4)
    ax.set_ylim(0, 100)
    ax.xaxis.set_major_locator(RankLocator(ranks.n))
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda pos, _: str(labels[round(pos)]) if 0 <= pos < len(labels) else "")
    )
    ax.set_xlabel("rank")
    ax.set_ylabel(UTIL_LABEL)
    ax.grid(axis="y", color="0.9", linewidth=0.8, zorder=0)
    ax.set_axisbelow(True)

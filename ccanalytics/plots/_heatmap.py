"""Per-GPU utilization as a rank x GPU-index heatmap."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import matplotlib
import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FuncFormatter, MaxNLocator

from ccanalytics.plots._layout import RankLocator, legend_below, set_title
from ccanalytics.plots._style import (
    COLORS,
    GPU_UTIL_LABEL,
    NoDataError,
    _axes,
    _doc,
    _floats,
    _literal,
    _one_cluster,
    _require,
)

_ABSENT_HATCH = "////"
_ABSENT_EDGE = "0.75"


@_doc
def gpu_heatmap(
    gpus: pd.DataFrame,
    *,
    cluster_id: str | None = None,
    ax: Axes | None = None,
    vmin: float = 0,
    vmax: float = 100,
    cmap: str = "viridis",
    ranks: Iterable[int] | None = None,
) -> Axes:
    """Per-GPU utilization of one cluster as a rank x GPU-index heatmap.

    Shows what per-pod means hide: one slow GPU in a pod, or a whole rank lagging.
    Rows are the ranks present in the frame (sorted; only ranks that exist, and the
    title counts them), columns the GPU indices. A colorbar gives the scale in
    percent (0-100). Two kinds of cell have no colour, and the legend under the
    axes names each one present:

    - grey: a GPU listed without a utilization (``<NA>``): paid for and silent,
      because its pod is not running (the legend names the pods' ``status`` when
      the frame has that column) or the metric is missing;
    - white, hatched: no such GPU, no row at all (a 1-GPU pod among 2-GPU pods).

    The colormap is perceptually uniform and colour-blind safe (viridis; ``cividis``
    also works). The legend sits below the axes: draw on a figure with
    ``layout="constrained"`` (or save with ``bbox_inches="tight"``).

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
    ranks : iterable of int, optional
        The cluster's ranks (those of its pods frame, as
        :func:`utilization_by_rank` counts them): a rank that lists no GPU (an exited
        pod) is then a row of its own, so both plots count the same ranks.

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
    grid = _Grid.of(cells, () if ranks is None else ranks)
    ax = _axes(ax)

    colormap = matplotlib.colormaps[cmap].with_extremes(bad=(0.0, 0.0, 0.0, 0.0))
    image = ax.imshow(
        grid.values,
        aspect="auto",
        interpolation="nearest",
        cmap=colormap,
        vmin=vmin,
        vmax=vmax,
        zorder=1,
    )
    handles = [*_draw_absent(ax, grid), *_draw_silent(ax, grid, cells)]
    _rank_rows(ax, grid.ranks)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=min(grid.n_gpus, 16), integer=True))
    ax.set_xlabel("GPU index")
    ax.set_ylabel("rank")
    set_title(
        ax,
        f"{_literal(cid or 'cluster')}: utilization per GPU\n"
        f"{len(grid.ranks)} ranks x {grid.n_gpus} GPUs",
    )
    colorbar = ax.figure.colorbar(image, ax=ax, fraction=0.08, pad=0.03)
    colorbar.set_label(GPU_UTIL_LABEL)
    if handles:
        legend_below(ax, handles)
    return ax


@dataclass(frozen=True)
class _Grid:
    """The rank x GPU-index table: values (masked where unknown) and which GPUs are listed.

    Three kinds of cell: a GPU with a value; a GPU listed without a value (it exists,
    is paid for, and does not report: its pod is not running, or the metric is
    missing); no such GPU (no row at all: a 1-GPU pod among 2-GPU pods).
    """

    values: np.ma.MaskedArray[Any, np.dtype[np.float64]]
    listed: npt.NDArray[np.bool_]
    ranks: list[int]
    n_gpus: int

    @classmethod
    def of(cls, cells: pd.DataFrame, more_ranks: Iterable[int] = ()) -> _Grid:
        """The table of ``cells``, with a row (no GPU listed) for each of ``more_ranks``
        that has none."""
        n_gpus = int(cells["gpu_index"].max()) + 1
        by_cell = cells.assign(util=_floats(cells["util"])).groupby(["rank", "gpu_index"])
        table = by_cell["util"].mean().unstack("gpu_index").reindex(columns=range(n_gpus))
        rows = sorted({int(r) for r in table.index} | {int(r) for r in more_ranks})
        table = table.reindex(index=rows)
        listed = (
            by_cell.size().unstack("gpu_index").reindex(index=rows, columns=range(n_gpus)).notna()
        )
        return cls(
            values=np.ma.masked_invalid(table.to_numpy(dtype=np.float64)),
            listed=listed.to_numpy(dtype=bool),
            ranks=[int(r) for r in table.index],
            n_gpus=n_gpus,
        )

    @property
    def silent(self) -> npt.NDArray[np.bool_]:
        return self.listed & np.ma.getmaskarray(self.values)

    @property
    def absent(self) -> npt.NDArray[np.bool_]:
        return ~self.listed


def _draw_absent(ax: Axes, grid: _Grid) -> list[Artist]:
    """Hatch behind the image: it shows through the cells of GPUs that do not exist."""
    if not grid.absent.any():
        return []
    ax.add_patch(
        Rectangle(
            (-0.5, -0.5),
            grid.n_gpus,
            len(grid.ranks),
            facecolor="white",
            hatch=_ABSENT_HATCH,
            edgecolor=_ABSENT_EDGE,
            linewidth=0,
            zorder=0.5,
            label="_no such GPU",
        )
    )
    whole_rows = bool(grid.absent.all(axis=1).any())
    label = (
        "no GPU listed (the pod has fewer, or none)"
        if whole_rows
        else ("no such GPU (the pod has fewer)")
    )
    return [Patch(facecolor="white", hatch=_ABSENT_HATCH, edgecolor=_ABSENT_EDGE, label=label)]


def _draw_silent(ax: Axes, grid: _Grid, cells: pd.DataFrame) -> list[Artist]:
    """Grey over GPUs that exist but report nothing, named by their pods' statuses."""
    silent = grid.silent
    if not silent.any():
        return []
    ax.imshow(
        np.ma.masked_array(np.ones(silent.shape), mask=~silent),
        aspect="auto",
        interpolation="nearest",
        cmap=ListedColormap([COLORS["no_metrics"]]),
        zorder=1.1,
    )
    label = "no metrics"
    if "status" in cells.columns:
        quiet = cells[cells["util"].isna() & cells["status"].notna()]
        statuses = sorted({str(s).lower() for s in quiet["status"]})
        if statuses:
            label += f" ({_literal(', '.join(statuses))})"
    return [Patch(facecolor=COLORS["no_metrics"], label=label)]


def _rank_rows(ax: Axes, ranks: list[int]) -> None:
    """Rows are positions 0..n-1, labelled with the rank they hold (ranks may skip)."""
    ax.yaxis.set_major_locator(RankLocator(len(ranks)))
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda pos, _: str(ranks[round(pos)]) if 0 <= pos < len(ranks) else "")
    )

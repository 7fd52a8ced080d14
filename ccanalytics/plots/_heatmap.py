"""Per-GPU utilization as a rank x GPU-index heatmap."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator

from ccanalytics.plots._style import (
    COLORS,
    GPU_UTIL_LABEL,
    NoDataError,
    _axes,
    _doc,
    _floats,
    _nice_step,
    _one_cluster,
    _require,
)


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

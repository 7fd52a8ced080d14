"""Waste, not spend: idle and unused-capacity cost per group, ranked by waste.

The spend charts are dominated by the most expensive group; this one draws only what
is wasted, so a small cluster wasting half of its spend is as visible as a large one,
and says beside each bar what share of the group's spend it is.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ccanalytics.plots._cost import stacked_bars
from ccanalytics.plots._layout import legend_below, set_title
from ccanalytics.plots._style import COLORS, NoDataError, _axes, _doc, _floats, _literal, _require

__all__ = ["waste_breakdown"]

#: Bars at most by default; the last sums the groups that waste less.
DEFAULT_MAX_BARS: Final = 15
#: The two parts of a bar: idle pods, then unused capacity on pods in use.
_PARTS: Final = (
    ("idle", "idle GPU pods", COLORS["idle"], "xx"),
    ("unused", "unused capacity on pods in use", COLORS["cpu"], "//"),
)


@_doc
def waste_breakdown(
    costs: pd.DataFrame,
    *,
    by: str = "cluster_id",
    total: str = "total_cost",
    idle: str = "idle_cost",
    unused: str = "unused_cost",
    unit: str = "USD",
    max_bars: int | None = DEFAULT_MAX_BARS,
    ax: Axes | None = None,
) -> Axes:
    """Idle and unused-capacity cost per group, the most wasteful on top.

    One horizontal bar per group that wastes anything: its idle-pod cost, then the
    rest of its unused-capacity cost (unused capacity counts idle pods too, so the
    bar's length is the unused-capacity cost, or the idle cost if larger). Beside
    each bar: the waste and its share of the group's spend. Groups wasting nothing
    are left out; beyond ``max_bars`` groups the last bar sums the rest.

    Parameters
    ----------
    costs : pandas.DataFrame
        One row per group, e.g. ``History.idle_cost(by="cluster")`` (the defaults) or
        :func:`ccanalytics.analysis.cluster_summary` with ``total="cost_per_hour"``,
        ``idle="idle_cost_per_hour"``, ``unused="unused_cost_per_hour"``, ``unit="USD/h"``.
    by, total, idle, unused : str
        The columns: the group's name, its spend, idle-pod cost, unused-capacity cost.
    unit : str
        The unit of the amounts, for the axis and the notes.
    max_bars : int or None
        The most bars drawn (at least 2), the last one summing the others.
    {ax}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    _require(costs, [by, total, idle, unused], f"a frame with {by}, {total}, {idle}, {unused}")
    if max_bars is not None and max_bars < 2:
        raise ValueError(f"max_bars must be at least 2 (or None), got {max_bars}")
    waste = _waste_by_group(costs, by, total, idle, unused, max_bars)
    if waste.empty:
        raise NoDataError("no group wastes anything: nothing to draw")
    ax = _axes(ax)

    handles = stacked_bars(ax, waste, _PARTS)
    _annotate(ax, waste, unit)
    ax.set_yticks(np.arange(len(waste)), labels=[_literal(g) for g in waste.index])
    ax.invert_yaxis()  # most wasteful on top
    ax.set_xlim(0, float((waste["idle"] + waste["unused"]).max()) * 1.45)
    ax.set_xlabel(f"waste ({unit})")
    name = "GPU type" if by == "gpu_type" else "cluster" if by == "cluster_id" else by
    set_title(ax, f"Waste by {name}: idle and unused capacity")
    ax.grid(axis="x", color="0.9", linewidth=0.8)
    ax.set_axisbelow(True)
    legend_below(ax, handles)
    return ax


def _waste_by_group(
    costs: pd.DataFrame, by: str, total: str, idle: str, unused: str, max_bars: int | None
) -> pd.DataFrame:
    """Per group with waste (rows, most wasteful first): ``idle``, ``unused``, ``total``."""
    idle_usd = np.nan_to_num(_floats(costs[idle]))
    frame = pd.DataFrame(
        {
            "idle": idle_usd,
            # Unused capacity includes the idle pods': only the rest is drawn after them.
            "unused": np.clip(np.nan_to_num(_floats(costs[unused])) - idle_usd, 0.0, None),
            "total": np.nan_to_num(_floats(costs[total])),
        },
        index=costs[by].astype("string").fillna("unknown").to_numpy(str),
    )
    frame = frame.groupby(level=0).sum()
    frame = frame[(frame["idle"] + frame["unused"]) > 0]
    waste = (frame["idle"] + frame["unused"]).to_numpy()
    frame = frame.iloc[np.lexsort((frame.index.to_numpy(str), -waste))]
    if max_bars is not None and len(frame) > max_bars:
        kept, rest = frame.iloc[: max_bars - 1], frame.iloc[max_bars - 1 :]
        frame = pd.concat([kept, rest.sum().to_frame(f"{len(rest)} others").T])
    return frame


def _annotate(ax: Axes, waste: pd.DataFrame, unit: str) -> None:
    """Each bar's waste and its share of the group's spend, just past its end."""
    amounts = (waste["idle"] + waste["unused"]).to_numpy(dtype=np.float64)
    totals = waste["total"].to_numpy(dtype=np.float64)
    for pos, (amount, total) in enumerate(zip(amounts, totals, strict=True)):
        share = f" ({amount / total:.0%} of its spend)" if total > 0 else ""
        ax.annotate(
            f"{amount:,.2f} {unit}{share}",
            xy=(float(amount), float(pos)),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize="small",
        )

"""Waste, not spend: idle and unused-capacity cost per group, ranked by waste.

The spend charts are dominated by the most expensive group; this one draws only what
is wasted, so a small cluster wasting half of its spend is as visible as a large one,
and says beside each bar what share of the group's spend it is (the caller's figure:
the registry's ``idle_and_unused_cost_share``, by the engine).
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
    idle: str = "idle_cost",
    unused: str = "busy_unused_cost",
    share: str | None = "idle_and_unused_cost_share",
    unit: str = "USD",
    max_bars: int | None = DEFAULT_MAX_BARS,
    ax: Axes | None = None,
) -> Axes:
    """Idle and unused-capacity cost per group, the most wasteful on top.

    One horizontal bar per group that wastes anything: its idle-pod cost, then the
    unused capacity of its pods in use (idle pods are in the first part only). Beside
    each bar: the waste and its share of the group's spend, as ``share`` gives it.
    Groups wasting nothing are left out; beyond ``max_bars`` groups the last bar sums
    the rest (its share is not drawn: no group's spend is the sum's). The figures are
    the caller's: nothing is computed here but the bars' order.

    Parameters
    ----------
    costs : pandas.DataFrame
        One row per group, e.g. ``History.measures(["idle_cost", "busy_unused_cost",
        "idle_and_unused_cost_share"], by="cluster")`` (the defaults) or
        :func:`ccanalytics.analysis.cluster_summary` with ``idle="idle_cost_per_hour"``,
        ``unused="busy_unused_cost_per_hour"``, ``share="idle_and_unused_cost_share"``,
        ``unit="USD/h"``.
    by, idle, unused : str
        The columns: the group's name, its idle-pod cost, the unused-capacity cost of
        its pods in use (the registry's ``busy_unused_cost``).
    share : str or None
        The column of the waste's share of the group's spend (0-1, the registry's
        ``idle_and_unused_cost_share``); None: no share beside the bars.
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
    given = [by, idle, unused, *([share] if share else [])]
    _require(costs, given, f"a frame with {', '.join(given)}")
    if max_bars is not None and max_bars < 2:
        raise ValueError(f"max_bars must be at least 2 (or None), got {max_bars}")
    waste = _waste_by_group(costs, by, idle, unused, share, max_bars)
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
    costs: pd.DataFrame,
    by: str,
    idle: str,
    unused: str,
    share: str | None,
    max_bars: int | None,
) -> pd.DataFrame:
    """Per group with waste (rows, most wasteful first): ``idle``, ``unused``, ``share``."""
    nothing = np.full(len(costs), np.nan)
    frame = pd.DataFrame(
        {
            "idle": np.nan_to_num(_floats(costs[idle])),
            "unused": np.nan_to_num(_floats(costs[unused])),
            "share": _floats(costs[share]) if share else nothing,
        },
        index=costs[by].astype("string").fillna("unknown").to_numpy(str),
    )
    frame = frame[(frame["idle"] + frame["unused"]) > 0]
    # The bars' order (most wasteful first, then by name): drawing, not a figure.
    waste = (frame["idle"] + frame["unused"]).to_numpy()
    frame = frame.iloc[np.lexsort((frame.index.to_numpy(str), -waste))]
    if max_bars is not None and len(frame) > max_bars:
        kept, rest = frame.iloc[: max_bars - 1], frame.iloc[max_bars - 1 :]
        others = rest[["idle", "unused"]].sum().to_frame(f"{len(rest)} others").T
        frame = pd.concat([kept, others.assign(share=np.nan)])
    return frame


def _annotate(ax: Axes, waste: pd.DataFrame, unit: str) -> None:
    """Each bar's waste and its share of the group's spend, just past its end."""
    amounts = (waste["idle"] + waste["unused"]).to_numpy(dtype=np.float64)
    shares = waste["share"].to_numpy(dtype=np.float64)
    for pos, (amount, share) in enumerate(zip(amounts, shares, strict=True)):
        note = f" ({share:.0%} of its spend)" if np.isfinite(share) else ""
        ax.annotate(
            f"{amount:,.2f} {unit}{note}",
            xy=(float(amount), float(pos)),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize="small",
        )

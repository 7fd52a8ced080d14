"""Where each budget period is heading: spent so far, the forecast of the rest, its interval.

From :meth:`ccanalytics.History.spend`: one horizontal bar per period (day, week,
month), the spend so far and, stacked after it, the forecast's median (P50) of the
rest of the period, so the bar ends at the P50 total; an error bar from the P10 to the
P90 total; the burn-rate line's total (``projected``) as a diamond; and a limit, when
given, as a dashed mark across its period's bar. The title says whether the forecast
is the seasonal one or, with too little history, the burn-rate line, and why.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from ccanalytics.measures import limit_of
from ccanalytics.plots._layout import legend_beside, set_title
from ccanalytics.plots._style import (
    COLORS,
    COST_USD_LABEL,
    NoDataError,
    _axes,
    _doc,
    _floats,
    _literal,
    _one_cluster,
    _require,
)

__all__ = ["spend_outlook"]

#: The columns of ``History.spend`` the plot reads.
_COLUMNS = (
    "period",
    "period_start",
    "period_end",
    "spent",
    "projected",
    "forecast",
    "forecast_note",
    "projected_p10",
    "projected_p50",
    "projected_p90",
)


@_doc
def spend_outlook(
    spend: pd.DataFrame,
    *,
    cluster_id: str | None = None,
    limit: float | Mapping[str, float] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Each period's spend so far and the forecast of its rest, one bar per period.

    Parameters
    ----------
    spend : pandas.DataFrame
        ``History.spend(by=None)`` (or ``by="cluster"`` with ``cluster_id``): the
        columns ``period``, ``period_start``, ``period_end``, ``spent``,
        ``projected``, ``forecast``, ``forecast_note`` and ``projected_p10/p50/p90``.
    cluster_id : str, optional
        The cluster to draw from a ``by="cluster"`` frame. ``None``: the frame's only
        cluster (or the whole store, from ``by=None``); a frame holding several
        clusters then raises ``ValueError``, as the other plots of one cluster do
        (bars of different clusters side by side would read as one budget).
    limit : float or mapping, optional
        The limit passed to ``History.spend``: USD for every period, or a mapping
        of period to USD (a period missing from it has no limit). Drawn as a
        dashed mark across the bar of each period that has one.
    {ax}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    _require(spend, _COLUMNS, "a History.spend frame")
    if spend.empty:
        raise NoDataError("the spend frame has no rows (an empty store): nothing to draw")
    title_of = ""
    if "cluster_id" in spend.columns:
        chosen, spend = _one_cluster(spend, cluster_id)
        title_of = f" of cluster {_literal(chosen)}" if chosen is not None else ""
    elif cluster_id is not None:
        raise ValueError("cluster_id= needs a History.spend(by='cluster') frame")
    # Shortest period first (day, week, month): their lengths order them, whatever now is.
    rows = spend.assign(_length=spend["period_end"] - spend["period_start"])
    rows = rows.sort_values("_length", kind="stable").reset_index(drop=True)
    ax = _axes(ax)
    handles = _draw_bars(ax, rows, limit)
    ax.set_yticks(np.arange(len(rows)), [_literal(p) for p in rows["period"]])
    ax.invert_yaxis()  # the day on top
    ax.set_xlabel(COST_USD_LABEL)
    ax.set_xlim(left=0)
    ax.grid(axis="x", color="0.9", linewidth=0.8)
    ax.set_axisbelow(True)
    legend = legend_beside(ax, handles)
    set_title(ax, _title(rows) + title_of, beside=legend)
    return ax


def _draw_bars(
    ax: Axes, rows: pd.DataFrame, limit: float | Mapping[str, float] | None
) -> list[Artist]:
    """The bars, interval, line markers and limits of ``rows``; their legend handles."""
    y = np.arange(len(rows), dtype=np.float64)
    spent, p50 = _floats(rows["spent"]), _floats(rows["projected_p50"])
    p10, p90 = _floats(rows["projected_p10"]), _floats(rows["projected_p90"])
    seasonal = (rows["forecast"] == "seasonal").fillna(False).to_numpy(dtype=bool)
    ax.barh(y, spent, height=0.6, color=COLORS["gpu"], label="spent so far")
    rest_label = "rest of the period (P50)" if seasonal.any() else "rest at the burn rate"
    handles: list[Artist] = [
        Patch(facecolor=COLORS["gpu"], label="spent so far"),
        Patch(facecolor=COLORS["memory"], alpha=0.55, hatch="//", label=rest_label),
    ]
    ax.barh(
        y,
        p50 - spent,
        left=spent,
        height=0.6,
        color=COLORS["memory"],
        alpha=0.55,
        hatch="//",
        label=rest_label,
    )
    if seasonal.any():
        interval = ax.errorbar(
            p50,
            y,
            xerr=np.vstack([p50 - p10, p90 - p50]),
            fmt="none",
            ecolor=COLORS["range"],
            capsize=4,
            label="P10 to P90 total",
        )
        # The container is no Artist; its bars (one LineCollection) stand for it.
        (bars,) = interval.lines[2]
        bars.set_label("P10 to P90 total")
        handles.append(bars)
    line = ax.scatter(
        _floats(rows["projected"]),
        y,
        marker="D",
        s=36,
        color=COLORS["straggler"],
        zorder=3,
        label="burn-rate line's total",
    )
    handles.append(line)
    limits = np.array(
        [limit_of(limit, str(p)) for p in rows["period"]], dtype=np.float64
    )  # None: NaN
    has = ~np.isnan(limits)
    if has.any():
        marks = ax.vlines(
            limits[has],
            y[has] - 0.4,
            y[has] + 0.4,
            colors=COLORS["idle"],
            linestyles="--",
            linewidth=2,
            zorder=4,  # over the bars and the interval: the mark the bars are read against
            label="limit",
        )
        handles.append(marks)
    return handles


def _title(rows: pd.DataFrame) -> str:
    """Which forecast the bars show and, for the line, why (the forecast's own note)."""
    methods = set(rows["forecast"].dropna())
    if methods == {"seasonal"}:
        return "Spend so far and the seasonal forecast to each period's end"
    notes = sorted({_literal(n) for n in rows["forecast_note"].dropna()})
    why = f"\nburn-rate line: {'; '.join(notes)}" if notes else ""
    if "seasonal" in methods:
        return "Spend so far and the seasonal forecast where the history allows" + why
    return "Spend so far and the burn-rate line to each period's end" + why

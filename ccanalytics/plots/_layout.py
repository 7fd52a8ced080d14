"""Where legends and titles go, so they fit a small axes (4 x 3 in) without hiding data.

Legends are placed outside the data area: to the right of the axes (beside lines and
bars), or below the x label (under heatmaps, whose right side holds the colorbar).
Either way a layout engine (``layout="constrained"``, as the report uses, or
``bbox_inches="tight"`` when saving, as Jupyter's inline backend does) makes room for
them. Titles are wrapped to the axes' width instead of running off the figure's edges,
and axes of ranks are labelled by :class:`RankLocator`, as densely as the axis's length
allows at draw time. Everything is computed from sizes, never by drawing.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any, Final

from matplotlib import rcParams
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.legend import Legend
from matplotlib.ticker import Locator
from matplotlib.transforms import offset_copy

#: Tick labels at most on an axis of ranks, whatever its length.
MAX_RANK_TICKS: Final = 20

#: Average width of a character of the default sans-serif font, in ems (DejaVu Sans:
#: ~0.55 for lower case; a little more so that upper case and digits fit too).
_CHAR_EM: Final = 0.55
#: Room left of the axes for the y tick labels and label, in points (about 0.6 in).
_Y_LABELS_PT: Final = 45.0
#: Legend entries per column before a right-hand legend gets a second column.
_ROWS_PER_COLUMN: Final = 16


def _figure(ax: Axes) -> Figure:
    """The figure ``ax`` is drawn in (the root one, if ``ax`` is in a subfigure)."""
    # Walked up by hand: get_figure(root=True) is matplotlib 3.10 and later only.
    figure: Any = ax.figure
    while figure is not None and not isinstance(figure, Figure):
        figure = figure.figure  # a SubFigure's parent
    assert isinstance(figure, Figure)  # an axes always belongs to a figure
    return figure


def _points(size: object) -> float:
    """A font size (points or a name like ``"small"``) in points, under today's rcParams."""
    return float(FontProperties(size=size).get_size_in_points())  # type: ignore[arg-type]


def _legend_width_pt(labels: Sequence[str], ncol: int = 1) -> float:
    """About how wide a legend of these labels is, in points (handle and gaps included)."""
    longest = max((len(line) for label in labels for line in label.splitlines()), default=1)
    return ncol * (longest * _CHAR_EM + 3.5) * _points("small")


def _lines(text: str) -> int:
    return text.count("\n") + 1 if text else 0


def _columns(entries: int) -> int:
    return 1 + max(entries - 1, 0) // _ROWS_PER_COLUMN


def set_title(ax: Axes, title: str, *, beside: Legend | None = None) -> None:
    """Set ``ax``'s title, wrapped at spaces to fit the figure's width.

    A title wider than the figure is cut off at its edges and no layout engine can
    help, so it is wrapped here. The room is the axes' width once a layout engine has
    placed it: the figure's width less the y axis's labels and ``beside`` (a legend
    right of the axes), plus what a centred title may overhang on each side. A long
    unbroken word, such as a cluster id, is broken too.
    """
    figure_pt = _figure(ax).get_figwidth() * 72.0
    if beside is None:
        width_pt = ax.get_position().width * figure_pt
    else:
        labels = [t.get_text() for t in beside.get_texts()]
        axes_pt = figure_pt - _Y_LABELS_PT - _legend_width_pt(labels, _columns(len(labels)))
        width_pt = axes_pt + _Y_LABELS_PT
    per_line = max(int(width_pt / (_CHAR_EM * _points(rcParams["axes.titlesize"]))), 12)
    lines = [
        wrapped
        for line in title.splitlines()
        for wrapped in (textwrap.wrap(line, per_line, break_on_hyphens=False) or [""])
    ]
    ax.set_title("\n".join(lines))


def _make_room(ax: Axes) -> None:
    """A legend outside the axes needs a layout engine to make room for it: without one
    (``plt.subplots()``'s default) it runs into the axes beside it or off the figure, so a
    figure that has none gets the constrained layout; one that has an engine keeps it."""
    figure = _figure(ax)
    if figure.get_layout_engine() is None:
        figure.set_layout_engine("constrained")


def legend_right(ax: Axes, handles: Sequence[Artist], *, title: str | None = None) -> Legend:
    """A legend to the right of the axes, top-aligned: beside the data, never on it."""
    _make_room(ax)
    return ax.legend(
        handles=list(handles),
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        borderaxespad=0.0,
        ncol=_columns(len(handles)),
        frameon=False,
        fontsize="small",
        title=title,
        title_fontsize="small",
        alignment="left",
    )


def legend_beside(
    ax: Axes, handles: Sequence[Artist], *, title: str | None = None
) -> Legend | None:
    """A legend right of the axes when that leaves the data most of the width, else below.

    Returns the legend when it went to the right (pass it to :func:`set_title` as
    ``beside``), ``None`` when it went below.
    """
    figure_pt = _figure(ax).get_figwidth() * 72.0
    labels = [str(h.get_label()) for h in handles] + ([title] if title else [])
    if figure_pt - _Y_LABELS_PT - _legend_width_pt(labels, _columns(len(handles))) >= (
        0.55 * figure_pt
    ):
        return legend_right(ax, handles, title=title)
    legend_below(ax, handles, title=title)
    return None


def legend_below(ax: Axes, handles: Sequence[Artist], *, title: str | None = None) -> Legend:
    """A legend under the x axis's tick labels and label, in as many columns as fit.

    The offset below the axes is the height of what sits there (ticks, their labels
    and the x label, from rcParams), so the legend never covers the label.
    """
    below_pt = (
        max(rcParams["xtick.major.size"], 0)
        + rcParams["xtick.major.pad"]
        + _points(rcParams["xtick.labelsize"]) * 1.2
        + rcParams["axes.labelpad"]
        + _points(rcParams["axes.labelsize"]) * 1.2 * _lines(ax.get_xlabel())
        + 4.0
    )
    _make_room(ax)
    anchor = offset_copy(ax.transAxes, fig=_figure(ax), y=-below_pt, units="points")
    width_pt = ax.get_position().width * _figure(ax).get_figwidth() * 72.0 * 1.1
    entry_pt = _legend_width_pt([str(h.get_label()) for h in handles])
    ncol = max(1, min(len(handles), int(width_pt // entry_pt)))
    return ax.legend(
        handles=list(handles),
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        bbox_transform=anchor,
        borderaxespad=0.0,
        ncol=ncol,
        frameon=False,
        fontsize="small",
        title=title,
        title_fontsize="small",
    )


def nice_step(n: int, max_ticks: int = MAX_RANK_TICKS) -> int:
    """The smallest of 1, 2, 5, 10, 20, 25, 50, 100, ... that labels ``n`` rows in ``max_ticks``."""
    magnitude = 1
    while True:
        for base in (1, 2, 5, 10, 20, 25, 50):
            step = base * magnitude
            if -(-n // step) <= max(max_ticks, 1):
                return step
        magnitude *= 100


class RankLocator(Locator):
    """Ticks at slots 0, step, 2 step, ... of an axis of ``n`` ranks, one slot per rank.

    The step is the smallest round number whose labels fit the axis's length when it
    is drawn (matplotlib's own estimate, ``Axis.get_tick_space``), and at most
    :data:`MAX_RANK_TICKS` labels: 32 ranks get every other label on a report-wide
    axes and every tenth on a 4-inch one, and labels never overlap.
    """

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self) -> list[int]:
        # Rank labels are up to 3 digits: give each a little more room than a number.
        space = int(self.axis.get_tick_space() * 0.8) if self.axis is not None else MAX_RANK_TICKS
        return list(range(0, self.n, nice_step(self.n, min(max(space, 2), MAX_RANK_TICKS))))

    def tick_values(self, vmin: float, vmax: float) -> list[int]:
        return self()

"""Time buckets and the time axis, shared by the plots of time.

A History frame lists the buckets someone observed; a plot must also show the ones
nobody did. Here the frame becomes a table on every bucket from the first to the last
(NaN where unobserved), and the x axis gets round UTC ticks that fit its length.
"""

from __future__ import annotations

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import Locator

from ccanalytics.plots._style import FloatArray, _floats


def naive_utc(times: pd.Index) -> np.ndarray:
    """Times as naive UTC datetime64 (what matplotlib's date axis takes), UTC kept."""
    index = pd.DatetimeIndex(times)
    if index.tz is not None:
        index = index.tz_convert("UTC").tz_localize(None)
    return np.asarray(index.to_numpy(dtype="datetime64[ns]"))


def date_numbers(times: pd.Index) -> FloatArray:
    """Times as matplotlib date numbers (days since its epoch), for extents and bar x."""
    return np.asarray(mdates.date2num(naive_utc(times)), dtype=np.float64)  # type: ignore[no-untyped-call]


def bucket_table(frame: pd.DataFrame, by: str) -> pd.DataFrame:
    """Mean GPU utilization, time x ``by``, on every bucket from first to last (NaN: not seen).

    The bucket width is the frame's ``attrs["freq"]`` when History sets it, else the
    smallest step between its times; times off that grid are kept too, so no row is
    ever dropped by the reindex.
    """
    rows = frame[frame["time"].notna() & frame[by].notna()]
    if rows.empty:
        return pd.DataFrame()
    table = (
        rows.assign(value=_floats(rows["gpu_util_mean"]), time=pd.to_datetime(rows["time"]))
        .pivot_table(index="time", columns=by, values="value", aggfunc="mean", dropna=False)
        .sort_index()
    )
    step = _bucket_step(frame, pd.DatetimeIndex(table.index))
    if step is not None:
        grid = pd.date_range(table.index[0], table.index[-1], freq=step)
        table = table.reindex(grid.union(pd.DatetimeIndex(table.index)))
    return table


def _bucket_step(frame: pd.DataFrame, times: pd.DatetimeIndex) -> pd.Timedelta | None:
    freq = frame.attrs.get("freq")
    if freq is not None:
        return pd.Timedelta(freq)
    if len(times) < 2:
        return None
    return pd.Timedelta(np.diff(times.asi8).min())


def bucket_edges(times: pd.Index) -> tuple[float, float]:
    """The left edge of the first bucket and the right edge of the last, as date numbers."""
    edges = date_numbers(times)
    width = float(np.diff(edges).min()) if len(edges) > 1 else 1.0 / 24
    return float(edges[0]), float(edges[-1] + width)


class _TimeLocator(Locator):
    """Ticks at round times (every 15 min, hour, 6 h, day, week...), as many as fit.

    Date numbers count days from the Unix epoch, so steps of a day or less land on
    round UTC times. The step is the smallest that keeps the labels to what the
    axis's length holds when drawn (``Axis.get_tick_space``, with room for "03:00").
    """

    def __init__(self, *, min_step_days: float = 0.0) -> None:
        self.min_step_days = min_step_days

    _STEPS_DAYS = (
        tuple(m / 1440 for m in (1, 5, 10, 15, 30))
        + tuple(h / 24 for h in (1, 2, 3, 4, 6, 12))
        + (1.0, 2.0, 7.0, 14.0, 28.0, 91.0, 365.0)
    )

    def __call__(self) -> list[float]:
        if self.axis is None:
            return []
        vmin, vmax = self.axis.get_view_interval()
        return self.tick_values(vmin, vmax)

    def tick_values(self, vmin: float, vmax: float) -> list[float]:
        vmin, vmax = sorted((vmin, vmax))
        fit = int(self.axis.get_tick_space() * 0.6) if self.axis is not None else 8
        most = max(2, min(fit, 8))
        steps = [s for s in self._STEPS_DAYS if s >= self.min_step_days]
        step = next((s for s in steps if (vmax - vmin) / s <= most), steps[-1])
        first = np.ceil(vmin / step - 1e-9) * step
        return [float(t) for t in np.arange(first, vmax + 1e-9, step)]


def time_axis(ax: Axes, times: pd.Index, *, daily: bool = False) -> None:
    """Round UTC ticks, short labels, and the span in the axis label (no offset text,
    which would collide with the label on a small axes)."""
    locator = _TimeLocator(min_step_days=1.0 if daily else 0.0)
    ax.xaxis.set_major_locator(locator)
    # Days are labelled by date: the concise formatter reads a lone midnight as "00:00".
    formatter = (
        mdates.DateFormatter("%b %d")  # type: ignore[no-untyped-call]
        if daily
        else mdates.ConciseDateFormatter(locator, show_offset=False)  # type: ignore[no-untyped-call]
    )
    ax.xaxis.set_major_formatter(formatter)
    first, last = pd.DatetimeIndex(naive_utc(times))[[0, -1]]
    shown = "%Y-%m-%d" if daily else "%Y-%m-%d %H:%M"
    end = last.strftime("%H:%M" if not daily and first.date() == last.date() else shown)
    span = first.strftime(shown) + ("" if first == last else f" to {end}")
    ax.set_xlabel(f"{'day' if daily else 'time'} (UTC)\n{span}")

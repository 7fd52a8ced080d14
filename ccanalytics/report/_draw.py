"""The report's figures: what to draw, drawing it as an embedded PNG, on every core.

A figure is a :class:`Plot` (a :mod:`ccanalytics.plots` function by name and the
arguments it takes, all picklable) with its size, alt text and caption. While a page
is rendered (:func:`drawn_together`), :func:`figure` only notes it and leaves a
placeholder; :func:`fill_figures` then draws them all.

Where they are drawn (the bytes are the same either way, tested):

- in :class:`Drawers`, worker processes started before the report loads anything.
  They are forked while the process is still single-threaded (so no lock held by
  another thread is copied into them) and import matplotlib and draw a first figure
  while the parent loads the fleet on the other core, so the parent never imports
  matplotlib. A plot reaches them pickled, which is why a fleet-wide plot is sent
  only the columns it reads (:mod:`ccanalytics.plots.reads`) and a plot of one
  cluster only that cluster's rows. Drawing is CPU-bound Python holding the GIL, so
  threads would not help.
- here, one after another, when workers cannot be forked safely (other threads
  running Python: an in-process sandbox, Jupyter, pytest-xdist) or would not pay for
  themselves.

The PNG is encoded here (:func:`_encode_png`): one draw of the figure on a
``FigureCanvasAgg``, "Up"-filtered rows, no metadata.
"""

from __future__ import annotations

import base64
import multiprocessing
import os
import signal
import struct
import sys
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

import numpy as np
import numpy.typing as npt
from markupsafe import Markup

from ccanalytics.errors import NoDataError
from ccanalytics.report._templates import figure_html, no_figure_html

if TYPE_CHECKING:
    from matplotlib.axes import Axes

# Underscored names are for ``report``, not public API.
__all__ = [
    "DPI",
    "PIXEL_RATIO",
    "Drawers",
    "Plot",
    "drawn_together",
    "figure",
    "fill_figures",
]

#: CSS pixels per inch of a figure: the size it takes on the page.
DPI: Final = 100
#: Image pixels per CSS pixel: 2 makes the figures sharp on high-DPI ("retina") screens.
PIXEL_RATIO: Final = 2
#: Figures below which workers cost more than they save (forks and their start).
MIN_FIGURES_FOR_POOL: Final = 4

PlotName = Literal[
    "cost_breakdown",
    "cost_vs_utilization",
    "gpu_heatmap",
    "idle_cost_by_day",
    "rank_time_heatmap",
    "utilization_by_rank",
    "utilization_over_time",
    "waste_breakdown",
]


class Plot:
    """A :mod:`ccanalytics.plots` function by name, with its arguments but ``ax``.

    Picklable as long as its arguments are (frames, strings, numbers), unlike a
    closure: a worker process can be sent one.
    """

    def __init__(self, name: PlotName, *args: Any, **kwargs: Any) -> None:
        self.name, self.args, self.kwargs = name, args, kwargs

    def __call__(self, ax: Axes) -> object:
        from ccanalytics import plots

        return getattr(plots, self.name)(*self.args, ax=ax, **self.kwargs)


class _Job(NamedTuple):
    """A figure to draw: the plot, its size in inches, its alt text and caption."""

    plot: Callable[[Axes], object]  # a Plot, whenever it may go to a worker
    size: tuple[float, float]
    alt: str
    caption: str


class _Page(NamedTuple):
    """The figures of a page being rendered, and the workers that may start on them."""

    jobs: list[_Job]
    drawers: Drawers | None


#: The page being rendered (see ``drawn_together``).
_pending: ContextVar[_Page | None] = ContextVar("_pending", default=None)


def _placeholder(index: int) -> Markup:
    # Markup: our own fixed text, no value in it; fill_figures replaces it with the
    # figure's snippet (figure_html, its values escaped) before the page leaves.
    return Markup(f"\x00figure {index}\x00")


def figure(plot: Plot, size: tuple[float, float], alt: str, caption: str) -> Markup:
    """The figure's HTML, or, while a page is rendered, a placeholder for it.

    With the page's workers, the figure is sent to them at once: they draw it while
    the rest of the page is rendered here.
    """
    page = _pending.get()
    job = _Job(plot, size, alt, caption)
    if page is None:
        return _figure_now(job)
    page.jobs.append(job)
    if page.drawers is not None:
        page.drawers.start(len(page.jobs) - 1, job)
    return _placeholder(len(page.jobs) - 1)


@contextmanager
def drawn_together(drawers: Drawers | None = None) -> Iterator[list[_Job]]:
    """Within this block :func:`figure` only notes its figure and returns a placeholder;
    :func:`fill_figures` then draws them all, on every core when it may. ``drawers``
    (the same given to :func:`fill_figures`) start on each figure as it is noted."""
    jobs: list[_Job] = []
    token = _pending.set(_Page(jobs, drawers))
    try:
        yield jobs
    finally:
        _pending.reset(token)


def fill_figures(document: str, jobs: Sequence[_Job], drawers: Drawers | None = None) -> str:
    """``document`` with each placeholder replaced by its drawn figure, in page order.

    ``drawers``: workers started earlier (:class:`Drawers`); ``None`` starts them now
    when that is safe and worth it.
    """
    if drawers is None:
        with Drawers(len(jobs)) as own:
            return fill_figures(document, jobs, own)
    for index, snippet in enumerate(drawers.draw(jobs)):
        document = document.replace(_placeholder(index), snippet, 1)
    return document


class Drawers:
    """Worker processes, one per core, that draw figures; none where unsafe or not worth it.

    Start them as early as possible (before loading anything: see the module
    docstring), use :meth:`draw` once, and close them (a context manager).
    ``expected``: how many figures will be drawn, if known.
    """

    def __init__(self, expected: int | None = None, *, progress: bool = False) -> None:
        workers = len(os.sched_getaffinity(0))
        self._workers: ProcessPoolExecutor | None = None
        #: Whether :meth:`draw` shows a progress bar on standard error.
        self.progress = progress
        #: Figures sent as their page noted them (:meth:`start`), by their index.
        self._started: dict[int, Future[str]] = {}
        if (
            workers < 2
            or (expected is not None and expected < MIN_FIGURES_FOR_POOL)
            or _other_threads_running()
            or "fork" not in multiprocessing.get_all_start_methods()
        ):
            return
        self._workers = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_warm_up,
        )
        # Forked now, at the first submit, while this process has no other thread.
        self._workers.submit(int)

    def __enter__(self) -> Drawers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._workers is not None:
            self._workers.shutdown(wait=True, cancel_futures=True)
            self._workers = None

    def start(self, index: int, job: _Job) -> None:
        """Send the page's figure ``index`` to the workers now (nothing without them)."""
        if self._workers is not None:
            try:
                self._started[index] = self._workers.submit(_figure_now, job)
            except BrokenProcessPool:
                self.close()  # draw() draws them here

    def draw(self, jobs: Sequence[_Job]) -> list[str]:
        """Every figure's HTML, in order: by the workers, or here without them."""
        with _progress_bar(len(jobs), self.progress) as done:
            return self._draw(jobs, done)

    def _draw(self, jobs: Sequence[_Job], done: Callable[[], object]) -> list[str]:
        started, self._started = self._started, {}
        if self._workers is None or (not started and len(jobs) < MIN_FIGURES_FOR_POOL):
            return [_counted(_figure_now(job), done) for job in jobs]
        # The rest largest first (the figure's area stands for its cost), so that no
        # worker is left with a big figure at the end while the other idles.
        rest = [i for i in range(len(jobs)) if i not in started]
        rest.sort(key=lambda i: -jobs[i].size[0] * jobs[i].size[1])
        try:
            futures = started | {i: self._workers.submit(_figure_now, jobs[i]) for i in rest}
            return [_counted(futures[i].result(), done) for i in range(len(jobs))]
        except BrokenProcessPool:
            # A worker died (killed, out of memory): the figures are drawn here instead.
            self.close()
            return [_figure_now(job) for job in jobs]


def _counted(snippet: str, done: Callable[[], object]) -> str:
    done()
    return snippet


@contextmanager
def _progress_bar(total: int, show: bool) -> Iterator[Callable[[], object]]:
    """A function to call once per figure drawn: a tqdm bar on standard error when shown."""
    if not show or total == 0:
        yield lambda: None
        return
    from tqdm import tqdm

    with tqdm(total=total, desc="figures", unit="figure", file=sys.stderr) as bar:
        yield lambda: bar.update()


def _other_threads_running() -> bool:
    """Whether another thread runs Python code in this process: a fork would copy the
    locks it holds (a stream's, a queue's), held for ever in the child.

    ``threading`` lists only the threads it started, not those started by ``_thread``
    (pytest-xdist's, for one); the interpreter lists every thread in a Python frame.
    Native threads outside Python code (NumPy's BLAS pool and Arrow's allocator, in
    every process that imports pandas; an idle DuckDB pool) hold no Python lock and do
    not count: the BLAS pool and the allocator are fork-aware, and a worker that judges
    pods for its plot opens a DuckDB database of its own (the parent's is not fork-safe:
    :mod:`ccanalytics.measures._engine`).
    """
    return threading.active_count() > 1 or len(sys._current_frames()) > 1


def _warm_up() -> None:
    """A worker's start: Ctrl-C is the parent's to handle (which then stops the pool),
    and matplotlib is imported and its fonts loaded while the parent loads the data."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _png(_warm_up_plot, (4.0, 2.0))


def _warm_up_plot(ax: Axes) -> None:
    """A cost chart of one pod: it loads what the worker's first real chart would load
    after the parent's load (matplotlib, and the engine that sums the chart's parts)."""
    import pandas as pd

    from ccanalytics import plots

    one_pod = pd.DataFrame(
        {
            "cluster_id": pd.array(["warm-up"], dtype="string"),
            "gpu_type": pd.array(["warm-up"], dtype="string"),
            "status": pd.array(["RUNNING"], dtype="string"),
            "gpu_count": pd.array([1], dtype="Int64"),
            **{c: pd.array([50.0], dtype="Float64") for c in _WARM_UP_FLOATS},
        }
    )
    plots.cost_breakdown(one_pod, by="cluster", ax=ax)


_WARM_UP_FLOATS: Final = ("cost", "gpu_util_mean", "gpu_util_max", "cpu_util")


def _figure_now(job: _Job) -> Markup:
    image = _png(job.plot, job.size)
    if image is None:
        return no_figure_html(job.alt)
    data, width, height = image
    return figure_html(data, width, height, job.alt, job.caption)


def _png(draw: Callable[[Axes], object], size: tuple[float, float]) -> tuple[str, int, int] | None:
    """Draw on a fresh figure and return it as base64 PNG and pixel size; ``None``: no data.

    ``draw`` is called with the axes. ``Figure`` directly, not ``pyplot``: no global
    figure registry, no backend selection, safe in a cron job without a display.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, layout="constrained")
    try:
        draw(figure.add_subplot())
    except NoDataError:
        return None
    # Drawn at PIXEL_RATIO x the page size, shown at the page size: sharp on high-DPI screens.
    # One draw, not ``savefig``: with a layout engine savefig draws the whole figure twice
    # (once with rendering disabled, to lay it out), and its PNG encoder filters every row
    # five ways; the pixels are the same (tests/report/test_report_png.py).
    figure.dpi = DPI * PIXEL_RATIO
    canvas = FigureCanvasAgg(figure)
    canvas.draw()  # type: ignore[no-untyped-call]
    png = _encode_png(np.asarray(canvas.buffer_rgba()))  # type: ignore[no-untyped-call]
    width, height = (round(v * DPI) for v in size)
    return base64.b64encode(png).decode("ascii"), width, height


#: An RGBA pixel seen as one 3-byte item (its colour) in 4 bytes: copying these is one
#: memcpy per pixel, where dropping the alpha channel byte by byte (``rgba[..., :3]``)
#: is a strided loop 2.5x slower, and subtracting rows of that strided view 30x.
_RGB_OF_RGBA: Final = np.dtype({"names": ["rgb"], "formats": ["V3"], "offsets": [0], "itemsize": 4})


def _rgb(rgba: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """The colour bytes of C-contiguous ``rgba`` (height x width x 4), contiguous."""
    height, width, _ = rgba.shape
    colours = np.ascontiguousarray(rgba.view(_RGB_OF_RGBA).reshape(height, width)["rgb"])
    return colours.view(np.uint8).reshape(height, width, 3)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _encode_png(rgba: npt.NDArray[np.uint8]) -> bytes:
    """``rgba`` (height x width x 4) as a lossless PNG: RGB when every pixel is opaque.

    Every row is stored with the PNG "Up" filter (its difference from the row above,
    mostly zeros in a chart), which compresses as well as adaptive filtering at a third
    of the cost. No text chunks: the bytes depend only on the pixels.
    """
    height, width, _ = rgba.shape
    rgba = np.ascontiguousarray(rgba)  # what the canvas gives already: no copy
    opaque = bool(rgba[..., 3].min() == 255)
    pixels = _rgb(rgba) if opaque else rgba
    channels = pixels.shape[2]
    # Each row: the filter type byte, then the row's bytes minus the row above's
    # (modulo 256, as PNG wants; the first row's "above" is zeros), written into the
    # buffer zlib reads.
    filtered = np.empty((height, 1 + width * channels), dtype=np.uint8)
    filtered[:, 0] = 2  # filter type "Up"
    rows = filtered[:, 1:].reshape(height, width, channels)
    rows[:1] = pixels[:1]
    np.subtract(pixels[1:], pixels[:-1], out=rows[1:])
    header = struct.pack(">IIBBBBB", width, height, 8, 2 if opaque else 6, 0, 0, 0)
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", zlib.compress(filtered.data, 6)),
            _png_chunk(b"IEND", b""),
        )
    )

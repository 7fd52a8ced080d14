"""The report's HTML: escaping, tables, figures as embedded PNG, the CSS and the page.

The pieces :func:`ccanalytics.report.render_report` assembles its page from.
Every value from the frames goes through :func:`_text` (``html.escape``). Figures are
drawn on a fresh ``Figure`` (no pyplot) and embedded as base64 PNG ``data:`` URIs and
the CSS is inline, so the page refers to no external URL and opens offline.
"""

from __future__ import annotations

import base64
import gc
import html
import multiprocessing
import os
import struct
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ccanalytics import plots

# Underscored names are for ``report``, not public API.
__all__ = [
    "DPI",
    "PIXEL_RATIO",
    "_cards",
    "_columns",
    "_details",
    "_drawn_together",
    "_figure",
    "_fill_figures",
    "_note",
    "_page",
    "_table",
    "_text",
]

#: CSS pixels per inch of a figure: the size it takes on the page.
DPI: Final = 100
#: Image pixels per CSS pixel: 2 makes the figures sharp on high-DPI ("retina") screens.
PIXEL_RATIO: Final = 2


def _text(value: object) -> str:
    return html.escape(str(value), quote=True)


def _fmt_float(digits: int, suffix: str = "") -> Callable[[object], str]:
    def fmt(value: object) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and value != value):
            return "–"
        return f"{float(value):,.{digits}f}{suffix}"  # type: ignore[arg-type]

    return fmt


def _fmt_share(value: object) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return "–"
    return f"{float(value):.1%}"  # type: ignore[arg-type]


def _fmt_plain(value: object) -> str:
    return "–" if value is None or value is pd.NA else str(value)


def _fmt_duration(value: object) -> str:
    """Seconds as hours below two days, else days: ``5.2 h``, ``12.5 d``."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return "–"
    hours = float(value) / 3600.0  # type: ignore[arg-type]
    return f"{hours:,.1f} h" if hours < 48 else f"{hours / 24:,.1f} d"


#: A table column: frame column, header, formatter, numeric (right-aligned).
_Col = tuple[str, str, Callable[[object], str], bool]


def _columns(*cols: tuple[str, str, str]) -> list[_Col]:
    """Columns from (name, header, kind); kind: text, int, usd, pct, share, num, duration."""
    kinds: dict[str, tuple[Callable[[object], str], bool]] = {
        "text": (_fmt_plain, False),
        "duration": (_fmt_duration, True),
        "int": (_fmt_plain, True),
        "usd": (_fmt_float(2), True),
        "pct": (_fmt_float(1), True),
        "share": (_fmt_share, True),
        "num": (_fmt_float(2), True),
    }
    return [(name, header, *kinds[kind]) for name, header, kind in cols]


def _table(frame: pd.DataFrame, columns: Sequence[_Col], empty: str) -> str:
    if frame.empty:
        return f'<p class="empty">{_text(empty)}</p>'
    head = "".join(
        f'<th scope="col"{" class=num" if numeric else ""}>{_text(header)}</th>'
        for _, header, _, numeric in columns
    )
    rows = []
    for record in frame.to_dict("records"):
        cells = "".join(
            f"<td{' class=num' if numeric else ''}>{_text(fmt(record.get(name)))}</td>"
            for name, _, fmt, numeric in columns
        )
        rows.append(f"<tr>{cells}</tr>")
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _png(draw: Callable[[Axes], object], size: tuple[float, float]) -> tuple[str, int, int] | None:
    """Draw on a fresh figure and return it as base64 PNG and pixel size; ``None``: no data.

    ``Figure`` directly, not ``pyplot``: no global figure registry, no backend
    selection, safe in a cron job without a display and in threads.
    """
    figure = Figure(figsize=size, layout="constrained")
    try:
        draw(figure.add_subplot())
    except plots.NoDataError:
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


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _encode_png(rgba: npt.NDArray[np.uint8]) -> bytes:
    """``rgba`` (height x width x 4) as a lossless PNG: RGB when every pixel is opaque.

    Every row is stored with the PNG "Up" filter (its difference from the row above,
    mostly zeros in a chart), which compresses as well as adaptive filtering at a third
    of the cost. No text chunks: the bytes depend only on the pixels.
    """
    height, width, _ = rgba.shape
    opaque = bool((rgba[..., 3] == 255).all())
    pixels = rgba[..., :3] if opaque else rgba
    rows = np.ascontiguousarray(pixels).reshape(height, -1)
    filtered = np.empty((height, rows.shape[1] + 1), dtype=np.uint8)
    filtered[:, 0] = 2  # filter type "Up"; the first row's "above" is zeros
    filtered[:1, 1:] = rows[:1]
    np.subtract(rows[1:], rows[:-1], out=filtered[1:, 1:])  # modulo 256, as PNG wants
    header = struct.pack(">IIBBBBB", width, height, 8, 2 if opaque else 6, 0, 0, 0)
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", zlib.compress(filtered.tobytes(), 6)),
            _png_chunk(b"IEND", b""),
        )
    )


#: A figure to draw: the drawing, its size in inches, its alt text and caption.
_Job = tuple[Callable[[Axes], object], tuple[float, float], str, str]
#: Figures of the page being rendered, drawn together at the end (see ``_drawn_together``).
_pending: ContextVar[list[_Job] | None] = ContextVar("_pending", default=None)
#: The jobs a forked worker draws: set before the pool forks, so children inherit them
#: (closures cannot be pickled, a fork needs no pickling).
_FORKED_JOBS: list[_Job] = []
#: Figures below which a pool costs more than it saves (a fork and a worker's start).
MIN_FIGURES_FOR_POOL: Final = 4


def _placeholder(index: int) -> str:
    return f"\x00figure {index}\x00"


@contextmanager
def _drawn_together() -> Iterator[list[_Job]]:
    """Within this block ``_figure`` only notes its figure and returns a placeholder;
    :func:`_fill_figures` then draws them all, on every core when it may."""
    jobs: list[_Job] = []
    token = _pending.set(jobs)
    try:
        yield jobs
    finally:
        _pending.reset(token)


def _fill_figures(document: str, jobs: Sequence[_Job]) -> str:
    """``document`` with each placeholder replaced by its drawn figure, in page order."""
    for index, snippet in enumerate(_draw_all(jobs)):
        document = document.replace(_placeholder(index), snippet, 1)
    return document


def _draw_all(jobs: Sequence[_Job]) -> list[str]:
    """Every figure's HTML: in forked workers, one per core, when that is safe and worth it.

    Drawing is CPU-bound Python holding the GIL, so threads would not help; forked
    processes do (each inherits the frames, nothing is pickled but the PNG coming back).
    Forking is only safe in a single-threaded process (a lock held by another thread
    would stay held in the child), so with other threads running (an in-process sandbox,
    a test server) the figures are drawn here, one after another. The bytes are the
    same either way.
    """
    workers = min(len(os.sched_getaffinity(0)), len(jobs))
    if (
        workers < 2
        or len(jobs) < MIN_FIGURES_FOR_POOL
        or threading.active_count() > 1
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        return [_figure_now(*job) for job in jobs]
    global _FORKED_JOBS
    _FORKED_JOBS = list(jobs)
    # Largest first (the figure's area stands for its cost), so that no worker is left
    # with a big figure at the end while the other idles; the page order is restored below.
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i][1][0] * jobs[i][1][1])
    drawn: dict[int, str] = {}
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            # The parent's objects frozen while the pool forks: the workers' collections
            # then skip them (no pass over the frames, no copy-on-write of their pages).
            gc.freeze()
            try:
                futures = {pool.submit(_draw_forked, i): i for i in order}
            finally:
                gc.unfreeze()
            for future, index in futures.items():
                drawn[index] = future.result()
    finally:
        _FORKED_JOBS = []
    return [drawn[i] for i in range(len(jobs))]


def _draw_forked(index: int) -> str:
    return _figure_now(*_FORKED_JOBS[index])


def _figure(
    draw: Callable[[Axes], object], size: tuple[float, float], alt: str, caption: str
) -> str:
    """The figure's HTML, or, while a page is rendered, a placeholder for it."""
    jobs = _pending.get()
    if jobs is None:
        return _figure_now(draw, size, alt, caption)
    jobs.append((draw, size, alt, caption))
    return _placeholder(len(jobs) - 1)


def _figure_now(
    draw: Callable[[Axes], object], size: tuple[float, float], alt: str, caption: str
) -> str:
    image = _png(draw, size)
    if image is None:
        return f'<p class="empty">{_text(alt)}: no data to draw.</p>'
    data, width, height = image
    return (
        f'<figure><img src="data:image/png;base64,{data}" width="{width}" height="{height}" '
        f'alt="{_text(alt)}"><figcaption>{_text(caption)}</figcaption></figure>'
    )


def _details(summary: str, body: str) -> str:
    """``body`` folded under a one-line ``summary``: columns a reader rarely needs first."""
    return f"<details><summary>{_text(summary)}</summary>{body}</details>"


def _note(text: str) -> str:
    return f"<p class=note>{_text(text)}</p>"


#: A headline card: label, value, the line under it, and whether it calls for action.
_Card = tuple[str, str, str, bool]


def _cards(cards: Sequence[_Card]) -> str:
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card{" alert" if alert else ""}"><div class="label">{_text(label)}'
            f'</div><div class="value">{_text(value)}</div>'
            f'<div class="sub">{_text(sub)}</div></div>'
            for label, value, sub, alert in cards
        )
        + "</div>"
    )


_CSS: Final = """
:root { color-scheme: light; }
body { margin: 0; color: #1b1b1b; background: #fff; line-height: 1.5;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.7rem; margin: 0 0 4px; }
h2 { font-size: 1.25rem; margin: 36px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.05rem; margin: 24px 0 6px; }
.meta { color: #555; margin: 0 0 18px; font-size: .92rem; }
.headline { font-size: 1.12rem; margin: 0 0 18px; padding: 14px 18px;
  border-left: 5px solid #0072B2; background: #f2f7fb; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(200px, 1fr));
  gap: 12px; margin: 0 0 12px; }
.card { border: 1px solid #d8d8d8; border-radius: 6px; padding: 10px 14px; }
.card .label { color: #555; font-size: .85rem; }
.card .value { font-size: 1.55rem; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .sub { color: #444; font-size: .85rem; }
.card.alert { border-color: #D55E00; }
.card.alert .value { color: #b34700; }
nav { font-size: .92rem; margin: 8px 0 0; }
nav a { margin-right: 14px; color: #0061a0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .88rem; }
th, td { padding: 5px 9px; border-bottom: 1px solid #e6e6e6; text-align: left;
  white-space: nowrap; }
thead th { background: #f5f5f5; border-bottom: 2px solid #ccc; white-space: normal;
  vertical-align: bottom; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
.note, .empty { color: #555; font-size: .92rem; }
figure { margin: 18px 0 26px; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { color: #444; font-size: .9rem; margin-top: 4px; }
footer { margin-top: 40px; color: #666; font-size: .85rem; }
details { margin: 6px 0 0; font-size: .92rem; }
summary { cursor: pointer; color: #0061a0; }
ol.actions { font-size: 1.05rem; padding-left: 1.6em; margin: 8px 0 0; }
ol.actions li { margin: 4px 0; }
p, li, .meta, .card .sub { overflow-wrap: anywhere; }
@media (max-width: 600px) {
  main { padding: 16px 14px 32px; }
  .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 8px; }
  .card { padding: 8px 10px; }
  .card .value { font-size: 1.15rem; overflow-wrap: anywhere; }
  .headline { font-size: 1rem; padding: 10px 12px; }
}
"""


def _page(title: str, parts: Sequence[str]) -> str:
    """The whole document: the head with the inline CSS, then ``parts``, one per line."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_text(title)}</title><style>{_CSS}</style></head>"
        f"<body><main>\n{chr(10).join(parts)}\n</main></body></html>\n"
    )

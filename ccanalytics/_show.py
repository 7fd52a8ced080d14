"""Objects shown in Jupyter: a small HTML table, every cell escaped. Standard library only.

``History`` and ``CollectResult`` write their ``_repr_html_`` with :func:`html_table`, so
a cluster or pod name (someone else's text) is shown as text, never as markup.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

__all__ = ["html_table", "human_bytes"]


def html_table(
    caption: str, rows: Iterable[Sequence[object]], header: Sequence[str] | None = None
) -> str:
    """A ``<table>`` with ``caption`` and ``rows`` (each cell ``str()``-ed and escaped);
    ``header`` names the columns, else each row's first cell is its heading."""
    parts = [f"<table><caption style='text-align:left'>{html.escape(caption)}</caption>"]
    if header is not None:
        parts.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
    for row in rows:
        cells = [html.escape(str(cell)) for cell in row]
        if header is None:
            parts.append(f"<tr><th style='text-align:left'>{cells[0]}</th>")
            parts.append("".join(f"<td style='text-align:left'>{c}</td>" for c in cells[1:]))
            parts.append("</tr>")
        else:
            parts.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    parts.append("</table>")
    return "".join(parts)


def human_bytes(size: int) -> str:
    """``1_234_567`` -> ``1.2 MB`` (powers of 1,000, as ``ls --si`` and file managers)."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")

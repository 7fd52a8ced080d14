"""The report's HTML: escaping, tables, cards, the CSS and the page.

The pieces :func:`ccanalytics.report.render_report` assembles its page from.
Every value from the frames goes through :func:`_text` (``html.escape``). Figures
(:mod:`ccanalytics.report._draw`) are embedded as base64 PNG ``data:`` URIs and the
CSS is inline, so the page refers to no external URL and opens offline.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Final

import pandas as pd

# Underscored names are for ``report``, not public API.
__all__ = [
    "_cards",
    "_columns",
    "_details",
    "_note",
    "_page",
    "_table",
    "_text",
]


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

"""The report's HTML pieces: tables, cards, notes and the page, from the templates.

The pieces :func:`ccanalytics.report.render_report` assembles its page from, each the
:class:`markupsafe.Markup` a template (:mod:`ccanalytics.report._templates`) returns: a
value is formatted here (numbers, shares, durations) and escaped by the template. Figures
(:mod:`ccanalytics.report._draw`) are embedded as base64 PNG ``data:`` URIs and the CSS
(``templates/report.css``) is inline, so the page refers to no external URL and opens
offline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
from markupsafe import Markup

from ccanalytics.report._templates import block, page

# Underscored names are for ``report``, not public API.
__all__ = [
    "_cards",
    "_columns",
    "_details",
    "_note",
    "_page",
    "_table",
]


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


def _table(frame: pd.DataFrame, columns: Sequence[_Col], empty: str) -> Markup:
    headers = [header for _, header, _, _ in columns]
    numeric = [numeric for _, _, _, numeric in columns]
    rows = [
        [fmt(record.get(name)) for name, _, fmt, _ in columns]
        for record in frame.to_dict("records")
    ]
    return block("table", headers, numeric, rows, empty)


def _details(summary: str, body: Markup) -> Markup:
    """``body`` folded under a one-line ``summary``: columns a reader rarely needs first."""
    return block("details", summary, body)


def _note(text: str) -> Markup:
    return block("note", text)


#: A headline card: label, value, the line under it, and whether it calls for action.
_Card = tuple[str, str, str, bool]


def _shows_something(card: _Card) -> bool:
    """A card whose figure is a count or an amount of zero shows nothing."""
    return card[1].split(" ")[0] not in ("0", "0.0", "0.00")


def _cards(cards: Sequence[_Card]) -> Markup:
    """The cards that show something (none: nothing at all, not an empty row)."""
    kept = [card for card in cards if _shows_something(card)]
    return block("cards", kept) if kept else Markup()


def _page(title: str, parts: Sequence[Markup]) -> str:
    """The whole document: the head with the inline CSS, then ``parts``, one per line,
    then the footer."""
    return page(title, list(parts))

"""The report's figure cards, read off the registry: one per measure it marks ``card``.

Live and over a window alike, a card is a measure's label, its value in the measure's
unit, and a note: the share measure the entry names (``card_share``), or what the
caller adds (the straggling ranks' names, the projection per day), else the measure's
meaning. Values are the engine's (the live summary's totals,
:func:`ccanalytics.measures.live_totals`, or History's); nothing is computed here.
A card is marked when it is above 0 and a policy can limit its measure (or its entry
says a figure above 0 is a blind spot: ``card_marked``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

import pandas as pd

from ccanalytics.measures import MEASURES, Measure, by_name
from ccanalytics.report._html import _Card

__all__ = ["card_measures", "measure_cards", "measure_column"]


def card_measures(*, kinds: tuple[str, ...] | None = None) -> tuple[Measure, ...]:
    """The registry's card measures (of ``kinds``, when given), in its order."""
    return tuple(m for m in MEASURES if m.card and (kinds is None or m.kind in kinds))


def _value(values: pd.Series, key: str | None) -> float | None:
    if key is None or key not in values.index or pd.isna(values[key]):
        return None
    return float(values[key])


def measure_cards(
    values: pd.Series,
    *,
    live: bool,
    notes: Mapping[str, str] | None = None,
    kinds: tuple[str, ...] | None = None,
) -> list[_Card]:
    """A card per card measure whose figure ``values`` holds.

    ``values`` is indexed by the measures' live columns (``live``: a live summary's
    totals) or by their names (History's totals over a window); ``notes`` by measure
    name adds to (or, without a share, stands for) a card's note.
    """
    key: Callable[[Measure], str | None] = (lambda m: m.live) if live else (lambda m: m.name)
    cards: list[_Card] = []
    for m in card_measures(kinds=kinds):
        if key(m) not in values.index:
            continue
        value = _value(values, key(m)) or 0.0
        shown = m.format_live(value) if live else m.format(value)
        parts: list[str] = []
        if m.card_share is not None:
            share = by_name(m.card_share)
            ratio = _value(values, key(share))
            parts.append(f"{share.label} {share.format(ratio or 0.0)}")
        if notes and m.name in notes:
            parts.append(notes[m.name])
        note = ", ".join(parts) if parts else m.meaning
        cards.append((m.label, shown, note, bool(m.policy_key or m.card_marked) and value > 0))
    return cards


#: A table column's format by the measure's: amounts in USD (USD/h, USD per GPU-hour)
#: with cents, shares in percent, counts (and live, pods or GPUs) whole.
_FORMATS: Final = {"usd": "usd", "share": "share", "count": "int"}
#: Live, a time sum's figure is of one instant: its label says pods or GPUs, not hours.
_PER_INSTANT: Final = (("pod-hours", "pods"), ("GPU-hours", "GPUs"))


def measure_column(name: str, *, live: bool, column: str | None = None) -> tuple[str, str, str]:
    """A table column of the registry measure ``name``: (column, header, format).

    The header is the measure's label with its unit (``idle GPU spend (USD/h)``), unless
    the label says it (``idle GPU-hours``); live, a sum over time is of one instant, so
    its label's ``pod-hours`` and ``GPU-hours`` read ``pods`` and ``GPUs`` (``judged
    pods``). ``column`` names the frame's column when it is not the measure's own (a
    pod's ``wasted_cost_per_hour``).
    """
    m = by_name(name)
    unit = str(m.live_unit) if live else m.unit
    label = m.label
    if live:
        for hours, instant in _PER_INSTANT:
            label = label.replace(hours, instant)
    header = label if unit == "0-1" or unit in label else f"{label} ({unit})"
    own = str(m.live) if live else m.name
    whole = live and m.live_dtype == "Int64"  # a count of pods or GPUs at one instant
    return (column or own, header, "int" if whole else _FORMATS.get(m.fmt, "num"))

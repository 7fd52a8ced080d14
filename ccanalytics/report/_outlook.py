"""The report's outlook section (with ``--store``): where the month is heading, with its
interval, and what two common idle rules would have saved over the last month.

The month's figures are :meth:`ccanalytics.History.spend`'s (the seasonal forecast's
P10/P50/P90 beside the burn-rate line, or the line alone and why); the rules' are
:meth:`ccanalytics.History.backtest`'s over the last :data:`BACKTEST_WINDOW`, each rule
one sentence. A store whose snapshots are further apart than a rule is judged without
that rule, and says so.
"""

from __future__ import annotations

from datetime import timedelta
from os import PathLike
from typing import Any, Final

from markupsafe import Markup

from ccanalytics.report._templates import text

__all__ = ["BACKTEST_WINDOW", "RULES", "outlook_section"]

#: The rules the report backtests: (idle_for, idle_threshold), gpu-pruner's and a
#: patient one.
RULES: Final = (("30m", 1.0), ("2h", 1.0))
#: How far back the rules are replayed.
BACKTEST_WINDOW: Final = timedelta(days=30)


def outlook_section(store: str | PathLike[str]) -> tuple[Markup, list[str]]:
    """The section's HTML and its sentences; nothing for a store without a snapshot."""
    from ccanalytics.history import History

    with History(store) as history:
        totals = history.spend(by=None)
        if totals.empty:
            return Markup(""), []
        month = totals.set_index("period").loc["month"]
        lines = [month_sentence(month), *_rule_sentences(history)]
    items = Markup("").join(Markup("<li>{}</li>").format(text(line)) for line in lines[1:])
    html = Markup(
        '<section id="outlook"><h2>Where the month is heading</h2>'
        '<p class="headline">{}</p>{}</section>'
    ).format(text(lines[0]), Markup("<ul>{}</ul>").format(items) if items else "")
    return html, lines[:1]


def month_sentence(month: Any) -> str:
    """The month's spend so far and both projections, or the line and why."""
    spent = f"This month {month['spent']:,.2f} USD spent (since {month['period_start']:%Y-%m-%d})"
    line = (
        f"the burn-rate line says {month['projected']:,.2f} USD by {month['period_end']:%Y-%m-%d}"
    )
    if month["forecast"] != "seasonal":
        return f"{spent}; {line} (no seasonal forecast: {month['forecast_note']})."
    return (
        f"{spent}; the seasonal forecast says {month['projected_p50']:,.2f} USD "
        f"(80 % interval {month['projected_p10']:,.2f} to {month['projected_p90']:,.2f}), "
        f"{line}."
    )


def _rule_sentences(history: Any) -> list[str]:
    from ccanalytics.errors import ArgumentsError
    from ccanalytics.history import IdleRule

    sentences = []
    for idle_for, threshold in RULES:
        rule = IdleRule(idle_for, threshold)
        try:
            frame = history.backtest([rule], BACKTEST_WINDOW, by=None)
        except ArgumentsError as err:  # snapshots too far apart for this rule
            sentences.append(f"Idle rule {rule.name}: not judged ({err}).")
            continue
        if frame.empty:
            continue
        row = frame.iloc[0]
        sentences.append(
            f"Idle rule {rule.name} over the last {BACKTEST_WINDOW.days} days: "
            f"{int(row['stops'])} stops would have saved {float(row['saved_usd']):,.2f} USD "
            f"({float(row['saved_gpu_hours']):,.1f} GPU-hours); {int(row['false_stops'])} "
            f"of them false stops, interrupting {float(row['interrupted_usd']):,.2f} USD of work."
        )
    return sentences

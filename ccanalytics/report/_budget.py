"""The report's budget section: spend so far, its projection, and each breached rule.

With a policy (``report --policy FILE``, ``write_report(policy=...)``) the report opens
with what ``check --policy`` would say about the store: the month's spend so far and
where it is heading at the current rate, then one sentence per breached rule (snoozed
ones marked). The figures are :func:`ccanalytics.history.check_policy`'s, so the report
and ``check`` agree to the cent.
"""

from __future__ import annotations

from os import PathLike
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ccanalytics.report._templates import block

if TYPE_CHECKING:
    from ccanalytics.history import Policy, PolicyReport

__all__ = ["budget_section"]


def budget_section(
    store: str | PathLike[str], policy: Policy | str | PathLike[str]
) -> tuple[Markup, list[str]]:
    """The section's HTML and its sentences (for the report's summary)."""
    from ccanalytics.history import History, check_policy, load_policy

    rules = policy if not isinstance(policy, str | PathLike) else load_policy(policy)
    report = check_policy(store, rules)
    with History(store) as history:
        totals = history.spend(by=None).set_index("period")
    sentences = [_month_sentence(totals.loc["month"]), _breach_sentence(report)]
    # A rule whose clusters match nothing checks nothing (check exits 2 for it): said too.
    items = [*report.unmatched, *report.lines()]
    return block("budget", " ".join(sentences), items), [*sentences, *report.unmatched]


def _month_sentence(month: Any) -> str:
    return (
        f"This month {month['spent']:,.2f} USD spent (since {month['period_start']:%Y-%m-%d}); "
        f"at the current {month['burn_rate']:,.2f} USD/h it reaches "
        f"{month['projected']:,.2f} USD by {month['period_end']:%Y-%m-%d}."
    )


def _breach_sentence(report: PolicyReport) -> str:
    count, idle = len(report.breaches), len(report.unmatched)
    nothing = f"; {idle} rule{'s check' if idle != 1 else ' checks'} nothing" if idle else ""
    if count == 0:
        return f"Every budget rule holds{nothing}."
    snoozed = count - len(report.unsnoozed_breaches)
    quiet = f" ({snoozed} snoozed)" if snoozed else ""
    return f"{count} budget rule{'s' if count != 1 else ''} breached{quiet}{nothing}."

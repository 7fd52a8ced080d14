"""Idle rules side by side: what each would have saved against how often it was wrong.

From :meth:`ccanalytics.History.backtest`: one point per rule, its saving (USD) up and
its false stops (stops followed by work within the regret) across, so the rule worth
enforcing is the highest point furthest left. Beside each point: the rule and the
work its false stops would have interrupted.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes

from ccanalytics.plots._layout import set_title
from ccanalytics.plots._style import COLORS, NoDataError, _axes, _doc, _floats, _literal, _require

__all__ = ["backtest_tradeoff"]


@_doc
def backtest_tradeoff(backtest: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Each idle rule's saving against its false stops, one point per rule.

    Parameters
    ----------
    backtest : pandas.DataFrame
        ``History.backtest(rules, ...)``, split by anything (its rows are summed per
        rule): the columns ``rule``, ``saved_usd``, ``false_stops``, ``stops`` and
        ``interrupted_usd``.
    {ax}

    Returns
    -------
    {returns}

    Raises
    ------
    {raises}
    """
    columns = ["rule", "saved_usd", "false_stops", "stops", "interrupted_usd"]
    _require(backtest, columns, "a History.backtest frame")
    if backtest.empty:
        raise NoDataError("the backtest has no rows (no pod in its window): nothing to draw")
    per_rule = backtest.groupby("rule", sort=False, as_index=False)[columns[1:]].sum()
    ax = _axes(ax)
    x, y = _floats(per_rule["false_stops"]), _floats(per_rule["saved_usd"])
    ax.scatter(x, y, s=60, color=COLORS["idle"], marker="o", zorder=3)
    stops, cut = _floats(per_rule["stops"]), _floats(per_rule["interrupted_usd"])
    for rule, xi, yi, n, usd in zip(per_rule["rule"], x, y, stops, cut, strict=True):
        note = f"{_literal(rule)}: {int(n)} stops, {usd:,.2f} USD interrupted"
        ax.annotate(note, (xi, yi), xytext=(6, 4), textcoords="offset points", fontsize=8)
    ax.set_xlabel("false stops (work again within the regret)")
    ax.set_ylabel("saved (USD)")
    ax.set_xlim(left=min(-0.5, float(x.min()) - 0.5), right=float(x.max()) + 1.5)
    ax.set_ylim(bottom=0, top=max(float(y.max()) * 1.15, 1.0))
    ax.grid(True, alpha=0.3)
    set_title(ax, "What each idle rule would have saved, and how often it was wrong")
    return ax

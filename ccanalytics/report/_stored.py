"""What a history store adds to the report: the budget status, the outlook, the window.

With ``store`` (``report --store``) the page opens with the policy's budget status (when
a policy is given), then the month's outlook, then what the store says about the window
that ends at its newest snapshot; their sentences open the returned summary. Each part
is its own module's (:mod:`~ccanalytics.report._budget`, ``_outlook``, ``_window``),
imported only when a store is given: a report of a reading alone never loads History.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

import pandas as pd
from markupsafe import Markup

from ccanalytics.measures import Params

if TYPE_CHECKING:
    from ccanalytics.history import Policy
    from ccanalytics.report._window import WindowFindings

__all__ = ["Stored", "stored_parts"]

#: The window a store is read over when none is given.
DEFAULT_WINDOW = "24h"


@dataclass(frozen=True)
class Stored:
    """The store's parts of the page: its window's findings (None without a store), the
    HTML that opens the page (budget, outlook) and the sentences that open the summary."""

    window: WindowFindings | None = None
    opening: Markup = field(default_factory=Markup)
    sentences: list[str] = field(default_factory=list)


def stored_parts(
    store: str | os.PathLike[str] | None,
    policy: Policy | None,
    window: timedelta | str | None,
    params: Params,
) -> Stored:
    """The store's parts, judged at ``params`` (nothing without a ``store``)."""
    if store is None:
        return Stored()
    from ccanalytics.report import _outlook, _window

    opening, sentences = Markup(), list[str]()
    if policy is not None:
        from ccanalytics.report._budget import budget_section

        opening, sentences = budget_section(store, policy)
    opening += _outlook.outlook_section(store)[0]  # after the budget, if any
    span = pd.Timedelta(window if window is not None else DEFAULT_WINDOW).to_pytimedelta()
    over = _window.window_findings(store, span, params=params)
    return Stored(over, opening, [*sentences, *_window.window_sentences(over)])

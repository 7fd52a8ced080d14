"""The report's first screen: one headline figure for waste, then "What to do".

The screen answers "what are we wasting" with one figure, :class:`Headline`: the waste
classes' total in USD per day, their parts on the line under it, then the actions.
Every other figure (cost, idle pods, unused capacity, stragglers, ...) is folded under
them, one click away; a figure with nothing to show (0 pods, no stragglers) is left out.

An action is one plain line naming the pod or rank, the evidence and what acting on
it saves per day, in USD; :func:`ranked` keeps the :data:`MAX_ACTIONS` that save the
most. The savings are the figures the report already holds, never recomputed:

- from a single reading (:func:`live_actions`): an idle pod saves its whole cost per
  hour × 24 (:func:`ccanalytics.analysis.idle_pods`); a straggling rank, its pod's cost
  × its points below the median / 100 × 24 (the share of its GPUs the others use and
  it does not);
- over a window of history (:func:`window_actions`): a pod idle for most of the window
  saves its idle cost in the window (``History.pod_lifetimes``), scaled to a day; a
  chronic straggler names its share of snapshots and deficit (no price: the store's
  straggler answer carries none), and comes after the priced actions; a right-sizing
  hint (``History.rightsizing``) saves its monthly saving over 30 days.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import pandas as pd
from markupsafe import Markup

from ccanalytics._durations import describe_duration
from ccanalytics.measures import waste_classes
from ccanalytics.measures.rules import DAYS_PER_MONTH
from ccanalytics.report._html import _Card, _cards
from ccanalytics.report._templates import block

if TYPE_CHECKING:
    from ccanalytics.report._findings import _Findings
    from ccanalytics.report._window import WindowFindings

__all__ = [
    "MAX_ACTIONS",
    "Action",
    "Headline",
    "live_actions",
    "ranked",
    "render_first_screen",
    "window_actions",
    "window_headline",
]

#: Actions listed at most: the ones that save the most per day.
MAX_ACTIONS: Final = 5
HOURS_PER_DAY: Final = 24


@dataclass(frozen=True)
class Headline:
    """The first screen's one figure: what is wasted per day, its parts, and the spend.

    ``usd_per_day`` and ``share`` are the registry's ``waste_cost`` (per day) and
    ``waste_share``, by the engine; ``parts``: each waste class that wastes anything,
    (label, USD per day), largest first; ``spend``: the fleet's spend per day, which the
    share is of; ``basis``: how the day was measured ("at this reading's rate", "over the
    last 7 days").
    """

    usd_per_day: float
    share_of_spend: float
    parts: tuple[tuple[str, float], ...]
    spend: float
    basis: str

    @classmethod
    def of(
        cls,
        figures: Callable[[str], float],
        per_day: float,
        basis: str,
    ) -> Headline:
        """The headline of the registry's figures: ``figures(name)`` is a measure's value
        (0 when undefined), and sums count ``per_day`` times a day."""
        per_class = ((m.label, figures(m.name) * per_day) for m in waste_classes())
        parts = sorted(((k, v) for k, v in per_class if v > 0), key=lambda kv: -kv[1])
        return cls(
            figures("waste_cost") * per_day,
            figures("waste_share"),
            tuple(parts),
            figures("total_cost") * per_day,
            basis,
        )

    @property
    def value(self) -> str:
        return _per_day(self.usd_per_day)

    @property
    def share(self) -> str:
        spent = _per_day(self.spend)
        return f"{self.share_of_spend:.1%} of the {spent} spent, {self.basis}"

    @property
    def lines(self) -> list[str]:
        return [f"{label} {_per_day(usd)}" for label, usd in self.parts]


@dataclass(frozen=True)
class Action:
    """One thing to do: the line a person reads, and USD saved per day (None: not priced)."""

    text: str
    usd_per_day: float | None


def ranked(actions: Iterable[Action], limit: int = MAX_ACTIONS) -> list[Action]:
    """The ``limit`` actions that save the most per day; unpriced ones after, in order."""
    items = list(actions)
    priced = sorted(
        (a for a in items if a.usd_per_day is not None),
        key=lambda a: -(a.usd_per_day or 0.0),
    )
    return [*priced, *(a for a in items if a.usd_per_day is None)][:limit]


def _per_day(usd: float) -> str:
    return f"{usd:,.2f} USD/day"


def live_actions(f: _Findings, pods: pd.DataFrame) -> list[Action]:
    """What a single reading supports: stop idle pods, look at straggling ranks."""
    out = []
    rows: Any = f.idle.itertuples(index=False)
    for row in rows:
        saving = round(float(row.wasted_cost_per_hour) * HOURS_PER_DAY, 2)
        out.append(
            Action(
                f"Stop {row.name} ({row.cluster_id}): idle now, its busiest GPU at "
                f"{float(row.gpu_util_max):.0f} % (under {f.idle_threshold:g} %), "
                f"{_per_day(saving)}",
                saving,
            )
        )
    price = pods.drop_duplicates("pod_id").set_index("pod_id")["cost"]
    rows = f.stragglers.itertuples(index=False)
    for row in rows:
        cost = price.get(row.pod_id)
        priced: float | None = (
            None
            if cost is None or pd.isna(cost)
            else round(float(cost) * float(row.deficit) / 100 * HOURS_PER_DAY, 2)
        )
        tail = f", {_per_day(priced)} of unused GPU time" if priced is not None else ""
        out.append(
            Action(
                f"Look at rank {row.rank} of {row.cluster_id} ({row.name}): "
                f"{float(row.deficit):.0f} points below its cluster's median GPU "
                f"utilization{tail}",
                priced,
            )
        )
    return out


def window_headline(f: WindowFindings) -> Headline:
    """The window's waste per day: the registry's waste over its days, and each class."""

    def figure(name: str) -> float:
        value = f.totals.get(name)
        return 0.0 if value is None or pd.isna(value) else float(value)

    days = f.window.total_seconds() / 86400
    return Headline.of(figure, 1 / days, f"over the last {describe_duration(f.window)}")


def window_actions(w: WindowFindings) -> list[Action]:
    """What a window of history supports: stop pods idle most of it, fix chronic ranks."""
    from ccanalytics.report._window import MOSTLY_IDLE_SHARE, span_text

    span = span_text(w)

    out = []
    days = w.window.total_seconds() / (HOURS_PER_DAY * 3600)
    mostly = w.lifetimes[w.lifetimes["idle_time_share"].fillna(0) >= MOSTLY_IDLE_SHARE]
    rows: Any = mostly.itertuples(index=False)
    for row in rows:
        saving = round(float(row.idle_cost) / days, 2) if days > 0 else None
        if saving is None or saving <= 0:
            continue
        out.append(
            Action(
                f"Stop {row.name} ({row.cluster_id}): idle {float(row.idle_time_share):.0%} "
                f"of the last {span}, {_per_day(saving)}",
                saving,
            )
        )
    out += rightsizing_actions(w.rightsizing)
    chronic = w.stragglers[w.stragglers["share"] >= w.params.chronic_share]
    rows = chronic.itertuples(index=False)
    for row in rows:
        out.append(
            Action(
                f"Look at rank {row.rank} of {row.cluster_id}: flagged in "
                f"{int(row.flagged)} of {int(row.snapshots)} snapshots, "
                f"{float(row.mean_deficit):.0f} points below its cluster's median",
                None,
            )
        )
    return out


def rightsizing_actions(hints: pd.DataFrame) -> list[Action]:
    """Each right-sizing hint as an action: its monthly saving, per day (30-day months)."""
    out = []
    rows: Any = hints.itertuples(index=False)
    for row in rows:
        saving = round(float(row.monthly_saving) / DAYS_PER_MONTH, 2)
        out.append(
            Action(
                f"Right-size {row.name} ({row.cluster_id}): {int(row.gpu_count)} x "
                f"{row.gpu_type} to {int(row.suggested_count)} x {row.suggested_type}, "
                f"{float(row.monthly_saving):,.2f} USD/month ({_per_day(saving)}): "
                f"{row.reason}",
                saving,
            )
        )
    return out


def render_first_screen(
    headline: Headline,
    actions: Sequence[Action],
    cards: Sequence[_Card],
    more: Markup | None = None,
) -> Markup:
    """The headline figure and its parts, "What to do" (or that nothing needs doing),
    then the other figures folded: ``cards`` (those that show something) and ``more``
    (the reading's paragraph, say).

    ``cards`` is a plain list, so a later figure (the month's projection and budget
    status, once budgets exist) is one more card appended by its caller.
    """
    folded = _cards(cards) + (more or Markup())
    return block("first_screen", headline, [a.text for a in actions], folded)

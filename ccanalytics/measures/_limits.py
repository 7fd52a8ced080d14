"""A spend limit as ``History.spend(limit=...)`` and the spend plot read it: USD for
every period, or per period (``{"month": 5000}``), written once for both."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["SpendLimit", "limit_of"]

#: USD for every period, USD per period name, or no limit.
SpendLimit = float | Mapping[str, float] | None


def limit_of(limit: SpendLimit, period: str) -> float | None:
    """The limit of ``period`` (``"day"``, ``"week"``, ``"month"``); None: none."""
    if limit is None:
        return None
    if isinstance(limit, Mapping):
        return float(limit[period]) if period in limit else None
    return float(limit)

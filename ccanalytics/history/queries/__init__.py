"""The read side: :class:`~ccanalytics.history.History` and its answers, in DuckDB SQL.

- ``_history``: :class:`~ccanalytics.history.History` (its catalog and its questions) and
  ``catalog_of``, how ``alerts`` and ``export`` reach the catalog;
- ``_catalog``: the store's catalog: the views over its files, one listing per question,
  the retries; ``_views`` (the views' SQL), ``_vetting`` (each file vetted once),
  ``_retries`` (a query that finds the store changed under it);
- ``_questions``: History's answers over a window;
- ``_window``: ``since``/``until`` to a ``[start, end)`` window in UTC;
- ``_accounting``: the span of time each snapshot stands for;
- ``_queries``: idle cost and pod lifetimes; ``_utilization``; ``_coverage``;
- ``_stragglers``: how often each rank was flagged;
- ``_spend``: spend so far per day, week and month, and its projection.

It may import :mod:`ccanalytics.history.store` and the base modules (``errors``,
``measures``: the rules and measures written once, ``_durations``); never the collector or the alerts,
which build on it (``[tool.importlinter]`` in pyproject.toml).
"""

from ccanalytics.history.queries._history import History, catalog_of
from ccanalytics.history.queries._showback import resolve_teams
from ccanalytics.history.queries._teams import Teams
from ccanalytics.history.queries._window import DurationLike, TimeLike

__all__ = ["DurationLike", "History", "Teams", "TimeLike", "catalog_of", "resolve_teams"]

"""The read side: :class:`~ccanalytics.history.History` and its answers, in DuckDB SQL.

- ``_history``: :class:`~ccanalytics.history.History`, views over the store's files;
- ``_window``: ``since``/``until`` to a ``[start, end)`` window in UTC;
- ``_accounting``: the span of time each snapshot stands for;
- ``_queries``: idle cost, utilization, pod lifetimes;
- ``_stragglers``: how often each rank was flagged;
- ``_spend``: spend so far per day, week and month, and its projection.

It may import :mod:`ccanalytics.history.store` and the base modules (``errors``,
``_rules``: the rules written once, ``_durations``); never the collector or the alerts,
which build on it (``[tool.importlinter]`` in pyproject.toml).
"""

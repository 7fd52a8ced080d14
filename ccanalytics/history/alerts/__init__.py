"""Judging thresholds over the history and telling people: what ``ccanalytics check`` runs.

From the bottom up (each module imports only those before it):

- ``_alerts``: alert state (``STORE/check-state.json``), snoozes, webhooks;
- ``_policy``: a policy file's rules and thresholds;
- ``_judge``: a policy judged over a :class:`~ccanalytics.history.History`;
- ``_textfile``: the judged figures as a node_exporter textfile;
- ``_check``: :func:`~ccanalytics.history.check`, the flags or a policy, end to end.

The top of :mod:`ccanalytics.history`: it may import :mod:`ccanalytics.history.queries`,
:mod:`ccanalytics.history.store` and the base modules; never the collector
(``[tool.importlinter]`` in pyproject.toml).
"""

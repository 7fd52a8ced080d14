"""Exports of the history for other tools: showback as FOCUS 1.2, CSV or Parquet.

- ``_focus``: a showback frame (:meth:`~ccanalytics.history.History.showback`) as the
  FinOps Foundation's FOCUS 1.2 cost and usage columns;
- ``_export``: :func:`~ccanalytics.history.export_showback`, which reads the store and
  writes the file (atomically, never over an existing one unless told to).

It may import :mod:`ccanalytics.history.queries` (and so the store) and the base
modules; nothing in ``history`` imports it but the package's public names.
"""

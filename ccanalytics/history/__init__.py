"""Utilization history: snapshots appended to a Parquet store, and SQL over it.

- ``_collect``: :func:`collect` takes one snapshot of some clusters and appends it;
- ``_collector``: :func:`collect_every`, the scheduled loop (``_schedule``: its budget);
- ``_write``: appending files atomically (hidden temporary name, then a rename);
- ``_layout``: where files live, and which a reader should read;
- ``_schema``: what a file holds; frames to Arrow and back with nullable dtypes;
- ``_history``: :class:`History`, the read side, in an embedded DuckDB;
- ``_window``: ``since``/``until`` to a ``[start, end)`` window in UTC;
- ``_maintenance``: :func:`compact` (a day's files into one) and :func:`verify`.

The store, ``STORE/{pods,gpus,snapshots}/date=YYYY-MM-DD/<unique>.parquet``, is plain Hive-style
Parquet: DuckDB, Polars, pyarrow and Spark read it as it is (see the README).

It may import :mod:`ccanalytics.frames`, :mod:`ccanalytics.api`,
:mod:`ccanalytics.analysis` and :mod:`ccanalytics.errors`; never the report or the
CLI, which build on it. Names are imported on first use (pyarrow and DuckDB are heavy): ``lazy_loader``, from
the list in ``__init__.pyi``.
"""

from __future__ import annotations

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)

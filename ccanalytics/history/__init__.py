"""Utilization history: snapshots appended to a Parquet store, and SQL over it.

Five subpackages, each importing only those below it (``[tool.importlinter]`` in
pyproject.toml checks it, and that no modules import each other in a circle):

- ``alerts``: thresholds and policies judged over the history, alert state, the
  textfile: :func:`check`; ``export``: showback written for other tools (FOCUS 1.2, CSV,
  Parquet): :func:`export_showback` (the two never import each other);
- ``queries``: :class:`History`, the read side, in an embedded DuckDB; ``collector``:
  :func:`collect` and :func:`collect_every`, the write side (the two never import each other);
- ``store``: the Parquet files: layout, schema, atomic appends, the readers' caches,
  :func:`compact` and :func:`verify`.

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

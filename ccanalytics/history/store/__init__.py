"""The store on disk: Parquet files appended, listed, vetted, merged and compacted.

- ``_layout``: where files live, and which a reader should read;
- ``_schema``: what a file holds; frames to Arrow and back with nullable dtypes;
- ``_write``: appending files atomically (hidden temporary name, then a rename);
- ``_vetted``: the readers' cache of files found to be ours (``STORE/.vetted.json``);
- ``_merge``: a day's files as one table (what compaction writes and the day cache holds);
- ``_daycache``: the readers' day cache (``STORE/.day-cache``);
- ``_maintenance``: :func:`~ccanalytics.history.compact` and
  :func:`~ccanalytics.history.verify`.

The bottom of :mod:`ccanalytics.history`: it may import :mod:`ccanalytics.frames`, the
base modules (:mod:`ccanalytics.errors`, ``_files``) and itself; never the queries, the
collector or the alerts, which build on it (``[tool.importlinter]`` in pyproject.toml).
"""

"""Pod listings as flat, nullable pandas DataFrames: one cluster or a whole fleet.

- ``_columns``: every column's name, dtype, unit and meaning (``POD_COLUMNS``,
  ``GPU_COLUMNS``, ``LOAD_COLUMNS``); the pods frame's as ``POD_FIELDS``, the column
  lines of the pod field table (:mod:`ccanalytics.api.podfields`, where units are
  written down and the pydantic models are generated from), from which the readers
  and column builders are derived;
- ``_build``: ``pods_frame`` and ``gpus_frame``, pure functions of a listing, built
  chunk by chunk from
  ``_input`` (the accepted input forms), ``_decode`` (raw JSON, typed and fast),
  ``_fields`` (a pod's raw values), ``_pods`` and ``_gpus`` (each frame's columns)
  and ``_convert`` (raw values to nullable arrays, ``<NA>`` for bad values);
- ``_loader``: ``load_cluster_pods`` / ``load_cluster_frames``, fleet loads within
  the rate limit.

It may import :mod:`ccanalytics.api` and :mod:`ccanalytics.errors`; analysis, plots,
the report, history and the CLI build on it. Names are imported on first use (``lazy_loader``,
from the list in ``__init__.pyi``).
"""

from __future__ import annotations

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)

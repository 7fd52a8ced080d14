"""Pod listings as flat, nullable pandas DataFrames: one cluster or a whole fleet.

- ``_columns``: every column's name, dtype, unit and meaning (``POD_COLUMNS``,
  ``GPU_COLUMNS``, ``LOAD_COLUMNS``), the one place units are written down;
- ``_build``: ``pods_frame`` and ``gpus_frame``, pure functions of a listing, built
  chunk by chunk from
  ``_input`` (the accepted input forms), ``_decode`` (raw JSON, typed and fast),
  ``_fields`` (a pod's raw values), ``_pods`` and ``_gpus`` (each frame's columns)
  and ``_convert`` (raw values to nullable arrays, ``<NA>`` for bad values);
- ``_loader``: ``load_cluster_pods`` / ``load_cluster_frames``, fleet loads within
  the rate limit.

It may import :mod:`ccanalytics.api` and :mod:`ccanalytics.errors`; analysis, plots,
the report, history and the CLI build on it. Names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccanalytics._lazy import lazy_exports

if TYPE_CHECKING:
    from ccanalytics.frames._build import (
        GPU_COLUMNS,
        POD_COLUMNS,
        ColumnSpec,
        PodsInput,
        gpus_frame,
        pods_frame,
    )
    from ccanalytics.frames._columns import LOAD_COLUMNS
    from ccanalytics.frames._loader import (
        ClusterFrames,
        aload_cluster_pods,
        load_cluster_frames,
        load_cluster_pods,
    )

__all__ = [
    "GPU_COLUMNS",
    "LOAD_COLUMNS",
    "POD_COLUMNS",
    "ClusterFrames",
    "ColumnSpec",
    "PodsInput",
    "aload_cluster_pods",
    "gpus_frame",
    "load_cluster_frames",
    "load_cluster_pods",
    "pods_frame",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(
            ("GPU_COLUMNS", "POD_COLUMNS", "ColumnSpec", "PodsInput", "gpus_frame", "pods_frame"),
            "ccanalytics.frames._build",
        ),
        "LOAD_COLUMNS": "ccanalytics.frames._columns",
        **dict.fromkeys(
            ("ClusterFrames", "aload_cluster_pods", "load_cluster_frames", "load_cluster_pods"),
            "ccanalytics.frames._loader",
        ),
    },
)

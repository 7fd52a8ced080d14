"""The frames' columns: each one's dtype, source field and unit, written down once.

:data:`POD_FIELDS` is the pods frame's column table: per column, the JSON path in
the pod it is read from, its dtype, unit and meaning, and how the value becomes a
cell. It is the part of the one pod field table,
:data:`ccanalytics.api.podfields.POD_TABLE` (every documented field; the pydantic
``Pod`` is generated from it too), that names a column. Everything else about the
columns is derived from it: :data:`POD_COLUMNS` and the column docs here, the
raw-row readers (:mod:`ccanalytics.frames._fields` for dicts,
:mod:`ccanalytics.frames._decode` for raw JSON) and the column builders
(:mod:`ccanalytics.frames._pods`). A new column is one line of that table.

:data:`GPU_COLUMNS` lists the columns of :func:`~ccanalytics.frames._build.gpus_frame`;
:func:`_column_table` renders a mapping as the text table that ``_frames`` puts into
those functions' docstrings, so ``help(pods_frame)`` shows it.
Plain data: this module imports neither pandas nor numpy.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, NamedTuple

from ccanalytics.api.podfields import (
    FLOAT as _F,
    INT as _I,
    PERCENT as _PCT,
    POD_TABLE,
    READS,
    STRING as _S,
    TIME as _T,
    PodField,
)

# The underscored name is for ``_frames``, not public API.
__all__ = [
    "GPU_COLUMNS",
    "LOAD_COLUMNS",
    "POD_COLUMNS",
    "POD_FIELDS",
    "READS",
    "ColumnSpec",
    "PodField",
    "_column_table",
]


class ColumnSpec(NamedTuple):
    """A frame column: its pandas dtype and what it holds (source field, unit)."""

    dtype: str
    meaning: str


#: The pods frame's columns, in order: the lines of the pod field table
#: (:data:`~ccanalytics.api.podfields.POD_TABLE`) that name a column. A new column is
#: a line there (with the model regenerated if its field is new); see that module.
POD_FIELDS: Final[tuple[PodField, ...]] = (*(field for field in POD_TABLE if field.column),)

#: Columns of :func:`pods_frame`, in order: name -> (dtype, meaning and unit).
POD_COLUMNS: Final[Mapping[str, ColumnSpec]] = MappingProxyType(
    {f.column: ColumnSpec(f.dtype, f.describe()) for f in POD_FIELDS}
)

#: Columns of :func:`gpus_frame`, in order: name -> (dtype, meaning and unit).
#: One row per GPU the pod pays for (see :func:`gpus_frame` for the rule).
GPU_COLUMNS: Final[Mapping[str, ColumnSpec]] = MappingProxyType(
    {
        "cluster_id": ColumnSpec(_S, "the pod's cluster.id; the cluster_id argument where absent"),
        "pod_id": ColumnSpec(_S, "the pod's id"),
        "rank": ColumnSpec(_I, "the pod's cluster.rank"),
        "gpu_index": ColumnSpec(
            _I, "0-based position of the GPU in the pod (runtime.gpus[] order; no GPU ids exist)"
        ),
        "util": ColumnSpec(
            _F, f"runtime.gpus[].util, {_PCT}; <NA> for a paid GPU that does not report"
        ),
        "memory_util": ColumnSpec(_F, f"runtime.gpus[].memoryUtil, {_PCT}; <NA> likewise"),
        "gpu_type": ColumnSpec(_S, "the pod's gpu.id"),
        "status": ColumnSpec(_S, "the pod's status (see the pods frame)"),
    }
)

#: Columns that only a load adds (:func:`~ccanalytics.frames.load_cluster_pods`,
#: :func:`~ccanalytics.frames.load_cluster_frames`), after the columns above, to both
#: frames. ``pods_frame``/``gpus_frame`` of a listing you hold do not have them.
LOAD_COLUMNS: Final[Mapping[str, ColumnSpec]] = MappingProxyType(
    {
        "observed_at": ColumnSpec(
            _T,
            "load only: when the service answered, UTC (its Date header when present and "
            "plausible, else the local clock at receipt); one value per cluster loaded",
        ),
    }
)


def _column_table(columns: Mapping[str, ColumnSpec], indent: str = "    ") -> str:
    """The column mapping as an aligned text table for a docstring."""
    name_width = max(map(len, columns))
    dtype_width = max(len(spec.dtype) for spec in columns.values())
    lead = name_width + dtype_width + 4
    lines = []
    for name, spec in columns.items():
        wrapped = textwrap.wrap(spec.meaning, width=max(88 - len(indent) - lead, 30))
        lines.append(f"{name:<{name_width}}  {spec.dtype:<{dtype_width}}  {wrapped[0]}")
        lines.extend(" " * lead + more for more in wrapped[1:])
    return f"\n{indent}".join(lines)

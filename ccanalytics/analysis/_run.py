"""The live analyses' one runner: a query over a pods frame by the measures' engine.

Each analysis is SQL over the relation ``frame`` (and, for the waste classes, the GPU
frame as ``gpus_frame``), run by :func:`ccanalytics.measures.query` with the pods
frame's column types, so a live frame runs the SQL the store runs.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import pandas as pd

from ccanalytics.frames import POD_COLUMNS
from ccanalytics.measures import Params, query, sql_columns, sql_tables

__all__ = ["A_PODS_FRAME", "GPUS", "not_a", "params_of", "require", "run"]

#: The pods-frame types of the columns the queries may read (an absent one is NULL of it).
_FRAME_DTYPES: Final = {name: str(spec.dtype) for name, spec in POD_COLUMNS.items()}


A_PODS_FRAME: Final = "a pods frame (ccanalytics.pods_frame)"


def require(frame: pd.DataFrame, columns: list[str], what: str = A_PODS_FRAME) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(not_a(what, missing))


def not_a(what: str, missing: list[str]) -> str:
    return f"expected {what}; missing columns: {missing}"


#: The GPU frame's columns the waste classes read (relation ``gpus_frame`` in the SQL).
_GPU_DTYPES: Final = {
    "cluster_id": "string",
    "pod_id": "string",
    "gpu_index": "Int64",
    "util": "Float64",
}
GPUS: Final = "gpus_frame"


def run(
    frame: pd.DataFrame,
    sql: str,
    params: Params,
    dtypes: dict[str, str],
    gpus: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """``sql`` over ``frame`` by the one engine (:func:`ccanalytics.measures.query`).

    Rows that name a pod carry ``_row``; ``dtypes``' columns the SQL does not compute
    (names, ids) are taken from ``frame`` at those rows. ``gpus`` (a GPU frame) is the
    relation ``gpus_frame``: no rows when not given.
    """
    tables = None
    if GPUS in sql_tables(sql):
        if gpus is not None:
            require(gpus, ["cluster_id", "pod_id", "gpu_index", "util"], "a GPU frame (gpus_frame)")
        given = gpus if gpus is not None else pd.DataFrame(columns=list(_GPU_DTYPES))
        tables = {GPUS: (given, _GPU_DTYPES)}
    return query(
        frame,
        sql,
        params.sql(),
        reads=_reads(sql),
        frame_dtypes=_FRAME_DTYPES,
        dtypes=dtypes,
        tables=tables,
        fallbacks=_FALLBACKS,
    )


#: A frame made before a pod column was read: the GPU count weighs each pod's mean in
#: place of the GPUs reporting.
_FALLBACKS: Final = {"gpus_reporting": "gpu_count"}


@functools.cache
def _reads(sql: str) -> tuple[str, ...]:
    """The pod columns ``sql``'s tree reads: only those are handed to the engine."""
    read = sql_columns(sql)
    return tuple(name for name in POD_COLUMNS if name in read)


def params_of(params: Params | None, **given: Any) -> Params:
    return Params.of(params, **given)

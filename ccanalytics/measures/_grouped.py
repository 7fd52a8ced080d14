"""The registry's sums over a live frame's pod rows, split by a dimension.

Live, a "sum" measure is its ``row`` summed over the pod rows where its ``where`` holds,
per hour (:func:`ccanalytics.analysis.cluster_summary` gives it per cluster). Split by a
:class:`~ccanalytics.measures._dimensions.Dimension` that a single listing has (one of
pod-row keys: ``cluster``, ``gpu_type``, ``rank``; not a time bucket, a mapping or a pod's
attributes as last seen), it is the same sums per value of the dimension's keys: one
statement composed from the registry's entries, which the engine runs over the frame.
"""

from __future__ import annotations

from collections.abc import Sequence

from ccanalytics.measures._dimensions import dimensions
from ccanalytics.measures._registry import by_name

__all__ = ["live_by_sql"]


def live_by_sql(
    names: Sequence[str], by: str, *, where: str | None = None
) -> tuple[str, dict[str, str]]:
    """The statement over the relation ``frame`` (pod rows) that sums each measure ``names``
    names per value of ``by``'s keys, and its answer's columns with their dtypes.

    One row per value of the keys among the rows where ``where`` holds (every row when
    None), ordered by them (NULL last); each measure in its live column, per hour, 0 where
    no row of the group counts. A ValueError for a dimension a listing does not have, a
    TypeError for a measure that is not a live sum over pod rows.
    """
    (dimension,) = dimensions(by)
    if dimension.bucket_us is not None or dimension.needs or dimension.attributes:
        raise ValueError(f"a live frame is not split by {by!r}: it is one instant of pod rows")
    chosen = [by_name(name) for name in names]
    for m in chosen:
        if m.kind != "sum" or not m.live:
            raise TypeError(f"{m.name} is not a live sum over pod rows")
    keys = ", ".join(dimension.keys)
    sums = ", ".join(f"coalesce({m.sql_sum(case=True)}, 0) AS {m.live}" for m in chosen)
    rows = f" WHERE {where}" if where else ""
    order = ", ".join(f"{key} NULLS LAST" for key in dimension.keys)
    sql = f"SELECT {keys}, {sums} FROM frame{rows} GROUP BY {keys} ORDER BY {order}"
    return sql, {**dimension.columns, **{str(m.live): m.live_dtype for m in chosen}}

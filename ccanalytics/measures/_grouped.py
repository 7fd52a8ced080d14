"""The registry's sums (and shares of two) over a live frame's pod rows, by a dimension.

Live, a "sum" measure is its ``row`` summed over the pod rows where its ``where`` holds,
per hour (:func:`ccanalytics.analysis.cluster_summary` gives it per cluster).
:func:`share_sql` gives a share over rows weighted by the time each stands for. Split by a
:class:`~ccanalytics.measures._dimensions.Dimension` that a single listing has (one of
pod-row keys: ``cluster``, ``gpu_type``, ``rank``; not a time bucket, a mapping or a pod's
attributes as last seen), it is the same sums per value of the dimension's keys, and a share
the quotient of its two sums per value: one statement composed from the registry's
entries, which the engine runs over the frame.
"""

from __future__ import annotations

from collections.abc import Sequence

from ccanalytics.measures._dimensions import dimensions
from ccanalytics.measures._measure import Measure, sum_where
from ccanalytics.measures._registry import by_name

__all__ = ["live_by_sql", "share_sql"]


def live_by_sql(
    names: Sequence[str], by: str | None, *, where: str | None = None
) -> tuple[str, dict[str, str]]:
    """The statement over the relation ``frame`` (pod rows) that gives each measure ``names``
    names per value of ``by``'s keys, and its answer's columns with their dtypes.

    One row per value of the keys among the rows where ``where`` holds (every row when
    None), ordered by them (NULL last), and one row in all when ``by`` is None; each
    measure in its live column: a sum per hour, 0 where no row of the group counts; a
    share the quotient of its two sums over the group (NULL where the denominator is 0), as :func:`~ccanalytics.measures.live_totals`
    takes it over the fleet. A ValueError for a dimension a listing does not have, a
    TypeError for a measure that is neither a live sum over pod rows nor a share of two.
    """
    chosen_by = dimensions(by)
    for dimension in chosen_by:
        if dimension.bucket_us is not None or dimension.needs or dimension.attributes:
            raise ValueError(f"a live frame is not split by {by!r}: it is one instant of pod rows")
    keys_of = [key for dimension in chosen_by for key in dimension.keys]
    chosen = [by_name(name) for name in names]
    summed: dict[str, Measure] = {}
    for m in chosen:
        parts = [by_name(str(m.numerator)), by_name(str(m.denominator))] if _share(m) else [m]
        for part in parts:
            if part.kind != "sum" or not part.live:
                raise TypeError(f"{m.name} is not a live sum over pod rows, nor a share of two")
            summed.setdefault(part.name, part)
    keys = "".join(f"{key}, " for key in keys_of)
    sums = ", ".join(f"coalesce({m.sql_sum(case=True)}, 0) AS {m.live}" for m in summed.values())
    rows = f" WHERE {where}" if where else ""
    shown = ", ".join(_column(m) for m in chosen)
    sql = f"SELECT {keys}{shown} FROM (SELECT {keys}{sums} FROM frame{rows}"
    if keys_of:
        order = ", ".join(f"{key} NULLS LAST" for key in keys_of)
        sql += f" GROUP BY {', '.join(keys_of)}) AS summed ORDER BY {order}"
    else:
        sql += ") AS summed"
    columns = {c: t for dimension in chosen_by for c, t in dimension.columns.items()}
    return sql, {**columns, **{str(m.live): _dtype(m) for m in chosen}}


def share_sql(name: str, weight: str) -> tuple[str, str]:
    """A share measure over rows each standing for ``weight`` (a span, ``piece_us``):
    the aggregate of its numerator's rows over its denominator's (NULL where that is 0),
    and the predicate of the rows its denominator counts (a query may keep only those).

    Its two sums are the registry's, each row weighted, so a share over any bucket is
    the quotient of its sums there, as every other path takes it.
    """
    m = by_name(name)
    if not _share(m):
        raise TypeError(f"{name} is not a share of two sums")
    num, den = by_name(str(m.numerator)), by_name(str(m.denominator))
    for part in (num, den):
        if part.kind != "sum" or part.row is None:
            raise TypeError(f"{name}'s {part.name} is not a sum over pod rows")
    summed = [sum_where(f"({p.row}) * {weight}", p.where or "true") for p in (num, den)]
    return f"{summed[0]} / nullif({summed[1]}, 0)", den.where or "true"


def _share(m: Measure) -> bool:
    return m.kind == "share" and m.numerator is not None and m.denominator is not None


def _column(m: Measure) -> str:
    """A measure's live column over the summed group: a share the quotient of its sums."""
    if not _share(m):
        return str(m.live)
    num, den = by_name(str(m.numerator)).live, by_name(str(m.denominator)).live
    return f"{num} / nullif({den}, 0) AS {m.live}"


def _dtype(m: Measure) -> str:
    return "Float64" if _share(m) else m.live_dtype

"""A live summary's measures over all its rows: the fleet's figure of each, by the engine.

A summary (:func:`ccanalytics.analysis.cluster_summary`) holds each live measure per
cluster; the fleet's figure is the registry's own rule one level up: a sum's total is
the sum of its clusters', and a share is the quotient of its two sums' totals (never a
mean of the clusters' shares). The statement is composed from the registry's entries
and run by :func:`~ccanalytics.measures.query`, so the report's cards and sentences
show the engine's figures, not a second computation in pandas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ccanalytics.measures._engine import query
from ccanalytics.measures._registry import MEASURES, by_name

if TYPE_CHECKING:
    import pandas as pd

    from ccanalytics.measures._measure import Measure

__all__ = ["live_totals", "live_totals_sql"]


def live_totals_sql(measures: Sequence[Measure] = MEASURES) -> str:
    """One row over the relation ``frame`` (a live summary): each live measure's total."""
    parts: list[str] = []
    for m in measures:
        if not m.live:
            continue
        if m.kind == "share":
            num = by_name(str(m.numerator)).live
            den = by_name(str(m.denominator)).live
            parts.append(f"sum({num}) / nullif(sum({den}), 0) AS {m.live}")
        else:
            parts.append(f"coalesce(sum({m.live}), 0) AS {m.live}")
    return f"SELECT {', '.join(parts)} FROM frame"


def live_totals(summary: pd.DataFrame, measures: Sequence[Measure] = MEASURES) -> pd.Series:
    """The fleet's figure of every live measure of ``summary`` (indexed by live column).

    Float64 throughout (a count of GPUs or ranks among them). Sums are summed (0 over no row), shares are the quotient of their sums' totals
    (<NA> when the denominator's total is 0). A measure whose columns the summary lacks
    is left out.
    """
    from ccanalytics.measures._sql import sql_columns

    def has(m: Measure) -> bool:
        if not m.live:
            return False
        if m.kind != "share":
            return m.live in summary.columns
        parts = (by_name(str(m.numerator)), by_name(str(m.denominator)))
        return all(p.live in summary.columns for p in parts)

    chosen = [m for m in measures if has(m)]
    sql = live_totals_sql(chosen)
    reads = sorted(sql_columns(sql) & set(summary.columns))
    kinds = {
        name: "Float64" if str(summary[name].dtype) == "Float64" else "Int64" for name in reads
    }
    dtypes = dict.fromkeys((str(m.live) for m in chosen), "Float64")
    return query(summary, sql, {}, reads=reads, frame_dtypes=kinds, dtypes=dtypes).iloc[0]

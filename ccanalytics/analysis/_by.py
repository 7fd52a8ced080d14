"""The registry's sums over a pods frame, by a dimension: one row per value of its keys."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ccanalytics.analysis._run import run
from ccanalytics.measures import Params, live_by_sql

__all__ = ["measures_by"]


def measures_by(
    frame: pd.DataFrame,
    names: Sequence[str],
    by: str | None,
    *,
    params: Params | None = None,
    where: str | None = None,
) -> pd.DataFrame:
    """Each live sum measure ``names`` names, per hour, per value of the dimension ``by``
    (None: over every row, one row in all).

    Over the pod rows of ``frame`` where ``where`` (SQL over pod rows) holds, every row
    when None; judged at ``params``. The columns: the dimension's (``gpu_type``), then
    each measure's live column (``idle_cost_per_hour``), 0 where no row of the group
    counts (:func:`ccanalytics.measures.live_by_sql`).
    """
    sql, dtypes = live_by_sql(tuple(names), by, where=where)
    return run(frame, sql, params or Params(), dtypes)

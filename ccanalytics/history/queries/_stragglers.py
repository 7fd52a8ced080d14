"""Stragglers over time: how often each rank was flagged, by the live rule, in DuckDB SQL.

The rule is :func:`ccanalytics.analysis.stragglers`, applied to each cluster snapshot
on its own: among running GPU pods that report utilization, have a rank and are not
idle (busiest GPU at or above the idle threshold), with at least
:data:`~ccanalytics.analysis.MIN_RANKS_FOR_STRAGGLERS` of them, a rank straggles when
it is at least ``min_gap`` points below the snapshot's median of ``gpu_util_mean`` and
its robust z-score ``MAD_SCALE·(util − median)/MAD`` is below ``−z`` (with MAD 0 the
gap alone decides), at the thresholds of a :class:`~ccanalytics.measures.Params`. The
SQL is the live function's own (:func:`ccanalytics.measures.rules.straggler_ctes`), keyed
by cluster and snapshot instant, so both flag exactly the same ranks.

A rank's ``share`` counts snapshots, not hours: "flagged in 92 % of the readings".

The per-rank rows and the count of chronic stragglers are the registry's
``stragglers`` measure's own SQL (its ``source`` and ``where``,
:data:`ccanalytics.measures.MEASURES`): :func:`counted` is that measure per cluster or
over the fleet, :func:`stragglers` the rows it counts.
"""

from __future__ import annotations

from typing import Any, Final

import pandas as pd

from ccanalytics.history.queries._accounting import POD_ROWS_ONCE, run, window_us
from ccanalytics.measures import Params, by_name, sql_parameters
from ccanalytics.measures.rules import straggler_ctes

__all__ = ["FLAGS_SQL", "STRAGGLER_COLUMNS", "counted", "flags", "sql_params", "stragglers"]

STRAGGLER_COLUMNS = {
    "cluster_id": "string",
    "rank": "Int64",
    "snapshots": "Int64",
    "flagged": "Int64",
    "share": "Float64",
    "mean_deficit": "Float64",
    "first_flagged": "datetime64[ns, UTC]",
    "last_flagged": "datetime64[ns, UTC]",
}


# Each snapshot's usable ranks judged against that snapshot's median and MAD: the
# live rule's CTEs (ccanalytics.measures.rules), keyed by cluster and instant.
_JUDGED_SQL = f"""
WITH {POD_ROWS_ONCE},
in_window AS (
    SELECT * FROM pods_once
    WHERE observed_at >= make_timestamptz($start_us) AND observed_at < make_timestamptz($end_us)
),
{straggler_ctes("in_window", "cluster_id, observed_at")}"""

#: The registry's straggler measure: the rows it counts, and how it counts them.
_MEASURE: Final = by_name("stragglers")

# The rows of the registry's measure (its source, per cluster and rank), those at
# ``$min_share`` or more: the drill-down of the count.
_SHARES_SQL = f"""{_JUDGED_SQL}
SELECT * FROM ({_MEASURE.source}) AS ranks WHERE share >= $min_share"""

#: The count itself, per cluster or over the fleet (the registry's SQL of its kind).
_COUNT_SQL: Final = {
    by: f"{_JUDGED_SQL}\n{_MEASURE.sql_count(keys)}"
    for by, keys in (("cluster", ("cluster_id",)), (None, ()))
}

#: Every judgement, one row per (cluster snapshot, rank): for tests and drill-downs.
FLAGS_SQL = f"""{_JUDGED_SQL}
SELECT cluster_id, epoch_us(observed_at) AS t, rank, deficit, flagged FROM judged
ORDER BY cluster_id, observed_at, rank"""


def sql_params(
    start_us: int, end_us: int, judged_by: Params | None = None, sql: str = FLAGS_SQL
) -> dict[str, Any]:
    """The named parameters of a straggler query (``sql``, default the flags'): the
    window and the thresholds its tree names."""
    bound = sql_parameters(sql)
    rule = {k: v for k, v in (judged_by or Params()).sql().items() if k in bound}
    return {"start_us": start_us, "end_us": end_us, **rule}


def _window(con: Any, start: Any, end: Any) -> tuple[int, int] | None:
    """The window in µs; with ``end`` None it holds the newest snapshot (a reading too)."""
    window = window_us(con, start, end)
    if window is None:
        return None
    start_us, end_us = window
    return start_us, end_us + 1 if end is None else end_us


def counted(con: Any, start: Any, end: Any, *, by: str | None, params: Params) -> pd.DataFrame:
    """The registry's ``stragglers`` per cluster (``by="cluster"``) or over the fleet
    (``None``: one row, 0 with nothing judged): the ranks :func:`stragglers` lists at
    the chronic share."""
    columns = {"cluster_id": "string", "stragglers": "Int64"} if by else {"stragglers": "Int64"}
    window = _window(con, start, end)
    if window is None:
        frame = pd.DataFrame([{"stragglers": 0}] if by is None else [], columns=list(columns))
        return frame.astype(columns)
    sql = _COUNT_SQL[by]
    frame = run(con, sql, sql_params(*window, params, sql))
    return frame[list(columns)].astype(columns).reset_index(drop=True)


def stragglers(
    con: Any, start: Any, end: Any, *, min_share: float | None = None, params: Params | None = None
) -> pd.DataFrame:
    """Per (cluster_id, rank) judged in ``[start, end)``: how often it was a straggler.

    With ``end`` None the window runs up to and including the newest snapshot.

    Columns: ``cluster_id, rank``, ``snapshots`` (snapshots of its cluster in the
    window in which the rank was judged), ``flagged`` (in how many it straggled),
    ``share`` (flagged / snapshots, 0-1), ``mean_deficit`` (mean points below the
    median when flagged), ``first_flagged`` and ``last_flagged`` (UTC; <NA> when never).
    Keeps ``share >= min_share`` (default: ``params.chronic_share``, 0.5); highest share
    first. A rank flagged in at least ``chronic_share`` of them is a chronic straggler;
    one flagged for a stretch and then not is transient. ``params`` judges each snapshot
    (idle threshold, ``z``, ``min_gap``), as :func:`ccanalytics.analysis.stragglers`.
    """
    judged_by = params if params is not None else Params()
    if min_share is None:
        min_share = judged_by.chronic_share
    if not 0 <= min_share <= 1:
        raise ValueError("min_share is a share of snapshots (0-1)")
    window = _window(con, start, end)
    if window is None:
        return pd.DataFrame(columns=list(STRAGGLER_COLUMNS)).astype(STRAGGLER_COLUMNS)
    bound = {**sql_params(*window, judged_by, _SHARES_SQL), "min_share": min_share}
    frame = run(con, _SHARES_SQL, bound)
    frame["first_flagged"] = pd.to_datetime(frame["first_us"], unit="us", utc=True)
    frame["last_flagged"] = pd.to_datetime(frame["last_us"], unit="us", utc=True)
    out = frame[list(STRAGGLER_COLUMNS)].astype(STRAGGLER_COLUMNS)
    return out.sort_values(
        ["share", "cluster_id", "rank"], ascending=[False, True, True]
    ).reset_index(drop=True)


_FLAG_COLUMNS = {
    "cluster_id": "string",
    "observed_at": "datetime64[ns, UTC]",
    "rank": "Int64",
    "deficit": "Float64",
    "flagged": "boolean",
}


def flags(con: Any, start: Any, end: Any, *, params: Params | None = None) -> pd.DataFrame:
    """Every (cluster snapshot, rank) judged in ``[start, end)`` (the newest snapshot
    included when ``end`` is None), with its deficit and whether it straggled."""
    window = _window(con, start, end)
    if window is None:
        return pd.DataFrame(columns=list(_FLAG_COLUMNS)).astype(_FLAG_COLUMNS)
    frame = run(con, FLAGS_SQL, sql_params(*window, params))
    frame["observed_at"] = pd.to_datetime(frame["t"], unit="us", utc=True)
    return frame[list(_FLAG_COLUMNS)].astype(_FLAG_COLUMNS).reset_index(drop=True)

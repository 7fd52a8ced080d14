"""Stragglers over time: how often each rank was flagged, by the live rule, in DuckDB SQL.

The rule is :func:`ccanalytics.analysis.stragglers`, applied to each cluster snapshot
on its own: among running GPU pods that report utilization, have a rank and are not
idle (busiest GPU at or above the idle threshold), with at least
:data:`~ccanalytics.analysis.MIN_RANKS_FOR_STRAGGLERS` of them, a rank straggles when
it is at least ``DEFAULT_STRAGGLER_MIN_GAP`` points below the snapshot's median of
``gpu_util_mean`` and its robust z-score ``MAD_SCALE·(util − median)/MAD`` is below
``−DEFAULT_STRAGGLER_Z`` (with MAD 0 the gap alone decides). Medians are computed
as numpy does (the middle value, or the mean of the two middle values), in the same
floating-point steps, so the SQL flags exactly the ranks the live function flags.

A rank's ``share`` counts snapshots, not hours: "flagged in 92 % of the readings".
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ccanalytics._rules import (
    IDLE_THRESHOLD,
    JUDGED_SQL,
    MIN_RANKS_FOR_STRAGGLERS,
    STRAGGLER_MIN_GAP,
    STRAGGLER_Z,
    median_sql,
    straggler_flag_sql,
)
from ccanalytics.history.queries._accounting import POD_ROWS_ONCE, run, window_us

__all__ = ["STRAGGLER_COLUMNS", "stragglers"]

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


# Each snapshot's usable ranks judged against that snapshot's median and MAD.
_JUDGED_SQL = f"""
WITH {POD_ROWS_ONCE},
usable AS (
    SELECT cluster_id, observed_at, rank, CAST(gpu_util_mean AS DOUBLE) AS v
    FROM pods_once
    WHERE observed_at >= make_timestamptz($start_us) AND observed_at < make_timestamptz($end_us)
      AND {JUDGED_SQL} AND rank IS NOT NULL AND gpu_util_max >= $idle_threshold
),
centre AS (
    SELECT cluster_id, observed_at, {median_sql("list_sort(list(v))", "count(*)")} AS median
    FROM usable GROUP BY cluster_id, observed_at HAVING count(*) >= $min_ranks
),
spread AS (
    SELECT u.cluster_id, u.observed_at, u.rank, u.v, c.median, c.median - u.v AS deficit,
           abs(u.v - c.median) AS distance
    FROM usable u JOIN centre c USING (cluster_id, observed_at)
),
mad AS (
    SELECT cluster_id, observed_at, {median_sql("list_sort(list(distance))", "count(*)")} AS mad
    FROM spread GROUP BY cluster_id, observed_at
),
judged AS (
    SELECT s.cluster_id, s.observed_at, s.rank, s.deficit,
           {straggler_flag_sql("s.v", "s.median", "m.mad", "s.deficit")} AS flagged
    FROM spread s JOIN mad m USING (cluster_id, observed_at)
)"""

_SHARES_SQL = f"""{_JUDGED_SQL}
SELECT cluster_id, rank, count(*) AS snapshots, count(*) FILTER (WHERE flagged) AS flagged,
       avg(deficit) FILTER (WHERE flagged) AS mean_deficit,
       epoch_us(min(observed_at) FILTER (WHERE flagged)) AS first_us,
       epoch_us(max(observed_at) FILTER (WHERE flagged)) AS last_us
FROM judged GROUP BY cluster_id, rank"""

#: Every judgement, one row per (cluster snapshot, rank): for tests and drill-downs.
FLAGS_SQL = f"""{_JUDGED_SQL}
SELECT cluster_id, epoch_us(observed_at) AS t, rank, deficit, flagged FROM judged
ORDER BY cluster_id, observed_at, rank"""


def params(start_us: int, end_us: int) -> dict[str, Any]:
    """The named parameters of the straggler queries, with the live rule's constants."""
    return {
        "start_us": start_us,
        "end_us": end_us,
        "idle_threshold": IDLE_THRESHOLD,
        "min_ranks": MIN_RANKS_FOR_STRAGGLERS,
        "min_gap": STRAGGLER_MIN_GAP,
        "z": STRAGGLER_Z,
    }


def stragglers(con: Any, start: Any, end: Any, *, min_share: float = 0.5) -> pd.DataFrame:
    """Per (cluster_id, rank) judged in ``[start, end)``: how often it was a straggler.

    With ``end`` None the window runs up to and including the newest snapshot.

    Columns: ``cluster_id, rank``, ``snapshots`` (snapshots of its cluster in the
    window in which the rank was judged), ``flagged`` (in how many it straggled),
    ``share`` (flagged / snapshots, 0-1), ``mean_deficit`` (mean points below the
    median when flagged), ``first_flagged`` and ``last_flagged`` (UTC; <NA> when never).
    Keeps ``share >= min_share``; highest share first. A rank flagged throughout is a
    chronic straggler; one flagged for a stretch and then not is transient.
    """
    if not 0 <= min_share <= 1:
        raise ValueError("min_share is a share of snapshots (0-1)")
    window = window_us(con, start, end)
    if window is None:
        return pd.DataFrame(columns=list(STRAGGLER_COLUMNS)).astype(STRAGGLER_COLUMNS)
    start_us, end_us = window
    if end is None:  # up to the newest snapshot: it is a reading too, so it counts
        end_us += 1
    frame = run(con, _SHARES_SQL, params(start_us, end_us))
    frame["share"] = frame["flagged"] / frame["snapshots"]
    frame["first_flagged"] = pd.to_datetime(frame["first_us"], unit="us", utc=True)
    frame["last_flagged"] = pd.to_datetime(frame["last_us"], unit="us", utc=True)
    frame = frame[frame["share"] >= min_share]
    out = frame[list(STRAGGLER_COLUMNS)].astype(STRAGGLER_COLUMNS)
    return out.sort_values(
        ["share", "cluster_id", "rank"], ascending=[False, True, True]
    ).reset_index(drop=True)

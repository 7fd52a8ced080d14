"""GPU utilization over time, per cluster, rank or pod, in buckets of a given width.

The pod rows and the time each stands for are :func:`~ccanalytics.history.queries._queries.pod_rows_ctes`'
(the one rule of time); each bucket's mean is the registry's ``gpu_utilization`` there
(weighted by time and by the GPUs reporting), in percent.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ccanalytics.history.queries._accounting import (
    US_PER_HOUR,
    duration_us,
    max_gap_us,
    run,
    split_sql,
    window_us,
)
from ccanalytics.history.queries._queries import pod_rows_ctes
from ccanalytics.measures import Params, share_sql

__all__ = ["utilization"]

#: The registry's share each bucket gives, in percent.
_UTIL_MEASURE = "gpu_utilization"

_UTIL_KEYS: dict[str, dict[str, str]] = {
    "cluster": {"cluster_id": "string"},
    "rank": {"cluster_id": "string", "rank": "Int64"},
    "pod": {"cluster_id": "string", "pod_id": "string", "rank": "Int64"},
}


def utilization(
    con: Any,
    start: Any,
    end: Any,
    *,
    freq: Any = "1h",
    by: str = "cluster",
    max_gap: Any = None,
) -> pd.DataFrame:
    """GPU utilization over time in long format, one row per bucket and ``by`` value.

    Columns: ``time`` (bucket start, UTC; buckets are ``freq`` wide, aligned to the
    Unix epoch, so daily and hourly buckets start at UTC midnight and on the hour),
    ``cluster_id`` (plus ``rank`` for ``by="rank"``, ``pod_id, rank`` for ``by="pod"``),
    ``gpu_util_mean`` (percent: the registry's ``gpu_utilization`` over the bucket,
    the mean of running GPU pods' ``gpu_util_mean`` weighted by time and by reporting
    GPUs; <NA> when nothing was observed, so plots show gaps) and ``observed_hours`` (for a cluster, the hours of
    the bucket its snapshots cover; for a rank or pod, the hours it was seen).
    Every bucket of the window appears for every cluster (rank, pod) seen in it.
    """
    if by not in _UTIL_KEYS:
        raise ValueError(f"by must be 'cluster', 'rank' or 'pod', not {by!r}")
    width = duration_us(freq, "freq")
    keys = list(_UTIL_KEYS[by])
    dtypes = {"time": "datetime64[ns, UTC]", **_UTIL_KEYS[by]}
    dtypes |= {"gpu_util_mean": "Float64", "observed_hours": "Float64"}
    window = window_us(con, start, end)
    if window is None or window[0] == window[1]:
        return pd.DataFrame(columns=list(dtypes)).astype(dtypes)
    params = {
        "start_us": window[0],
        "end_us": window[1],
        "max_gap_us": max_gap_us(max_gap),
        **Params().sql(),  # the pod rows carry an idle flag, unused here
    }
    frame = run(con, _utilization_sql(by, width), params)
    frame["time"] = pd.to_datetime(frame["k"] * width, unit="us", utc=True)
    frame["observed_hours"] = frame["observed_us"] / US_PER_HOUR
    out = frame[list(dtypes)].astype(dtypes)
    return out.sort_values([*keys, "time"]).reset_index(drop=True)


def _utilization_sql(by: str, width: int) -> str:
    key = {"cluster": "cluster_id", "rank": "cluster_id, rank", "pod": "cluster_id, pod_id"}[by]
    share, reporting = share_sql(_UTIL_MEASURE, "piece_us")
    # A cluster's observed time comes from its snapshots, a rank's or pod's from its rows.
    observed_from = "(SELECT * FROM timed WHERE in_window)" if by == "cluster" else "pod_rows"
    extra = ", arg_max(rank, t) AS rank" if by == "pod" else ""
    key_filter = " WHERE rank IS NOT NULL" if by == "rank" else ""
    return f"""{pod_rows_ctes()},
    buckets AS (SELECT unnest(range($start_us // {width}, ($end_us - 1) // {width} + 1)) AS k),
    seen AS (SELECT {key}{extra} FROM pod_rows{key_filter} GROUP BY {key}),
    observed AS (
        SELECT {key}, k, sum(piece_us) AS observed_us
        FROM {split_sql(observed_from, width)} GROUP BY {key}, k
    ),
    util AS (
        SELECT {key}, k, 100 * ({share}) AS gpu_util_mean
        FROM {split_sql(f"(SELECT * FROM pod_rows WHERE {reporting})", width)}
        GROUP BY {key}, k
    )
    SELECT seen.*, buckets.k, util.gpu_util_mean,
           coalesce(observed.observed_us, 0) AS observed_us
    FROM seen CROSS JOIN buckets
    LEFT JOIN observed USING ({key}, k)
    LEFT JOIN util USING ({key}, k)"""

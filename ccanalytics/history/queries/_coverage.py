"""Per cluster: the snapshots taken, failed and missing against its schedule.

Read from the snapshots table (:func:`~ccanalytics.history.store._rollup.snapshot_instants`):
a failed listing is unobserved time, a tick of the schedule with no record at all is one
the collector missed.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ccanalytics.history.queries._accounting import run, to_utc
from ccanalytics.history.store import OK, snapshot_instants

__all__ = ["coverage"]

_COVERAGE_DTYPES = {
    "cluster_id": "string",
    "first_snapshot": "datetime64[ns, UTC]",
    "last_snapshot": "datetime64[ns, UTC]",
    "interval": "timedelta64[ns]",
    "taken": "Int64",
    "failed": "Int64",
    "missing": "Int64",
    "last_error": "string",
}

_COVERAGE_SQL = f"""WITH {snapshot_instants()},
    spaced AS (
        SELECT *, lead(t) OVER (PARTITION BY cluster_id ORDER BY t) - t AS spacing
        FROM snapshot_instants
    ),
    step AS (
        SELECT cluster_id, CAST(median(spacing) AS BIGINT) AS interval_us
        FROM spaced GROUP BY cluster_id
    ),
    per AS (
        SELECT cluster_id, min(t) AS first_us, max(t) AS last_us,
               count(*) FILTER (WHERE ok) AS taken, count(*) FILTER (WHERE NOT ok) AS failed
        FROM snapshot_instants
        WHERE ($start_us IS NULL OR t >= $start_us) AND ($end_us IS NULL OR t < $end_us)
        GROUP BY cluster_id
    ),
    last_error AS (
        SELECT cluster_id,
               arg_max(outcome || coalesce(' (HTTP ' || http_status || ')', ''), observed_at)
                 AS last_error
        FROM snapshots
        WHERE outcome <> '{OK}'
          AND ($start_us IS NULL OR epoch_us(observed_at) >= $start_us)
          AND ($end_us IS NULL OR epoch_us(observed_at) < $end_us)
        GROUP BY cluster_id
    )
    SELECT per.*, step.interval_us, last_error.last_error
    FROM per JOIN step USING (cluster_id) LEFT JOIN last_error USING (cluster_id)
    ORDER BY cluster_id"""


def coverage(con: Any, start: Any, end: Any) -> pd.DataFrame:
    """Per cluster: the snapshots taken, failed and missing against its schedule.

    Columns: ``cluster_id``, ``first_snapshot``/``last_snapshot`` (UTC, in the window),
    ``interval`` (the schedule: the median spacing of the cluster's snapshots in the
    whole store, as the time accounting takes it), ``taken`` (snapshots whose listing
    answered, empty ones included), ``failed`` (listings that failed: unobserved time),
    ``missing`` (ticks of the schedule between the first and the last snapshot with no
    record at all: the collector did not run) and ``last_error`` (the latest failure's
    exception class and HTTP status; <NA> when none). ``start``/``end`` ``None``: open.
    A store written before the snapshots table counts its pod rows' instants as taken
    and knows of no failure.
    """
    params = {
        "start_us": None if start is None else int(to_utc(start).value // 1000),
        "end_us": None if end is None else int(to_utc(end).value // 1000),
    }
    frame = run(con, _COVERAGE_SQL, params)
    recorded = frame["taken"] + frame["failed"]
    step = frame["interval_us"].where(frame["interval_us"] > 0)
    expected = ((frame["last_us"] - frame["first_us"]) / step).round() + 1
    frame["missing"] = (expected.fillna(recorded) - recorded).clip(lower=0)
    frame["first_snapshot"] = pd.to_datetime(frame["first_us"], unit="us", utc=True)
    frame["last_snapshot"] = pd.to_datetime(frame["last_us"], unit="us", utc=True)
    frame["interval"] = pd.to_timedelta(frame["interval_us"], unit="us")
    return frame[list(_COVERAGE_DTYPES)].astype(_COVERAGE_DTYPES).reset_index(drop=True)

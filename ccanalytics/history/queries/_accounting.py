"""Time accounting: the span of time each stored snapshot stands for, as DuckDB SQL.

The rule is fixed in the public API (``History``): a snapshot of a cluster stands for
the time from its ``observed_at`` until that cluster's next snapshot, capped at
``max_gap`` (``None``: twice the median spacing of that cluster's snapshots), and
clipped to the window ``[start, end)``; a cluster's last snapshot stands for no time.
Whatever the cap cuts off, and whatever the window holds before a cluster's first
snapshot or after its last, is *unobserved*: never counted as idle or busy.

The median spacing is taken over every snapshot of the cluster in the store, not only
those in the window, so a snapshot stands for the same time whichever window asks:
a week's figures are the sum of its days'.

Each snapshot instant of a cluster counts once, whatever the number of files holding
it (two collects within the ``Date`` header's one second): the queries read pod rows
through :data:`POD_ROWS_ONCE` (one row per cluster, instant and pod) and time through
:func:`snapshot_instants` (one row per cluster and instant), never ``pods`` directly.
``snapshot_instants`` is also where the store's ``snapshots`` table comes in: a listing
with no pods is an instant with no pod rows (observed time at zero cost), a failed
listing an instant that covers no time (unobserved). Stores written before that table
have only their pod rows' instants, and read exactly as they did.

Idle and judged are :mod:`ccanalytics.measures.rules`' definitions, the ones the live frames use.

Times are integer microseconds since the Unix epoch inside SQL (exact sums; hours
are divided out only at the end), and the queries here read only the views ``pods``
(``gpus`` and ``snapshots``) that :class:`~ccanalytics.history.History` defines on its connection.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

from ccanalytics._durations import DURATION_FORMS
from ccanalytics.history.queries._window import DurationLike, as_duration, snapshot_bounds
from ccanalytics.history.store import snapshot_instants
from ccanalytics.measures import Measure, by_name, sql_parameters
from ccanalytics.measures.rules import IDLE_SQL, JUDGED_SQL

__all__ = [
    "IDLE",
    "INSTANT_FILES",
    "JUDGED",
    "ONE_FILE_VIEW",
    "POD_ROWS_ONCE",
    "ROLLUP_VIEW",
    "SCALED_HOUR",
    "US_PER_DAY",
    "US_PER_HOUR",
    "Window",
    "duration_us",
    "hourly_spend_ctes",
    "integral_sql",
    "interval_ctes",
    "max_gap_us",
    "one_file_per_instant",
    "rolled_days",
    "run",
    "snapshot_instants",
    "split_sql",
    "to_utc",
    "us_scaled",
    "window_us",
]

US_PER_HOUR = 3_600_000_000
US_PER_DAY = 24 * US_PER_HOUR


#: A power of two that microseconds are scaled by before a product with them.
_SCALE = 2**32
#: An hour in scaled microseconds, as SQL: what a sum of ``x * us_scaled(span)`` is
#: divided by to be in hours.
SCALED_HOUR = f"({US_PER_HOUR} / {_SCALE})"


def us_scaled(span_us: str) -> str:
    """SQL: the microseconds ``span_us`` times 2**-32, to multiply a figure by.

    A finite cost of 1e300 USD/h times 3e8 µs overflows a double; times 0.07 it does
    not. Scaling by a power of two is exact, so every product and sum rounds as the
    unscaled one would (integral sums stay exact, in any order), and the sum divided by
    :data:`SCALED_HOUR` is the same number as the unscaled sum divided by an hour.
    """
    return f"(CAST({span_us} AS DOUBLE) / {_SCALE})"


def integral_sql(measure: Measure, span_us: str) -> str:
    """SQL: a sum measure's Σ row·Δt over the rows its rule holds for (``span_us``: a
    column of microseconds), in hours of its unit (USD, GPU-hours), 0 over no row.

    The one spelling of a measure's time integral over pod rows: every split of it
    (:meth:`History.measures`, showback's periods, the waste classes) sums the same
    products in the same way.
    """
    if measure.row is None:
        raise TypeError(f"{measure.name} is not a sum over pod rows")
    where = f" FILTER (WHERE {measure.where})" if measure.where else ""
    return (
        f"coalesce(sum(coalesce({measure.row}, 0) * {us_scaled(span_us)}){where}, 0)"
        f" / {SCALED_HOUR}"
    )


#: A pod-snapshot that can be judged busy or idle (:data:`ccanalytics.measures.rules.JUDGED_SQL`).
JUDGED = JUDGED_SQL
#: An idle pod-snapshot, below ``$idle_threshold`` (:data:`ccanalytics.measures.rules.IDLE_SQL`).
IDLE = IDLE_SQL

#: CTEs ``instant_files`` and ``pods_once``: the pod rows of each cluster snapshot
#: instant read from one file only (the first by name), however many files hold that
#: instant (two collects within the ``Date`` header's second). By file and not by pod:
#: a DISTINCT over every pod row costs several times the whole query (docs/performance.md).
INSTANT_FILES = """instant_files AS (
        SELECT cluster_id, observed_at, min(file_index) AS file_index
        FROM pods GROUP BY cluster_id, observed_at
    )"""
POD_ROWS_ONCE = f"""{INSTANT_FILES},
    pods_once AS (
        SELECT p.* FROM pods p JOIN instant_files f USING (cluster_id, observed_at, file_index)
    )"""


#: The view History defines beside ``pods``: one row, ``one_file``, true when no
#: ``observed_at`` can lie in two of the pods view's files (their footers' time ranges
#: do not overlap), so no cluster snapshot instant is held by two files and the
#: queries may skip finding each instant's first file (a per-instant min/max of
#: ``file_index`` and a second read of the pod rows). False when any range is unknown.
ONE_FILE_VIEW = "_one_file_per_instant"


def one_file_per_instant(con: Any) -> bool:
    """Whether :data:`ONE_FILE_VIEW` says every instant lies in one file (False if absent)."""
    try:
        rows = con.execute(f"SELECT one_file FROM {ONE_FILE_VIEW}").fetchall()
    except duckdb.CatalogException:  # a connection History did not set up
        return False
    return bool(rows and rows[0][0] is True)


#: The view History defines beside ``pods``: one row, ``days``, the number of days read
#: from their rollups (:mod:`ccanalytics.history.store._rollup`) when the parameters
#: are the rollups' own. Then ``_rollup`` holds those days' instants and ``_pods_rest``
#: and ``_snapshots_rest`` the other days' rows.
ROLLUP_VIEW = "_rolled_days"


def rolled_days(con: Any) -> int:
    """How many days :data:`ROLLUP_VIEW` says the rollups answer for (0 if absent)."""
    try:
        rows = con.execute(f"SELECT days FROM {ROLLUP_VIEW}").fetchall()
    except duckdb.CatalogException:  # a connection History did not set up
        return 0
    return int(rows[0][0]) if rows else 0


#: ``(start_us, end_us)``: the window ``[start, end)`` in epoch microseconds.
Window = tuple[int, int]


def to_utc(value: Any) -> pd.Timestamp:
    """A ``pandas.Timestamp`` in UTC (naive values are taken as UTC)."""
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _epoch_us(stamp: pd.Timestamp) -> int:
    return int(stamp.value // 1000)  # .value is nanoseconds since the epoch


def window_us(con: Any, start: Any, end: Any) -> Window | None:
    """The window in microseconds; ``None`` ends default to the store's oldest/newest snapshot.

    ``None`` when the store holds no snapshot at all (nothing to account for).
    """
    if start is None or end is None:
        bounds = snapshot_bounds(con)  # both tables: the one definition of the newest
        if bounds is None:
            return None
        oldest, newest = bounds
        start_us = oldest if start is None else _epoch_us(to_utc(start))
        end_us = newest if end is None else _epoch_us(to_utc(end))
    else:
        start_us, end_us = _epoch_us(to_utc(start)), _epoch_us(to_utc(end))
    if end_us < start_us:
        raise ValueError("the window ends before it starts (until < since)")
    return int(start_us), int(end_us)


def duration_us(value: DurationLike, name: str) -> int:
    """A positive duration in microseconds: a timedelta, a ``--window`` string (``"1h30m"``),
    or (kept for older callers) anything else ``pandas.Timedelta`` reads."""
    span = as_duration(value)
    if span is None:
        try:
            span = pd.Timedelta(value)
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"{name}={value!r} is not a duration ({err}): {DURATION_FORMS}"
            ) from None
    micro = int(span.value // 1000)
    if micro <= 0:
        raise ValueError(f"{name} must be a positive duration, not {value!r}")
    return micro


def max_gap_us(max_gap: DurationLike | None) -> int | None:
    """``max_gap`` in microseconds (``None`` stays ``None``: twice the median spacing)."""
    return None if max_gap is None else duration_us(max_gap, "max_gap")


def interval_ctes(snapshots: str, windows: str | None = None) -> str:
    """CTEs ``spaced, cap, timed`` over ``snapshots`` (one row per cluster snapshot, ``t`` in µs).

    ``snapshots`` has ``ok`` (see :func:`snapshot_instants`): a failed snapshot covers
    nothing, but it still ends the span of the snapshot before it and counts in the
    spacing (it was on the schedule). ``timed`` keeps every column of ``snapshots`` and adds, per snapshot: ``lo``/``hi``
    (the covered span clipped to the window; ``hi`` is NULL for a cluster's last
    snapshot), ``covered_us`` (0 when none), ``raw_us`` (the uncapped span to the next
    snapshot, clipped) and ``in_window`` (it covers some of the window or lies in it).
    Parameters: ``$start_us``, ``$end_us``, ``$max_gap_us`` (NULL: twice the median).

    ``windows``: several windows ending at ``$end_us`` at once, a relation with the
    columns ``window_id`` and ``start_us`` (each start in place of ``$start_us``). Every
    snapshot is timed in each of them; ``timed`` carries both columns too. The pod
    rows are still read once: only the timing is per window.
    """
    start, window_start, crossed, carried = "$start_us", "$start_us", "", ""
    if windows is not None:
        start, window_start = "w.start_us", "start_us"
        crossed, carried = f" CROSS JOIN {windows} w", " w.window_id, w.start_us,"
    return f"""
    spaced AS (
        SELECT *, lead(t) OVER (PARTITION BY cluster_id ORDER BY t) - t AS spacing
        FROM {snapshots}
    ),
    cap AS (
        SELECT cluster_id,
               coalesce(CAST($max_gap_us AS BIGINT), CAST(2 * median(spacing) AS BIGINT)) AS cap_us
        FROM spaced GROUP BY cluster_id
    ),
    bounded AS (
        SELECT s.*,{carried}
               greatest(s.t, {start}) AS lo,
               -- least() skips NULLs, so the last snapshot (no spacing) is kept NULL by hand
               CASE WHEN s.spacing IS NOT NULL AND s.ok
                    THEN least(s.t + least(s.spacing, c.cap_us), $end_us) END AS hi,
               CASE WHEN s.spacing IS NOT NULL THEN least(s.t + s.spacing, $end_us) END AS raw_hi
        FROM spaced s JOIN cap c USING (cluster_id){crossed}
    ),
    timed AS (
        SELECT *,
               greatest(coalesce(hi - lo, 0), 0) AS covered_us,
               greatest(coalesce(raw_hi - lo, 0), 0) AS raw_us,
               (coalesce(hi, lo) > lo OR (t >= {window_start} AND t < $end_us)) AS in_window
        FROM bounded
    )"""


def split_sql(relation: str, width_us: int) -> str:
    """Rows of ``relation`` (with ``lo < hi``) cut at multiples of ``width_us``.

    Each piece keeps the row's columns and adds ``k`` (the bucket: its start is
    ``k * width_us``) and ``piece_us`` (the part of ``[lo, hi)`` inside it). With a
    day's width this splits intervals at UTC midnight.
    """
    width = int(width_us)
    return f"""(
        SELECT *, least(hi, (k + 1) * {width}) - greatest(lo, k * {width}) AS piece_us
        FROM (
            SELECT *, unnest(range(lo // {width}, (hi - 1) // {width} + 1)) AS k
            FROM {relation} WHERE hi > lo
        )
    )"""


def run(con: Any, sql: str, params: dict[str, Any]) -> pd.DataFrame:
    """Execute ``sql`` with named ``params`` on ``con`` and return a pandas frame.

    Only the parameters the statement's tree names are bound (DuckDB refuses others):
    read off the tree, a name that starts another's or sits in a comment is no match.
    """
    bound = sql_parameters(sql)
    used = {name: value for name, value in params.items() if name in bound}
    frame: pd.DataFrame = con.execute(sql, used).df()
    return frame


def hourly_spend_ctes(hours: str = "TRUE") -> str:
    """CTEs ending in ``hourly_spend``: per cluster and hour ``k`` (hours since the epoch)
    of the window, the time observed in it (``observed_us``) and the spend rate over that
    time (``rate``, USD/h: Σ cost·Δt / Σ Δt of the registry's spend, products scaled).
    ``hours``: a condition on ``k`` that keeps only some hours (the same hour of past
    weeks). Binds ``$start_us``, ``$end_us`` and ``$max_gap_us``."""
    cost = by_name("total_cost").row
    return f"""{snapshot_instants()},
    {POD_ROWS_ONCE},
    {interval_ctes("snapshot_instants")},
    pieces AS (
        SELECT cluster_id, t, k, piece_us
        FROM {split_sql("(SELECT * FROM timed WHERE in_window)", US_PER_HOUR)}
        WHERE {hours}
    ),
    instant_cost AS (
        SELECT cluster_id, epoch_us(observed_at) AS t, sum(coalesce({cost}, 0)) AS cost
        FROM pods_once GROUP BY cluster_id, observed_at
    ),
    hourly_spend AS (
        SELECT p.cluster_id, p.k, sum(p.piece_us) AS observed_us,
               sum(coalesce(c.cost, 0) * {us_scaled("p.piece_us")})
                   / sum({us_scaled("p.piece_us")}) AS rate
        FROM pieces p LEFT JOIN instant_cost c USING (cluster_id, t)
        GROUP BY p.cluster_id, p.k HAVING sum(p.piece_us) > 0
    )"""

"""Answers over time: idle cost and pod lifetimes, in DuckDB SQL over the store.

Each function takes the History's DuckDB connection (views ``pods`` and ``gpus``) and
a window already resolved to timestamps, runs one query, and returns a small pandas
frame with nullable dtypes. Nothing here loads the snapshots into pandas: a year of
minute snapshots is aggregated where it lies. The time each snapshot stands for is
:mod:`ccanalytics.history.queries._accounting`'s; idle and judged pods are defined there too.

Costs are USD (the pods' ``cost`` is a price per hour), times are hours.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import pandas as pd

from ccanalytics.history.queries._accounting import (
    IDLE,
    POD_ROWS_ONCE,
    SCALED_HOUR,
    US_PER_DAY,
    US_PER_HOUR,
    interval_ctes,
    max_gap_us,
    one_file_per_instant,
    rolled_days,
    run,
    split_sql,
    us_scaled,
    window_us,
)
from ccanalytics.history.store import (
    SUMMED,
    instant_rows_sql,
    instant_sums_sql,
    rollup_params,
    snapshot_instants,
)
from ccanalytics.measures import (
    POD_IDENTITY,
    Dimension,
    Measure,
    Params,
    by_name,
    columns_of,
    dimensions,
    of_kind,
    select_list,
    sum_shares,
)

__all__ = [
    "IDLE_COST_KEYS",
    "answers",
    "idle_cost",
    "idle_cost_since",
    "pod_lifetimes",
    "pod_rows_ctes",
    "summed_for",
    "summed_sql",
]

#: The registry's sums over pod rows (each the time integral Σ row·Δt over a window)...
_SUMMED = SUMMED
#: ...and its shares of two of them.
_SHARES = sum_shares()
_BY = ("cluster", "day", "pod", None)
#: The dimensions this module answers alone, each with its key columns
#: (:data:`~ccanalytics.measures._dimensions.DIMENSIONS`' own).
_KEYS: dict[str | None, dict[str, str]] = {
    name: columns_of(dimensions(name)) for name in ("cluster", "day", "pod", None)
}
#: The key columns of :meth:`History.idle_cost` per ``by`` (a pod: its name and rank).
IDLE_COST_KEYS: dict[str | None, tuple[str, ...]] = {
    **{name: tuple(keys) for name, keys in _KEYS.items()},
    "pod": ("cluster_id", "pod_id", "name", "rank"),
}


def answers(chosen: Sequence[Measure], by: Sequence[Dimension]) -> bool:
    """Whether :func:`idle_cost` answers ``chosen`` split ``by``: sums and shares by
    cluster, day, pod or nothing (where its time accounting and the rollups apply)."""
    kinds = all(m.kind == "sum" or m in _SHARES for m in chosen)
    return kinds and len(by) <= 1 and all(d.name in ("cluster", "day", "pod") for d in by)


# One row per cluster snapshot instant with the sums the idle-cost measures need (per
# hour): the instants, and the sums over each instant's pod rows from one file; an
# instant without pod rows sums to 0. This is the one pass over every pod row, so it is
# kept lean: sums ignore NULL costs (coalesce outside), and GPU counts are summed as
# DOUBLE (exact below 2**53) because a BIGINT sum is a 128-bit HUGEINT in DuckDB, which
# tripled this step's CPU time. ``instant_sums`` and ``sums`` are read more than once,
# and MATERIALIZED makes every DuckDB (the oldest the floors allow included) scan the
# pod rows once: scanned twice, the files are opened twice, further apart, and a day
# compacted meanwhile fails every attempt of the query. The SQL of the sums and of the
# instants is the rollups' own (history.store._rollup): one definition for both.
# A question sums only the measures it answers (``summed``, in the registry's order): a
# year's idle cost by day summed 5 of the registry's 25 in 40 % of the time and half the
# memory of all of them.
def summed_for(names: Sequence[str] | None) -> tuple[Measure, ...]:
    """The registry's sums that the measures ``names`` need (a share: its two), in the
    registry's order; every sum when None."""
    if names is None:
        return _SUMMED
    needed: set[str] = set()
    for name in names:
        m = by_name(name)
        needed |= {str(m.numerator), str(m.denominator)} if m in _SHARES else {m.name}
    return tuple(m for m in _SUMMED if m.name in needed)


def _snapshot_sums(
    pods: str, snapshots: str, name: str = "snap", summed: tuple[Measure, ...] = _SUMMED
) -> str:
    """CTEs down to ``name``: each instant of ``pods``/``snapshots`` with its sums."""
    sums = ",".join(f"\n               {m.sql_sum()} AS {m.name}" for m in summed)
    sum_names = ", ".join(m.name for m in summed)
    return f"""
    instant_sums AS MATERIALIZED (
        SELECT cluster_id, epoch_us(observed_at) AS t,
               min(file_index) AS first_file, max(file_index) AS last_file, {sums}
        FROM {pods} GROUP BY cluster_id, observed_at
    ),
    -- An instant held by two files or more (rare) is summed again from its first file
    -- only; min/max of the file's index cost little in the main pass, grouping by it did.
    held_twice AS (SELECT cluster_id, t, first_file FROM instant_sums WHERE first_file <> last_file),
    resummed AS (
        SELECT p.cluster_id, d.t, {sums}
        FROM {pods} p JOIN held_twice d
          ON p.cluster_id = d.cluster_id AND epoch_us(p.observed_at) = d.t
             AND p.file_index = d.first_file
        GROUP BY p.cluster_id, d.t
    ),
    sums AS MATERIALIZED (
        SELECT cluster_id, t, {sum_names}
        FROM instant_sums WHERE first_file = last_file
        UNION ALL SELECT * FROM resummed
    ),
    {snapshot_instants("sums", grouped=True, snapshots=snapshots)},{instant_rows_sql(name=name, summed=summed)}"""


# The same CTEs when no instant can be held by two files (ONE_FILE_VIEW): the sums
# straight from the one pass, without the file's index (two aggregates fewer per pod
# row, a quarter of the year's peak memory) and without resummed's second read of the
# pod rows. The answers are the same: held_twice would be empty. (An instant whose
# observed_at is NULL covers no time in either form: interval_ctes never counts it.)
def _snapshot_sums_one_file(
    pods: str, snapshots: str, name: str = "snap", summed: tuple[Measure, ...] = _SUMMED
) -> str:
    return f"""
    sums AS MATERIALIZED ({instant_sums_sql(pods, summed)}),
    {snapshot_instants("sums", grouped=True, snapshots=snapshots)},{instant_rows_sql(name=name, summed=summed)}"""


def _instants(one_file: bool, rollup: bool, summed: tuple[Measure, ...]) -> str:
    """CTEs down to ``snap``: every cluster snapshot instant with its sums.

    ``rollup``: the days with a rollup (``_rollup``, written by compaction from the
    same SQL) read from it, the other days from their rows (``_pods_rest``,
    ``_snapshots_rest``); else every day from the ``pods`` and ``snapshots`` views.
    """
    form = _snapshot_sums_one_file if one_file else _snapshot_sums
    if not rollup:
        return form("pods", "snapshots", summed=summed)
    kept = ", ".join(["cluster_id", "t", "ok", *(m.name for m in summed)])
    return f"""{form("_pods_rest", "_snapshots_rest", name="snap_rest", summed=summed)},
    snap AS (SELECT * FROM snap_rest UNION ALL BY NAME SELECT {kept} FROM _rollup)"""


def _integral(value: str, span: str) -> tuple[str, str]:
    """Σ value·``span`` in hours as (what to sum, what follows the sum), in scaled
    microseconds (:func:`us_scaled`: no product overflows, every sum is as exact)."""
    return f"{value} * {us_scaled(span)}", f" / {SCALED_HOUR}"


def _measures(us: str, summed: tuple[Measure, ...], *, coalesced: bool = False) -> str:
    """The time covered and the measures ``summed``, summed over rows of ``timed`` (or
    its pieces: ``us`` is ``piece_us``); 0 rather than NULL over no row when
    ``coalesced``."""
    wrap = "coalesce({}, 0)" if coalesced else "{}"
    return f"\n    {wrap.format(f'sum({us})')} AS observed_us" + "".join(
        f",\n    {wrap.format(f'sum({value})')}{after} AS {m.name}"
        for m in summed
        for value, after in [_integral(m.name, us)]
    )


def idle_cost(
    con: Any,
    start: Any,
    end: Any,
    *,
    by: str | None = "cluster",
    params: Params | None = None,
    max_gap: Any = None,
    measures: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Spend, idle spend and unused-capacity spend over ``[start, end)``, per ``by`` value.

    ``by``: ``"cluster"``, ``"day"`` (UTC days; intervals split at midnight), ``"pod"``
    or ``None`` (one row). Columns: the ``by`` column(s), then ``observed_hours``
    (cluster-hours covered by snapshots; for a pod, hours it was seen), every sum and
    share of the registry (:data:`ccanalytics.measures.MEASURES`; a share is <NA> over
    no denominator), and ``unobserved_hours`` (cluster-hours of the window no snapshot
    covers; for a pod, the uncovered time right after snapshots that saw it).
    :meth:`History.measures` and :meth:`History.idle_cost` pick their columns of it.
    ``measures`` (names of sums and shares) limits the sums to those they need, and the
    columns to those sums and the shares of two of them.
    """
    if by not in _BY:
        raise ValueError(f"by must be one of 'cluster', 'day', 'pod' or None, not {by!r}")
    judged_by = params if params is not None else Params()
    summed = summed_for(measures)
    window = window_us(con, start, end)
    if window is None:
        return _nothing(by, summed)
    if by == "cluster":
        return _per_window(con, [window[0]], window[1], judged_by, max_gap, summed)[0]
    params_sql = {
        "start_us": window[0],
        "end_us": window[1],
        "max_gap_us": max_gap_us(max_gap),
        **judged_by.sql(),
    }
    if by == "pod":
        frame = run(con, _pod_sql(summed), params_sql)
        frame["unobserved_hours"] = frame["unobserved_us"] / US_PER_HOUR
    else:
        # The rollups answer only at their own thresholds (history.store._rollup).
        rollup = rolled_days(con) > 0 and rollup_params(judged_by) == rollup_params()
        frame = run(con, summed_sql(by, one_file_per_instant(con), rollup, summed), params_sql)
        frame["unobserved_hours"] = (frame["window_us"] - frame["observed_us"]) / US_PER_HOUR
    frame["observed_hours"] = frame["observed_us"] / US_PER_HOUR
    if by == "day":
        frame["day"] = pd.to_datetime(frame["k"] * US_PER_DAY, unit="us", utc=True)
    return _typed(_shares(frame, summed)[[*_KEYS[by], *_columns(summed)]], by, summed)


def _columns(summed: tuple[Measure, ...]) -> tuple[str, ...]:
    """:func:`idle_cost`'s measure columns, after its ``by`` column(s), given its sums:
    theirs and their shares', between the hours observed and not (every sum and share of
    the registry when asked for all; :meth:`History.idle_cost` shows its documented few)."""
    return (
        "observed_hours",
        *(m.name for m in summed),
        *(m.name for m in _shares_of(summed)),
        "unobserved_hours",
    )


def _shares_of(summed: tuple[Measure, ...]) -> tuple[Measure, ...]:
    """The registry's shares whose two sums are among ``summed``."""
    names = {m.name for m in summed}
    return tuple(m for m in _SHARES if {m.numerator, m.denominator} <= names)


def _nothing(by: str | None, summed: tuple[Measure, ...] = _SUMMED) -> pd.DataFrame:
    """:func:`idle_cost` of a store with no snapshot: no row, or one of zeros (``by=None``)."""
    columns = _columns(summed)
    zeros = [[0.0] * len(columns)] if by is None else []
    frame = pd.DataFrame(zeros, columns=[*_KEYS[by], *columns])
    return _typed(_shares(frame, summed), by, summed)


def idle_cost_since(
    con: Any,
    starts: Sequence[Any],
    end: Any,
    *,
    params: Params | None = None,
    max_gap: Any = None,
    measures: Sequence[str] | None = None,
) -> list[pd.DataFrame]:
    """:func:`idle_cost` by cluster over ``[start, end)`` for each of ``starts``, in one
    query: one frame per start, each the one ``idle_cost`` gives.

    What a snapshot stands for does not depend on the window (the cap is the store's
    median spacing), so the pod rows are read and summed once and only the clipping is
    done per window (:func:`~ccanalytics.history.queries._accounting.interval_ctes`'s
    ``windows``): :meth:`History.spend`'s day, week and month each read every file.
    ``measures``: as :func:`idle_cost`'s.
    """
    summed = summed_for(measures)
    windows = [window for window in (window_us(con, start, end) for start in starts) if window]
    if not starts or len(windows) < len(starts):  # an open end on a store with no snapshot
        return [_nothing("cluster", summed) for _ in starts]
    judged_by = params if params is not None else Params()
    starts_us, end_us = [start for start, _ in windows], windows[0][1]  # one end for all
    return _per_window(con, starts_us, end_us, judged_by, max_gap, summed)


def _per_window(
    con: Any,
    starts_us: list[int],
    end_us: int,
    params: Params,
    max_gap: Any,
    summed: tuple[Measure, ...],
) -> list[pd.DataFrame]:
    """Per cluster, over ``[start, end_us)`` for each of ``starts_us``: the measures."""
    # The rollups answer only at their own thresholds (history.store._rollup).
    rollup = rolled_days(con) > 0 and rollup_params(params) == rollup_params()
    frame = run(
        con,
        _per_window_sql(one_file_per_instant(con), rollup, summed),
        {
            "starts_us": starts_us,
            "end_us": end_us,
            "max_gap_us": max_gap_us(max_gap),
            **params.sql(),
        },
    )
    frame["unobserved_hours"] = (frame["window_us"] - frame["observed_us"]) / US_PER_HOUR
    frame["observed_hours"] = frame["observed_us"] / US_PER_HOUR
    # Shares and dtypes once for every window, then split: pandas' cost is per call, not
    # per row, and a spend (so each policy check) asks three windows.
    window_ids = frame["window_id"].to_numpy()
    typed = _typed(
        _shares(frame, summed)[[*_KEYS["cluster"], *_columns(summed)]], "cluster", summed
    )
    return [typed[window_ids == number].reset_index(drop=True) for number in range(len(starts_us))]


@lru_cache(maxsize=64)
def _per_window_sql(one_file: bool, rollup: bool, summed: tuple[Measure, ...]) -> str:
    """Per window of ``$starts_us`` (ending at ``$end_us``) and cluster: the measures."""
    return f"""WITH {_instants(one_file, rollup, summed)},
    windows AS (
        SELECT unnest(range(len($starts_us))) AS window_id, unnest($starts_us) AS start_us
    ),{interval_ctes("snap", windows="windows")}
    SELECT window_id, cluster_id, {_measures("covered_us", summed)},
           ($end_us - start_us) AS window_us
    FROM timed WHERE in_window
    GROUP BY window_id, start_us, cluster_id ORDER BY window_id, cluster_id"""


def _shares(frame: pd.DataFrame, summed: tuple[Measure, ...]) -> pd.DataFrame:
    """The registry's shares of the summed columns (<NA> where the denominator is 0)."""
    for m in _shares_of(summed):
        numerator = frame[str(m.numerator)].astype("float64")
        denominator = frame[str(m.denominator)].astype("float64")
        frame[m.name] = numerator / denominator.where(denominator > 0)
    return frame


def _typed(frame: pd.DataFrame, by: str | None, summed: tuple[Measure, ...]) -> pd.DataFrame:
    dtypes = {**_KEYS[by], **dict.fromkeys(_columns(summed), "Float64")}
    frame = frame.astype(dtypes)
    if by == "day":
        frame["day"] = frame["day"].astype("datetime64[ns, UTC]")
    return frame.reset_index(drop=True)


@lru_cache(maxsize=64)
def summed_sql(
    by: str | None, one_file: bool, rollup: bool, summed: tuple[Measure, ...] = _SUMMED
) -> str:
    """Per day or in all: the measures ``summed`` and the cluster-hours of window (per
    cluster: :func:`_per_window_sql`, with one window)."""
    ctes = f"WITH {_instants(one_file, rollup, summed)},{interval_ctes('snap')},"
    ctes += " scope AS (SELECT DISTINCT cluster_id FROM timed WHERE in_window)"
    whole = "($end_us - $start_us)"
    if by is None:  # zero covered time sums to 0, not NULL (a young store is a result)
        return f"""{ctes}
        SELECT {_measures("covered_us", summed, coalesced=True)},
               (SELECT count(*) FROM scope) * {whole} AS window_us
        FROM timed WHERE in_window"""
    day = US_PER_DAY
    return f"""{ctes},
        days AS (
            SELECT unnest(range($start_us // {day}, ($end_us - 1) // {day} + 1)) AS k
            WHERE $end_us > $start_us
        ),
        per_day AS (
            SELECT k, {_measures("piece_us", summed)}
            FROM {split_sql("timed", day)} GROUP BY k
        )
        SELECT days.k,
               coalesce(observed_us, 0) AS observed_us,
               {", ".join(f"coalesce({m.name}, 0) AS {m.name}" for m in summed)},
               (SELECT count(*) FROM scope)
                 * (least($end_us, (days.k + 1) * {day}) - greatest($start_us, days.k * {day}))
                 AS window_us
        FROM days LEFT JOIN per_day USING (k) ORDER BY days.k"""


def pod_rows_ctes() -> str:
    """CTEs down to ``pod_rows``: every pod row in the window with its snapshot's span."""
    return f"""WITH
    {snapshot_instants()},
    {POD_ROWS_ONCE},
    {interval_ctes("snapshot_instants")},
    pod_rows AS (
        SELECT p.*, tm.t, tm.lo, tm.hi, tm.covered_us, tm.raw_us,
               {IDLE} AS idle
        FROM pods_once p JOIN timed tm
          ON p.cluster_id = tm.cluster_id AND epoch_us(p.observed_at) = tm.t
        WHERE tm.in_window
    )"""


def _pod_sums(summed: tuple[Measure, ...]) -> str:
    """The registry's sums per pod: Σ row·Δt over its rows where the measure's rule holds."""
    return ",\n           ".join(
        f"coalesce(sum({value})"
        + (f" FILTER (WHERE {m.where})" if m.where else "")
        + f", 0){after} AS {m.name}"
        for m in summed
        for value, after in [_integral(f"coalesce({m.row}, 0)", "covered_us")]
    )


def _pod_sql(summed: tuple[Measure, ...] = _SUMMED) -> str:
    return f"""{pod_rows_ctes()}
    SELECT cluster_id, pod_id, arg_max(name, t) AS name, arg_max(rank, t) AS rank,
           sum(covered_us) AS observed_us,
           {_pod_sums(summed)},
           sum(raw_us - covered_us) AS unobserved_us,
           coalesce(sum(covered_us) FILTER (WHERE idle), 0) AS idle_us,
           {select_list("pod_share")},
           min(t) AS first_us, max(t) AS last_us,
           string_agg(DISTINCT status, ',' ORDER BY status) AS statuses,
           arg_max(gpu_type, t) AS gpu_type, arg_max(gpu_count, t) AS gpu_count
    FROM pod_rows GROUP BY cluster_id, pod_id ORDER BY cluster_id, pod_id"""


_LIFETIME_DTYPES = {
    **POD_IDENTITY,
    "first_seen": "datetime64[ns, UTC]",
    "last_seen": "datetime64[ns, UTC]",
    "statuses": "string",
    "observed_hours": "Float64",
    "idle_hours": "Float64",
    "idle_time_share": "Float64",
    "total_cost": "Float64",
    "idle_cost": "Float64",
}


#: The sums pod_lifetimes gives.
_LIFETIME_SUMS = ("total_cost", "idle_cost")


def _lifetime_dtypes() -> dict[str, str]:
    """pod_lifetimes' columns: its own, then any further per-pod share (Float64)."""
    more = {m.answer_column: "Float64" for m in of_kind("pod_share")}
    return {**_LIFETIME_DTYPES, **{c: t for c, t in more.items() if c not in _LIFETIME_DTYPES}}


def pod_lifetimes(
    con: Any,
    start: Any,
    end: Any,
    *,
    params: Params | None = None,
    max_gap: Any = None,
) -> pd.DataFrame:
    """Per pod seen in ``[start, end)``: when, in which states, what it cost, how idle.

    Columns: ``cluster_id, pod_id, name, rank, gpu_type, gpu_count`` (as last seen),
    ``first_seen``/``last_seen`` (its first and last snapshot counted in the window,
    UTC), ``statuses`` (every status seen, sorted, comma-joined), ``observed_hours``,
    ``idle_hours`` and ``idle_time_share`` (idle hours over observed hours, 0-1; <NA>
    with none observed; the column was ``idle_share``), ``total_cost`` (Σ cost·Δt, USD: what the pod cost in this window) and
    ``idle_cost`` (USD). Most expensive idle pods first.
    """
    judged_by = params if params is not None else Params()
    window = window_us(con, start, end)
    dtypes = _lifetime_dtypes()
    if window is None:
        return pd.DataFrame(columns=list(dtypes)).astype(dtypes)
    params_sql = {
        "start_us": window[0],
        "end_us": window[1],
        "max_gap_us": max_gap_us(max_gap),
        **judged_by.sql(),
    }
    frame = run(con, _pod_sql(summed_for(_LIFETIME_SUMS)), params_sql)
    frame["observed_hours"] = frame["observed_us"] / US_PER_HOUR
    frame["idle_hours"] = frame["idle_us"] / US_PER_HOUR
    frame["first_seen"] = pd.to_datetime(frame["first_us"], unit="us", utc=True)
    frame["last_seen"] = pd.to_datetime(frame["last_us"], unit="us", utc=True)
    out = frame[list(dtypes)].astype(dtypes)
    return out.sort_values(
        ["idle_cost", "total_cost", "cluster_id", "pod_id"], ascending=[False, False, True, True]
    ).reset_index(drop=True)

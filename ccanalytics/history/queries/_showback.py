"""Showback: what each pod cost per UTC hour (or day), and whose it was.

One row per pod per period (a UTC hour or day) in which the pod was observed. The cost is
the store's one rule of time, the very SQL :meth:`History.idle_cost` runs
(:func:`~ccanalytics.history.queries._queries.pod_rows_ctes`: each snapshot stands for the
time until its cluster's next one, capped, clipped to the window), with each pod row's
span cut at the period boundaries (:func:`~ccanalytics.history.queries._accounting.split_sql`):
Σ cost·Δt over the pieces in the period. Nothing is rounded, so the rows of any grouping
sum to the store's other answers: all rows to ``idle_cost(by=None).total_cost`` over the
same window, a cluster's rows to its ``total_cost``, the rows from a period's start to
now to :meth:`History.spend`'s ``spent``.

Each row's period is clipped to the window: a window that starts at 10:15 gives a first
row from 10:15 to 11:00 (``period_start``/``period_end``), never a whole hour it did not
cover.

Each row carries what every waste class of the registry cost in it
(:func:`ccanalytics.measures.waste_classes`), from the very per-snapshot classification
:meth:`History.waste` runs (:func:`~ccanalytics.history.queries._waste.waste_rows_ctes`),
by the same Σ row·Δt over the row's pieces: per pod and per cluster the rows sum to
``History.waste`` over the window. The row's one ``waste_class`` is :func:`waste_class`.

The team of a pod comes from a team mapping (:mod:`~ccanalytics.history.queries._teams`):
the first rule whose cluster and pod-name globs match, else ``"unallocated"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from typing import Any, Final, Literal

import pandas as pd

from ccanalytics.history.queries._accounting import (
    JUDGED,
    US_PER_DAY,
    US_PER_HOUR,
    integral_sql,
    max_gap_us,
    run,
    split_sql,
    window_us,
)
from ccanalytics.history.queries._queries import UTIL_WEIGHT
from ccanalytics.history.queries._teams import UNALLOCATED, Teams, load_teams
from ccanalytics.history.queries._waste import class_sums, waste_cost, waste_rows_ctes
from ccanalytics.measures import Params, by_name, waste_classes

__all__ = [
    "NO_WASTE",
    "SHOWBACK_COLUMNS",
    "UNJUDGED",
    "Granularity",
    "resolve_teams",
    "showback",
    "waste_class",
]

Granularity = Literal["hour", "day"]
_WIDTH: Final[Mapping[str, int]] = {"hour": US_PER_HOUR, "day": US_PER_DAY}
_CLASSES: Final = waste_classes()
#: A row's waste class, named by its measure without "_cost": "idle_empty", ...
_CLASS_OF: Final[Mapping[str, str]] = {m.name: m.name.removesuffix("_cost") for m in _CLASSES}
#: The waste class of a row that wasted nothing and was judged some of the period.
NO_WASTE: Final = "none"
#: The waste class of a row never judged in the period: never running and reporting
#: utilization (a CPU pod, one starting, stopped, or without metrics).
UNJUDGED: Final = "unjudged"

#: Columns of :meth:`History.showback`: name -> meaning and unit.
SHOWBACK_COLUMNS: Final[Mapping[str, str]] = {
    "period_start": "UTC start of the charge period: the hour or day, clipped to the window",
    "period_end": "UTC end of the charge period (exclusive), clipped to the window",
    "cluster_id": "the cluster",
    "pod_id": "the pod",
    "name": "the pod's name, as last seen in the period",
    "rank": "the pod's rank, as last seen in the period",
    "team": "the team of the first mapping rule that matches the pod, else 'unallocated'",
    "gpu_type": "GPU type, as last seen in the period",
    "gpu_count": "GPUs, as last seen in the period",
    "observed_hours": "hours of the period the pod's snapshots cover",
    "cost": "USD: Σ cost·Δt over the period (the store's one rule of time; unrounded)",
    "idle_cost": "USD of that cost while the pod was idle (the idle rule, idle_threshold): "
    "idle_empty_cost + idle_loaded_cost",
    "unused_cost": "USD: Σ cost·(1 − gpu_util_mean/100)·Δt while running and reporting",
    "idle_hours": "hours of the period the pod was idle",
    "gpu_util_mean": "percent: mean GPU utilization over the period (time- and GPU-weighted); "
    "<NA> when it reported none",
    **{m.name: f"USD: {m.meaning} (History.waste's)" for m in _CLASSES},
    "waste_cost": "USD: the sum of the classes (a pod-snapshot is in one class at most)",
    "waste_class": "the class holding the most of the row's waste USD, without '_cost' ("
    + ", ".join(repr(name) for name in _CLASS_OF.values())
    + "; a tie goes to the first in that order); 'none' when the row wasted nothing, "
    "'unjudged' when the pod was never running and reporting utilization in the period",
}

_DTYPES: Final[Mapping[str, str]] = {
    "period_start": "datetime64[ns, UTC]",
    "period_end": "datetime64[ns, UTC]",
    "cluster_id": "string",
    "pod_id": "string",
    "name": "string",
    "rank": "Int64",
    "team": "string",
    "gpu_type": "string",
    "gpu_count": "Int64",
    "observed_hours": "Float64",
    "cost": "Float64",
    "idle_cost": "Float64",
    "unused_cost": "Float64",
    "idle_hours": "Float64",
    "gpu_util_mean": "Float64",
    **dict.fromkeys((m.name for m in _CLASSES), "Float64"),
    "waste_cost": "Float64",
    "waste_class": "string",
}


def _sum(measure: str) -> str:
    """The registry's measure as Σ row·Δt over the pieces (USD), 0 when none."""
    return integral_sql(by_name(measure), "piece_us")


def _showback_sql(width: int) -> str:
    weight = f"{UTIL_WEIGHT} * piece_us"
    return f"""{waste_rows_ctes()},
    pieces AS (SELECT * FROM {split_sql("pod_waste", width)}),
    per_period AS (
        SELECT cluster_id, pod_id, k,
               arg_max(name, t) AS name, arg_max(rank, t) AS rank,
               arg_max(gpu_type, t) AS gpu_type, arg_max(gpu_count, t) AS gpu_count,
               sum(piece_us) AS observed_us,
               {_sum("total_cost")} AS cost,
               {_sum("idle_cost")} AS idle_cost,
               {_sum("unused_cost")} AS unused_cost,
               {class_sums("piece_us")},
               coalesce(sum(piece_us) FILTER (WHERE idle), 0) AS idle_us,
               coalesce(sum(piece_us) FILTER (WHERE idle OR {JUDGED}), 0) AS judged_us,
               sum(gpu_util_mean * {weight}) FILTER (WHERE {JUDGED})
                 / nullif(sum({weight}) FILTER (WHERE {JUDGED}), 0) AS gpu_util_mean
        FROM pieces GROUP BY cluster_id, pod_id, k
    )
    SELECT *,
           greatest(k * {width}, $start_us) AS start_us,
           least((k + 1) * {width}, $end_us) AS end_us
    FROM per_period ORDER BY k, cluster_id, pod_id"""


_SQL: Final = {by: _showback_sql(width) for by, width in _WIDTH.items()}


def resolve_teams(teams: Teams | str | PathLike[str] | None) -> Teams | None:
    """``teams`` as a parsed mapping: a :class:`Teams`, a path to read, or ``None``."""
    if teams is None or isinstance(teams, Teams):
        return teams
    return load_teams(teams)


def showback(
    con: Any,
    start: Any,
    end: Any,
    *,
    by: Granularity = "hour",
    teams: Teams | None = None,
    params: Params | None = None,
    max_gap: Any = None,
) -> pd.DataFrame:
    """One row per pod per UTC ``by`` period of ``[start, end)``: :data:`SHOWBACK_COLUMNS`."""
    if by not in _WIDTH:
        raise ValueError(f"by must be 'hour' or 'day', not {by!r}")
    window = window_us(con, start, end)
    if window is None or window[0] == window[1]:
        return _typed(pd.DataFrame(columns=list(_DTYPES)))
    judged_by = params if params is not None else Params()
    frame = run(
        con,
        _SQL[by],
        {
            "start_us": window[0],
            "end_us": window[1],
            "max_gap_us": max_gap_us(max_gap),
            **judged_by.sql(),
        },
    )
    frame["period_start"] = pd.to_datetime(frame["start_us"], unit="us", utc=True)
    frame["period_end"] = pd.to_datetime(frame["end_us"], unit="us", utc=True)
    frame["observed_hours"] = frame["observed_us"] / US_PER_HOUR
    frame["idle_hours"] = frame["idle_us"] / US_PER_HOUR
    frame["waste_cost"] = waste_cost(frame)
    frame["waste_class"] = waste_class(frame)
    frame["team"] = _teams_of(frame, teams)
    return _typed(frame)


def waste_class(rows: pd.DataFrame) -> pd.Series:
    """Each row's one waste class: the rule of ``SHOWBACK_COLUMNS["waste_class"]``.

    The class holding the most of the row's waste USD (its class columns; a tie goes to
    the first in the registry's order, the order a pod-snapshot is assigned in),
    :data:`NO_WASTE` when it wasted nothing, :data:`UNJUDGED` when it had no judged time
    (``judged_us`` 0). By USD, not time, because money is what a showback charges: a pod
    idle for 10 minutes of an hour and at 20 % for the other 50 wasted 1/6 of its hour's
    cost idle and 2/3 as low compute, so its row is low compute.
    """
    wasted = rows["waste_cost"] > 0
    most = rows[list(_CLASS_OF)].astype("float64").idxmax(axis=1).map(_CLASS_OF)
    named = pd.Series(most, index=rows.index, dtype="string").where(wasted, NO_WASTE)
    return named.where(wasted | (rows["judged_us"] > 0), UNJUDGED)


def _teams_of(frame: pd.DataFrame, teams: Teams | None) -> pd.Series:
    """Each row's team: matched once per distinct (cluster, pod name or id)."""
    if teams is None or frame.empty:
        return pd.Series(UNALLOCATED, index=frame.index, dtype="string")
    pod = frame["name"].astype("string").fillna(frame["pod_id"].astype("string")).fillna("")
    keys = pd.MultiIndex.from_arrays([frame["cluster_id"].astype("string").fillna(""), pod])
    found = {key: teams.team_of(str(key[0]), str(key[1])) for key in keys.unique()}
    return pd.Series([found[key] for key in keys], index=frame.index, dtype="string")


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame[list(_DTYPES)].astype(dict(_DTYPES))
    return out.reset_index(drop=True)

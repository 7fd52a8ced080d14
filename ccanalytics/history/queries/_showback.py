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
    max_gap_us,
    run,
    split_sql,
    window_us,
)
from ccanalytics.history.queries._queries import UTIL_WEIGHT, pod_rows_ctes
from ccanalytics.history.queries._teams import UNALLOCATED, Teams, load_teams
from ccanalytics.measures import Params, by_name

__all__ = [
    "SHOWBACK_COLUMNS",
    "WASTE_CLASSES",
    "WASTE_CLASS_SQL",
    "Granularity",
    "resolve_teams",
    "showback",
]

Granularity = Literal["hour", "day"]
_WIDTH: Final[Mapping[str, int]] = {"hour": US_PER_HOUR, "day": US_PER_DAY}

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
    "idle_cost": "USD of that cost while the pod was idle (the idle rule, idle_threshold)",
    "unused_cost": "USD: Σ cost·(1 − gpu_util_mean/100)·Δt while running and reporting",
    "idle_hours": "hours of the period the pod was idle",
    "gpu_util_mean": "percent: mean GPU utilization over the period (time- and GPU-weighted); "
    "<NA> when it reported none",
    "waste_class": "'idle', 'busy' or 'unjudged' (see WASTE_CLASS_SQL)",
}

#: The waste classes a showback row can have (FOCUS ``x_WasteClass``).
WASTE_CLASSES: Final = ("idle", "busy", "unjudged")

#: The one place a showback row's waste class is decided, over the period's ``idle_us``
#: (time the pod was idle: :data:`ccanalytics.measures.rules.IDLE_SQL`) and ``judged_us``
#: (time it was running and reporting, so judged busy or idle): ``'unjudged'`` with no
#: judged time (starting, stopped, no metrics), ``'idle'`` when idle at least half of its
#: judged time, else ``'busy'``. To classify by finer kinds of waste, replace this
#: expression (and :data:`WASTE_CLASSES`) with the registry's waste-class measure: the
#: showback frame and the FOCUS export both read the column it makes.
WASTE_CLASS_SQL: Final = (
    "CASE WHEN judged_us = 0 THEN 'unjudged' "
    "WHEN 2 * idle_us >= judged_us THEN 'idle' ELSE 'busy' END"
)

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
    "waste_class": "string",
}


def _sum(measure: str) -> str:
    """The registry's measure as Σ row·Δt over the pieces (USD), 0 when none."""
    m = by_name(measure)
    where = f" FILTER (WHERE {m.where})" if m.where else ""
    return f"coalesce(sum(coalesce({m.row}, 0) * piece_us){where}, 0) / {US_PER_HOUR}"


def _showback_sql(width: int) -> str:
    weight = f"{UTIL_WEIGHT} * piece_us"
    return f"""{pod_rows_ctes()},
    pieces AS (SELECT * FROM {split_sql("pod_rows", width)}),
    per_period AS (
        SELECT cluster_id, pod_id, k,
               arg_max(name, t) AS name, arg_max(rank, t) AS rank,
               arg_max(gpu_type, t) AS gpu_type, arg_max(gpu_count, t) AS gpu_count,
               sum(piece_us) AS observed_us,
               {_sum("total_cost")} AS cost,
               {_sum("idle_cost")} AS idle_cost,
               {_sum("unused_cost")} AS unused_cost,
               coalesce(sum(piece_us) FILTER (WHERE idle), 0) AS idle_us,
               coalesce(sum(piece_us) FILTER (WHERE idle OR {JUDGED}), 0) AS judged_us,
               sum(gpu_util_mean * {weight}) FILTER (WHERE {JUDGED})
                 / nullif(sum({weight}) FILTER (WHERE {JUDGED}), 0) AS gpu_util_mean
        FROM pieces GROUP BY cluster_id, pod_id, k
    )
    SELECT *,
           greatest(k * {width}, $start_us) AS start_us,
           least((k + 1) * {width}, $end_us) AS end_us,
           {WASTE_CLASS_SQL} AS waste_class
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
    frame["team"] = _teams_of(frame, teams)
    return _typed(frame)


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

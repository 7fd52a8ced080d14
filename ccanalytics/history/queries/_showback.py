"""Showback: what each pod cost per UTC hour (or day), and whose it was.

One row per pod per period (a UTC hour or day) in which the pod was observed: a view of
:func:`~ccanalytics.history.queries._measures.measures` (what :meth:`History.measures`
runs) split by ``pod`` and ``hour`` or ``day``, renamed. Its figures are the registry's
sums over pod rows (:data:`ccanalytics.measures.MEASURES`): ``total_cost`` as ``cost``,
``idle_cost``, ``unused_cost``, ``idle_pod_hours`` as ``idle_hours``, each waste class,
and the share ``gpu_utilization`` in percent as ``gpu_util_mean``; ``judged_pod_hours``
decides ``'unjudged'``. Each is Σ row·Δt by the store's one rule of time (each snapshot
stands for the time until its cluster's next one, capped, clipped to the window), each
pod row's span cut at the period boundaries. Nothing is rounded, so the rows of any
grouping sum to the store's other answers: all rows to ``idle_cost(by=None).total_cost``
over the same window, a cluster's rows to its ``total_cost`` and to ``History.waste``,
the rows from a period's start to now to :meth:`History.spend`'s ``spent``.

What showback adds to the measures: each row's period clipped to the window (a window
that starts at 10:15 gives a first row from 10:15 to 11:00, ``period_start`` /
``period_end``, never a whole hour it did not cover), ``waste_cost`` (the classes' sum),
the row's one ``waste_class`` (:func:`waste_class`), and the pod's team from a team mapping
(:mod:`~ccanalytics.history.queries._teams`): the first rule whose cluster and pod-name
globs match the pod's name as last seen in the period, else ``"unallocated"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from typing import Any, Final, Literal

import pandas as pd

from ccanalytics.history.queries._accounting import US_PER_DAY, US_PER_HOUR, window_us
from ccanalytics.history.queries._measures import measures, resolve
from ccanalytics.history.queries._teams import UNALLOCATED, Teams, load_teams
from ccanalytics.measures import Params, dimensions, waste_classes

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
    "observed_hours": "hours of the period the pod's snapshots cover (History.measures' pod_hours)",
    "cost": "USD: Σ cost·Δt over the period (the store's one rule of time; unrounded; the "
    "registry's total_cost)",
    "idle_cost": "USD of that cost while the pod was idle (the idle rule, idle_threshold): "
    "idle_empty_cost + idle_loaded_cost (the registry's idle_cost)",
    "unused_cost": "USD: Σ cost·(1 − gpu_util_mean/100)·Δt while running and reporting (the "
    "registry's unused_cost)",
    "idle_hours": "hours of the period the pod was idle (the registry's idle_pod_hours)",
    "gpu_util_mean": "percent: mean GPU utilization over the period (time- and GPU-weighted: "
    "the registry's gpu_utilization x 100); <NA> when it reported none",
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


#: What each row asks :func:`~ccanalytics.history.queries._measures.measures` for, by the
#: showback column it becomes (the others keep the measure's name).
_ASKED: Final[Mapping[str, str]] = {
    "cost": "total_cost",
    "idle_cost": "idle_cost",
    "unused_cost": "unused_cost",
    "idle_hours": "idle_pod_hours",
    "judged_hours": "judged_pod_hours",
    "gpu_utilization": "gpu_utilization",
    **{m.name: m.name for m in _CLASSES},
    "waste_cost": "waste_cost",
}
_CHOSEN: Final = resolve(list(_ASKED.values()))
_SPLIT: Final = {by: dimensions(["pod", by]) for by in _WIDTH}


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
    frame = measures(con, start, end, chosen=_CHOSEN, by=_SPLIT[by], params=params, max_gap=max_gap)
    frame = frame.rename(columns={m: c for c, m in _ASKED.items()})
    width = pd.Timedelta(microseconds=_WIDTH[by])
    first, last = (pd.Timestamp(us * 1000, tz="UTC") for us in window)
    opens, closes = frame[by], frame[by] + width
    frame["period_start"] = opens.where(opens > first, first)
    frame["period_end"] = closes.where(closes < last, last)
    frame["observed_hours"] = frame["pod_hours"]
    # Percent, as the pods' own gpu_util_mean: the share of the GPU-hours reporting used.
    frame["gpu_util_mean"] = frame["gpu_utilization"] * 100
    frame["waste_class"] = waste_class(frame)
    frame["team"] = _teams_of(frame, teams)
    frame = frame.sort_values(["period_start", "cluster_id", "pod_id"], kind="stable")
    return _typed(frame)


def waste_class(rows: pd.DataFrame) -> pd.Series:
    """Each row's one waste class: the rule of ``SHOWBACK_COLUMNS["waste_class"]``.

    The class holding the most of the row's waste USD (its class columns; a tie goes to
    the first in the registry's order, the order a pod-snapshot is assigned in),
    :data:`NO_WASTE` when it wasted nothing, :data:`UNJUDGED` when it had no judged time
    (``judged_hours``, the registry's ``judged_pod_hours``, 0). By USD, not time, because
    money is what a showback charges: a pod idle for 10 minutes of an hour and at 20 %
    for the other 50 wasted 1/6 of its hour's cost idle and 2/3 as low compute, so its
    row is low compute.
    """
    wasted = rows["waste_cost"] > 0
    most = rows[list(_CLASS_OF)].astype("float64").idxmax(axis=1).map(_CLASS_OF)
    named = pd.Series(most, index=rows.index, dtype="string").where(wasted, NO_WASTE)
    return named.where(wasted | (rows["judged_hours"] > 0), UNJUDGED)


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

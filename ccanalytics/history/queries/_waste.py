"""Waste by class over a window: the registry's waste classes, in DuckDB SQL over the store.

Each pod row in the window (read once per snapshot instant, with the span of time its
snapshot stands for: :mod:`~ccanalytics.history.queries._accounting`) gets what the
classes read (:func:`ccanalytics.measures.rules.waste_ctes`): its GPUs below the idle line
from the ``gpus`` table of the same snapshot, and the straggler rule's deficit in that
snapshot. Each class is then Σ row·Δt over the rows its rule assigns to it, USD: the
live summary's USD/h (:func:`ccanalytics.analysis.cluster_summary`) integrated over time.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ccanalytics.frames import POD_COLUMNS
from ccanalytics.history.queries._accounting import (
    SCALED_HOUR,
    US_PER_HOUR,
    max_gap_us,
    run,
    us_scaled,
    window_us,
)
from ccanalytics.history.queries._queries import pod_rows_ctes
from ccanalytics.measures import Params, waste_classes
from ccanalytics.measures.rules import straggler_ctes, waste_ctes

__all__ = ["WASTE_COLUMNS", "class_sums", "waste", "waste_cost", "waste_rows_ctes"]

_CLASSES = waste_classes()
#: The measures of :func:`waste`, after its ``by`` column(s): name -> meaning and unit.
#: ``pod_hours`` is not ``observed_hours``, which is cluster-hours in
#: :meth:`History.idle_cost` (a pod's own hours with ``by="pod"``).
WASTE_COLUMNS: dict[str, str] = {
    "pod_hours": "pod-hours seen: Σ Δt over the pod-snapshots (two pods for an hour: 2)",
    "total_cost": "USD: Σ cost·Δt (History.idle_cost's total_cost)",
    **{m.name: f"USD: {m.meaning}" for m in _CLASSES},
    "waste_cost": "USD: the sum of the classes (a pod-snapshot is in one class at most)",
    "waste_share": "waste_cost / total_cost, 0-1 (<NA> over no cost)",
}
#: Each ``by``'s key columns, in the pods frame's own dtypes (frames.POD_COLUMNS).
_KEYS: dict[str | None, dict[str, str]] = {
    by: {name: POD_COLUMNS[name].dtype for name in names}
    for by, names in (
        ("cluster", ("cluster_id",)),
        ("pod", ("cluster_id", "pod_id", "name", "rank", "gpu_type", "gpu_count")),
        (None, ()),
    )
}
_SNAPSHOT_POD = "cluster_id, observed_at, pod_id"
#: The GPU rows of the window's snapshots only (the gpus view holds the whole store).
_GPUS_IN_WINDOW = """(
        SELECT cluster_id, observed_at, pod_id, gpu_index, util FROM gpus
        WHERE observed_at >= make_timestamptz((SELECT min(t) FROM pod_rows))
          AND observed_at <= make_timestamptz((SELECT max(t) FROM pod_rows))
    )"""


def waste_rows_ctes() -> str:
    """CTEs down to ``pod_waste``: every pod row in the window with what the classes read.

    ``pod_rows`` (:func:`~ccanalytics.history.queries._queries.pod_rows_ctes`: the
    snapshot's span ``lo``/``hi``/``covered_us``) plus ``idle_gpus`` and
    ``straggler_deficit`` (:func:`ccanalytics.measures.rules.waste_ctes`). Every answer
    by waste class reads its rows here (:func:`waste`, :meth:`History.showback`).
    """
    return f"""{pod_rows_ctes()},
    {straggler_ctes("pod_rows", "cluster_id, observed_at", ", pod_id")},
    {waste_ctes("pod_rows", _GPUS_IN_WINDOW, _SNAPSHOT_POD, _SNAPSHOT_POD)}"""


def class_sums(span: str) -> str:
    """Each waste class's USD as a select list: Σ row·``span`` over the rows its rule
    assigns to it (``span``: a column of microseconds), ``AS`` the class's name."""
    return ",\n           ".join(
        f"coalesce(sum(coalesce({m.row}, 0) * {us_scaled(span)}) FILTER (WHERE {m.where}), 0)"
        f" / {SCALED_HOUR} AS {m.name}"
        for m in _CLASSES
    )


def waste_cost(frame: pd.DataFrame) -> pd.Series:
    """The waste of each row of ``frame``: the sum of its class columns (one class per
    pod-snapshot, so nothing is counted twice)."""
    return sum((frame[m.name] for m in _CLASSES), pd.Series(0.0, index=frame.index))


def _waste_sql(by: str | None) -> str:
    if by == "pod":
        keys = "cluster_id, pod_id"
        extra = (
            "arg_max(name, t) AS name, arg_max(rank, t) AS rank, "
            "arg_max(gpu_type, t) AS gpu_type, arg_max(gpu_count, t) AS gpu_count, "
        )
    else:
        keys = "cluster_id" if by == "cluster" else ""
        extra = ""
    group = f" GROUP BY {keys} ORDER BY {keys}" if keys else ""
    select = f"{keys}, " if keys else ""
    return f"""{waste_rows_ctes()}
    SELECT {select}{extra}
           coalesce(sum(covered_us), 0) AS observed_us,
           coalesce(sum(coalesce(cost, 0) * {us_scaled("covered_us")}), 0) / {SCALED_HOUR}
             AS total_cost,
           {class_sums("covered_us")}
    FROM pod_waste{group}"""


_SQL = {by: _waste_sql(by) for by in _KEYS}


def waste(
    con: Any,
    start: Any,
    end: Any,
    *,
    by: str | None = "cluster",
    params: Params | None = None,
    max_gap: Any = None,
) -> pd.DataFrame:
    """What each waste class cost over ``[start, end)``, per ``by`` value, USD.

    ``by``: ``"cluster"``, ``"pod"`` (with ``name, rank, gpu_type, gpu_count`` as last
    seen) or ``None`` (one row). Columns: the ``by`` column(s), ``pod_hours``
    (pod-hours seen, not idle_cost's cluster-hours), ``total_cost`` (Σ cost·Δt, USD: idle_cost's), one column per class
    (:func:`ccanalytics.measures.waste_classes`: ``idle_empty_cost``,
    ``idle_loaded_cost``, ``straggler_cost``, ``idle_gpus_cost``, ``low_compute_cost``),
    ``waste_cost`` (their sum: a pod row is in one class at most, so nothing is counted
    twice) and ``waste_share`` (waste over total cost, 0-1; <NA> over no cost).
    """
    if by not in _KEYS:
        raise ValueError(f"by must be one of 'cluster', 'pod' or None, not {by!r}")
    judged_by = params if params is not None else Params()
    window = window_us(con, start, end)
    if window is None:
        frame = pd.DataFrame(columns=[*_KEYS[by], "observed_us", "total_cost"])
        if by is None:
            frame = pd.DataFrame([{"observed_us": 0, "total_cost": 0.0}])
        for m in _CLASSES:
            frame[m.name] = 0.0
    else:
        sql_params = {
            "start_us": window[0],
            "end_us": window[1],
            "max_gap_us": max_gap_us(max_gap),
            **judged_by.sql(),
        }
        frame = run(con, _SQL[by], sql_params)
    frame["pod_hours"] = frame["observed_us"] / US_PER_HOUR
    frame["waste_cost"] = waste_cost(frame)
    total = frame["total_cost"].astype("float64")
    frame["waste_share"] = frame["waste_cost"].astype("float64") / total.where(total > 0)
    dtypes = {**_KEYS[by], **dict.fromkeys(WASTE_COLUMNS, "Float64")}
    return frame[list(dtypes)].astype(dtypes).reset_index(drop=True)

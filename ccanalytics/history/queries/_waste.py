"""Waste by class over a window: the registry's waste classes, in DuckDB SQL over the store.

Each pod row in the window (read once per snapshot instant, with the span of time its
snapshot stands for: :mod:`~ccanalytics.history.queries._accounting`) gets what the
classes read (:func:`ccanalytics.measures.rules.waste_ctes`): its GPUs below the idle line
from the ``gpus`` table of the same snapshot, and the straggler rule's deficit in that
snapshot. Each class is then Σ row·Δt over the rows its rule assigns to it, USD: the
live summary's USD/h (:func:`ccanalytics.analysis.cluster_summary`) integrated over time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccanalytics.history.queries._accounting import integral_sql
from ccanalytics.history.queries._queries import pod_rows_ctes
from ccanalytics.measures import columns_of, dimensions, waste_classes
from ccanalytics.measures.rules import straggler_ctes, waste_ctes

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "WASTE_COLUMNS",
    "WASTE_KEYS",
    "WASTE_MEASURES",
    "class_sums",
    "waste_rows_ctes",
    "with_waste",
]

_CLASSES = waste_classes()
#: The measures of :meth:`History.waste`, after its ``by`` column(s): name -> meaning
#: and unit. ``pod_hours`` is not ``observed_hours``, which is cluster-hours in
#: :meth:`History.idle_cost` (a pod's own hours with ``by="pod"``).
WASTE_COLUMNS: dict[str, str] = {
    "pod_hours": "pod-hours seen: Σ Δt over the pod-snapshots (two pods for an hour: 2)",
    "total_cost": "USD: Σ cost·Δt (History.idle_cost's total_cost)",
    **{m.name: f"USD: {m.meaning}" for m in _CLASSES},
    "waste_cost": "USD: the sum of the classes (a pod-snapshot is in one class at most)",
    "waste_share": "waste_cost / total_cost, 0-1 (<NA> over no cost)",
}
#: What :meth:`History.waste` asks :meth:`History.measures` for: the cost, each class,
#: their sum and its share of the cost (the registry's ``waste_cost``, ``waste_share``).
WASTE_MEASURES = ("total_cost", *(m.name for m in _CLASSES), "waste_cost", "waste_share")
#: The key columns of :meth:`History.waste` per ``by``: the dimensions' own.
WASTE_KEYS: dict[str | None, tuple[str, ...]] = {
    by: tuple(columns_of(dimensions(by))) for by in ("cluster", "pod", None)
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
    return ",\n           ".join(f"{integral_sql(m, span)} AS {m.name}" for m in _CLASSES)


def with_waste(frame: pd.DataFrame, keys: tuple[str, ...]) -> pd.DataFrame:
    """:meth:`History.waste`'s frame from :meth:`History.measures`' answer: its columns
    in :data:`WASTE_COLUMNS`' order, typed."""
    dtypes = {key: str(frame[key].dtype) for key in keys}
    dtypes |= dict.fromkeys(WASTE_COLUMNS, "Float64")
    return frame[list(dtypes)].astype(dtypes).reset_index(drop=True)

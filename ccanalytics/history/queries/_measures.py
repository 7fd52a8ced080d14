"""Any sum of the registry, split by any declared dimensions, over a window of the store.

The pod rows of the window (:func:`~ccanalytics.history.queries._waste.waste_rows_ctes`:
each row with the span its snapshot stands for, the idle flag, its idle GPUs and the
straggler rule's deficit, so every "sum" and "waste" measure can be read off it) are
grouped by the dimensions' keys (:data:`ccanalytics.measures._dimensions.DIMENSIONS`);
a time dimension cuts each span at its buckets' edges first. Each measure is then
Σ row·Δt over the rows its rule holds for, and a share is its two sums' quotient, taken
after every grouping (a team's share is of the team's sums, never a mean of shares).

``pod_hours`` is the time the rows of a group stand for (two pods for an hour: 2), not
``observed_hours``, which is cluster-hours in :meth:`History.idle_cost`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ccanalytics.errors import ArgumentsError
from ccanalytics.history.queries._accounting import (
    US_PER_HOUR,
    integral_sql,
    max_gap_us,
    run,
    split_sql,
    window_us,
)
from ccanalytics.history.queries._teams import UNALLOCATED
from ccanalytics.history.queries._waste import waste_rows_ctes
from ccanalytics.measures import KIND_RELATIONS, Params, by_name, columns_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ccanalytics.history.queries._teams import Teams
    from ccanalytics.measures import Dimension, Measure

__all__ = ["COUNTED", "SUMMABLE", "counts_only", "measures", "resolve", "statement"]

#: The kinds of measure an answer split by any dimensions holds: sums over pod rows
#: (the waste classes are sums too) and shares of two of them.
SUMMABLE = ("sum", "waste", "share")
#: Counts of rows of their own source (stragglers): per cluster or over the fleet.
COUNTED = ("count",)
#: The dimensions a count is split by (its rows are per cluster and rank).
COUNT_DIMENSIONS = ("cluster",)
#: The hidden key a team is matched on: the pod's name, else its id (showback's rule).
_POD_NAME = "_pod_name"


def resolve(names: str | Sequence[str]) -> tuple[Measure, ...]:
    """The registry's measures ``names`` names, each once, in the order given.

    A name the registry does not know is a ValueError naming the known ones; a measure
    that is not a sum or a share (stragglers, spend, ...) is one naming its own method.
    """
    chosen: list[Measure] = []
    for name in [names] if isinstance(names, str) else list(names):
        try:
            measure = by_name(name)
        except KeyError as err:
            raise ValueError(str(err.args[0])) from None
        if measure.kind not in (*SUMMABLE, *COUNTED):
            raise ValueError(
                f"{name!r} is a {measure.kind} measure, not a sum over pod rows: "
                f"History.{KIND_RELATIONS[measure.kind].query} answers it"
            )
        if measure not in chosen:
            chosen.append(measure)
    if not chosen:
        raise ValueError("names= names no measure")
    counts = [m.name for m in chosen if m.kind in COUNTED]
    if counts and len(counts) < len(chosen):
        raise ValueError(
            f"{', '.join(counts)} counts ranks, not pod rows: ask it apart from the sums"
        )
    return tuple(chosen)


def counts_only(chosen: Sequence[Measure], by: Sequence[Dimension]) -> bool:
    """Whether ``chosen`` are counts (then ``by`` must be the cluster or nothing)."""
    if not any(m.kind in COUNTED for m in chosen):
        return False
    if any(d.name not in COUNT_DIMENSIONS for d in by):
        names = ", ".join(m.name for m in chosen)
        raise ValueError(f"{names} is counted per cluster or over the fleet (by='cluster' or None)")
    return True


def measures(
    con: Any,
    start: Any,
    end: Any,
    *,
    chosen: tuple[Measure, ...],
    by: tuple[Dimension, ...],
    params: Params | None = None,
    max_gap: Any = None,
    teams: Teams | None = None,
) -> pd.DataFrame:
    """The ``chosen`` measures over ``[start, end)`` per value of the ``by`` dimensions.

    Columns: the dimensions' (:func:`~ccanalytics.measures._dimensions.columns_of`),
    ``pod_hours``, then each measure (Float64). No split (``by=()``):
    one row, zeros over a window with no time.
    """
    if any(d.needs == "teams" for d in by) and teams is None:
        raise ArgumentsError("{by} 'team' needs a team mapping: {teams}", "by", "teams")
    judged_by = params if params is not None else Params()
    summed = _summed(chosen)
    window = window_us(con, start, end)
    if window is None:
        frame = _nothing(by, summed)
    else:
        sql_params = {
            "start_us": window[0],
            "end_us": window[1],
            "max_gap_us": max_gap_us(max_gap),
            **judged_by.sql(),
        }
        frame = run(con, _sql(summed, by), sql_params)
    frame = _grouped(_timed(frame, by), by, summed, teams)
    for m in chosen:
        if m.kind == "share":
            denominator = frame[str(m.denominator)].astype("float64")
            numerator = frame[str(m.numerator)].astype("float64")
            frame[m.name] = numerator / denominator.where(denominator > 0)
    keys = columns_of(by)
    dtypes = {
        **keys,
        "pod_hours": "Float64",
        **dict.fromkeys((m.name for m in chosen), "Float64"),
    }
    frame["pod_hours"] = frame["observed_us"] / US_PER_HOUR
    out = frame[list(dtypes)].astype(dtypes)
    return out.sort_values(list(keys)).reset_index(drop=True) if keys else out


def statement(chosen: tuple[Measure, ...], by: tuple[Dimension, ...]) -> str:
    """The DuckDB SQL :func:`measures` runs for ``chosen`` split ``by`` (its parameters
    unbound): what ``ccanalytics measures sql`` prints."""
    return _sql(_summed(chosen), by)


def _summed(chosen: tuple[Measure, ...]) -> tuple[Measure, ...]:
    """The sums the answer needs: the chosen ones and each share's two, each once."""
    needed: list[Measure] = []
    for m in chosen:
        parts = (
            (by_name(str(m.numerator)), by_name(str(m.denominator))) if m.kind == "share" else (m,)
        )
        needed += [part for part in parts if part not in needed]
    return tuple(needed)


def _group_keys(by: tuple[Dimension, ...]) -> list[str]:
    keys: list[str] = []
    for dimension in by:
        keys += [key for key in dimension.keys if key not in keys]
    return keys


def _sql(summed: tuple[Measure, ...], by: tuple[Dimension, ...]) -> str:
    """One pass over the window's pod rows: per group, the time they stand for and each sum."""
    time = next((d for d in by if d.bucket_us is not None), None)
    span = "piece_us" if time else "covered_us"
    source = split_sql("pod_waste", int(time.bucket_us or 0)) if time else "pod_waste"
    keys = _group_keys(by)
    if time:
        keys.append("k")
    if any(d.needs == "teams" for d in by):
        keys += [key for key in ("cluster_id",) if key not in keys]
        keys.append(f"coalesce(name, pod_id) AS {_POD_NAME}")
    grouped = [key.split(" AS ")[-1] for key in keys]
    attributes = [
        f"arg_max({column}, t) AS {column}"
        for dimension in by
        for column in dimension.attributes
        if column not in grouped
    ]
    sums = [f"{integral_sql(m, span)} AS {m.name}" for m in summed]
    select = ",\n           ".join(
        [*keys, *dict.fromkeys(attributes), f"coalesce(sum({span}), 0) AS observed_us", *sums]
    )
    group = f"\n    GROUP BY {', '.join(grouped)}" if grouped else ""
    return f"""{waste_rows_ctes()}
    SELECT {select}
    FROM {source}{group}"""


def _nothing(by: tuple[Dimension, ...], summed: tuple[Measure, ...]) -> pd.DataFrame:
    """The answer of a store with no snapshot: no row, or one of zeros without a split."""
    columns = [*columns_of(by), "observed_us", *(m.name for m in summed)]
    if not by:
        return pd.DataFrame([dict.fromkeys(columns, 0.0)])
    return pd.DataFrame(columns=columns)


def _timed(frame: pd.DataFrame, by: tuple[Dimension, ...]) -> pd.DataFrame:
    """A time dimension's bucket number as the bucket's start, UTC."""
    for dimension in by:
        if dimension.bucket_us is not None and "k" in frame:
            frame[dimension.name] = pd.to_datetime(
                frame["k"].astype("int64") * dimension.bucket_us, unit="us", utc=True
            )
    return frame


def _grouped(
    frame: pd.DataFrame,
    by: tuple[Dimension, ...],
    summed: tuple[Measure, ...],
    teams: Teams | None,
) -> pd.DataFrame:
    """With a team split, each group's team by the mapping, and the groups of one team
    (and the other keys) summed into one row."""
    if teams is None or not any(d.needs == "teams" for d in by) or _POD_NAME not in frame:
        return frame
    found: dict[tuple[str, str], str] = {}
    clusters = frame["cluster_id"].astype("string").fillna("")
    pods = frame[_POD_NAME].astype("string").fillna("")
    for key in set(zip(clusters, pods, strict=True)):
        found[key] = teams.team_of(*key)
    frame["team"] = [found.get(key, UNALLOCATED) for key in zip(clusters, pods, strict=True)]
    keys = [c for c in columns_of(by) if c in frame and c not in _attributes(by)]
    values = ["observed_us", *(m.name for m in summed)]
    last = {c: "last" for c in _attributes(by) if c in frame and c not in keys}
    return (
        frame.groupby(keys, dropna=False, sort=False)
        .agg({**dict.fromkeys(values, "sum"), **last})
        .reset_index()
    )


def _attributes(by: tuple[Dimension, ...]) -> set[str]:
    keys = set(_group_keys(by))
    return {c for d in by for c in d.attributes if c not in keys}

"""Shared style and helpers of every plot: palette, labels, docstring parts, checks.

One place for what every plot must agree on (the Okabe-Ito colours by role, axis
labels and units, the parameter text formatted into each docstring) and for the small
checks they share (required columns, one cluster, the axes to draw on).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, TypeVar

import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.axes import Axes

from ccanalytics.analysis import judge_pods, stragglers as find_stragglers

# Defined with every other exception; importable from here and from ``plots`` as before.
from ccanalytics.errors import NoDataError as NoDataError
from ccanalytics.measures import Params

#: Okabe-Ito colours by role. One mapping, so every plot and the report agree.
COLORS: Final = {
    "gpu": "#0072B2",  # blue
    "straggler": "#D55E00",  # vermillion
    "idle": "#CC79A7",  # reddish purple: its own colour, never confused with a straggler
    "cpu": "#E69F00",  # orange
    "memory": "#009E73",  # bluish green
    "range": "#000000",
    "no_metrics": "#999999",
    "median": "#555555",
}

#: Axis labels with units, written once. The service documents utilization as integer
#: percent 0-100 and cost as USD per hour (spec/provider-notes.md).
UTIL_LABEL: Final = "utilization (%)"
GPU_UTIL_LABEL: Final = "GPU utilization (%)"
COST_LABEL: Final = "cost per hour (USD/h)"
COST_USD_LABEL: Final = "cost (USD)"

#: Straggler annotations at most (beyond this the colour alone marks them).
MAX_ANNOTATIONS: Final = 6

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
_F = TypeVar("_F", bound=Callable[..., Any])


# ---------------------------------------------------------------------------------
# Shared parameter documentation, formatted into each docstring (seaborn's
# ``_docstrings``), so a parameter reads the same wherever it appears.

_DOCS: Final = {
    "pods": """\
pods : pandas.DataFrame
        A pods frame (:func:`ccanalytics.pods_frame`, :func:`ccanalytics.load_cluster_pods`).""",
    "gpus": """\
gpus : pandas.DataFrame
        A GPU frame, one row per GPU (:func:`ccanalytics.gpus_frame`).""",
    "cluster_id": """\
cluster_id : str, optional
        The cluster to draw. ``None``: the frame's only cluster; a frame holding
        several clusters then raises ``ValueError`` (pick one rather than have
        ranks of different jobs drawn on top of each other).""",
    "idle_threshold": """\
idle_threshold : float
        A GPU pod is idle when its busiest GPU is below this utilization, in
        percent (the rule of :func:`ccanalytics.analysis.idle_pods`).""",
    "verdicts": """\
verdicts : pandas.DataFrame, optional
        The pods already judged: :func:`ccanalytics.analysis.judge_pods`'s answer for
        them (or for a frame they were taken from), on their index, at this plot's
        thresholds. ``None``: judged here. The report passes the verdicts its tables
        were judged by, so a plot drawn in another process does not judge again.""",
    "ax": """\
ax : matplotlib.axes.Axes, optional
        The axes to draw on. ``None``: ``plt.gca()``, the current axes of the
        current figure (a new one only if there is none), as seaborn does.""",
    "returns": """\
matplotlib.axes.Axes
        The axes drawn on, for further styling.""",
    "raises": """\
NoDataError
        (a ``ValueError``) when there is nothing to draw: an empty axes would
        read as zero utilization or zero cost.
    ValueError
        When the frame lacks a required column.""",
}


def _doc(func: _F) -> _F:
    """Fill ``{name}`` fields of ``func``'s docstring from :data:`_DOCS`."""
    if func.__doc__:  # ``python -OO`` strips docstrings
        func.__doc__ = func.__doc__.format(**_DOCS)
    return func


# ---------------------------------------------------------------------------------
# Helpers.


def _literal(text: object) -> str:
    """``text`` as matplotlib draws it literally: every ``$`` escaped.

    Strings from the API (cluster ids, GPU types, pod names) may hold ``$``; two of them
    make matplotlib parse the text as mathtext, which draws something else or raises
    ``ValueError`` (a GPU type ``L4 $$``). An escaped ``\\$`` is drawn as ``$`` and
    never starts mathtext, so every API string goes through here before it is drawn.
    """
    return str(text).replace("$", r"\$")


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"expected {what}; missing columns: {missing}")


def _floats(values: pd.Series) -> FloatArray:
    """A nullable column as float64 with NaN for ``<NA>`` (matplotlib's missing value)."""
    return np.asarray(values.to_numpy(dtype="float64", na_value=np.nan), dtype=np.float64)


def _one_cluster(frame: pd.DataFrame, cluster_id: str | None) -> tuple[str | None, pd.DataFrame]:
    """The rows of one cluster, and its id; ``ValueError`` if the choice is ambiguous."""
    if frame.empty:
        raise NoDataError("the frame has no rows: nothing to draw")
    ids = sorted(str(c) for c in frame["cluster_id"].dropna().unique())
    if cluster_id is None:
        if len(ids) > 1:
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            raise ValueError(
                f"the frame holds {len(ids)} clusters ({shown}); pass cluster_id= to pick one"
            )
        return (ids[0] if ids else None), frame
    subset = frame[frame["cluster_id"].eq(cluster_id).fillna(False)]
    if subset.empty:
        raise ValueError(f"no rows for cluster {cluster_id!r}; the frame holds {ids}")
    return cluster_id, subset


def _judged(frame: pd.DataFrame, verdicts: pd.DataFrame | None, params: Params) -> pd.DataFrame:
    """``frame``'s pods judged by the rules at ``params``: the rows of ``verdicts`` (a
    :func:`~ccanalytics.analysis.judge_pods` answer) for them when given, else judged now."""
    if verdicts is None:
        return judge_pods(frame, params)
    _require(verdicts, ["idle", "judged"], "verdicts (ccanalytics.analysis.judge_pods)")
    if not (verdicts.index.is_unique and frame.index.isin(verdicts.index).all()):
        raise ValueError("verdicts must hold a row for every pod of the frame, on its index")
    return verdicts.loc[frame.index]


def _axes(ax: Axes | None) -> Axes:
    """``ax``, or the current axes, created only now (after the inputs were checked)."""
    return ax if ax is not None else plt.gca()


def _straggler_ranks(
    given: pd.DataFrame | Iterable[int] | None,
    cluster: pd.DataFrame,
    cluster_id: str | None,
    params: Params | None = None,
) -> dict[int, float | None]:
    """Straggling rank -> its cluster median (``None``: compute from the plot's data, at
    the plot's thresholds)."""
    if given is None:
        given = find_stragglers(cluster, params=params)
    if isinstance(given, pd.DataFrame):
        _require(given, ["rank"], "a stragglers frame (ccanalytics.analysis.stragglers)")
        rows = given
        if cluster_id is not None and "cluster_id" in given.columns:
            rows = given[given["cluster_id"].eq(cluster_id).fillna(False)]
        rows = rows[rows["rank"].notna()]
        medians = (
            _floats(rows["cluster_median"])
            if "cluster_median" in rows.columns
            else np.full(len(rows), np.nan)
        )
        return {
            int(r): (None if math.isnan(m) else float(m))
            for r, m in zip(rows["rank"], medians, strict=True)
        }
    return {int(r): None for r in given}

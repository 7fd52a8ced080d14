"""Idle rules replayed over the stored snapshots: what each would have saved, and cost.

A rule (:class:`IdleRule`) stops a running GPU pod once its busiest GPU has been below
``idle_threshold`` percent for ``idle_for`` (optionally: its fullest GPU's memory also
below ``memory_threshold``; optionally only in some clusters). The replay, per rule
and pod, in the order of the pod's snapshots in the window:

- a pod is **idle** in a snapshot by the store's one idle rule
  (:data:`ccanalytics.measures.rules.IDLE_SQL`, at the rule's threshold), and, with a
  memory line, reports its memory below it; **busy** when it is running, reports its
  busiest GPU and that is at or above the threshold (a pod without metrics is neither);
- an idle **stretch** is a run of idle snapshots, each covering the time up to the
  next (:mod:`._accounting`'s one rule of time: a gap, or the pod missing from a
  snapshot, ends it); the pod is **stopped** at the first snapshot of a stretch at
  least ``idle_for`` after the stretch's first;
- from the stop, the **saving** is Σ cost·Δt (and gpu_count·Δt) of the pod's
  snapshots until it is next seen busy, or leaves (a gap, no more snapshots), or the
  window ends: the same Δt every History answer uses, so unobserved time saves nothing;
- a stop is **false** when the pod is seen busy again within ``regret`` of it; the
  **work interrupted** is Σ cost·Δt of the busy stretch it comes back to (the run of
  busy snapshots from that one on). The pod is then watched afresh.

The replay starts at the window's start: a pod already idle then counts its stretch
from its first snapshot in the window.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np
import pandas as pd

from ccanalytics.errors import ArgumentsError
from ccanalytics.history.queries._accounting import (
    POD_ROWS_ONCE,
    US_PER_HOUR,
    duration_us,
    interval_ctes,
    max_gap_us,
    run,
    snapshot_instants,
    window_us,
)
from ccanalytics.measures import KIND_RELATIONS, of_kind, query, select_list, sql_bound_to_columns
from ccanalytics.measures.rules import IDLE_SQL, RUNNING_SQL

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ccanalytics.history.queries._window import DurationLike

__all__ = ["BACKTEST_COLUMNS", "IdleRule", "backtest", "check_rules"]

#: The replay's figures per pod: what the registry's backtest entries sum.
_FIGURES: Final = KIND_RELATIONS["backtest"].columns

#: Columns of :meth:`History.backtest`: name -> meaning and unit.
BACKTEST_COLUMNS: Final[Mapping[str, str]] = {
    "rule": "the rule's name",
    "idle_for": "how long the busiest GPU stays below the threshold before a stop",
    "idle_threshold": "percent: a pod whose busiest GPU is below it is idle",
    "memory_threshold": "percent: a stop also needs the fullest GPU's memory below it "
    "(<NA>: no memory line)",
    "cluster_id": "the cluster (by='cluster' or 'pod')",
    "pod_id": "the pod (by='pod')",
    # The replay's figures: the registry's entries (kind "backtest"), one home each.
    **{m.name: m.meaning for m in of_kind("backtest")},
    "total_cost": "USD spent in the window (Σ cost·Δt, idle_cost's total_cost)",
    "saved_share": "saved_usd / total_cost (<NA> when nothing was spent)",
}

_DTYPES: Final = {
    "rule": "string",
    "idle_for": "timedelta64[ns]",
    "idle_threshold": "Float64",
    "memory_threshold": "Float64",
    "cluster_id": "string",
    "pod_id": "string",
    "stops": "Int64",
    "false_stops": "Int64",
    "saved_usd": "Float64",
    "saved_gpu_hours": "Float64",
    "interrupted_usd": "Float64",
    "total_cost": "Float64",
    "saved_share": "Float64",
}


def _percent(value: Any, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ArgumentsError(f"{{{name}}}{value!r} is not a percentage", name) from None
    if not number >= 0:  # NaN too
        raise ArgumentsError(f"{{{name}}}{value!r} must be at least 0 (percent)", name)
    return number


@dataclass(frozen=True)
class IdleRule:
    """Stop a running GPU pod once its busiest GPU has been below ``idle_threshold``
    percent for ``idle_for`` (a timedelta or a duration string: ``"30m"``, ``"2h"``).

    ``memory_threshold``: also require its fullest GPU's memory below this percent (a
    pod not reporting memory is then never stopped). ``clusters``: judge only these.
    ``name``: defaults to ``"30m at 1%"``. Bad values raise
    :class:`~ccanalytics.errors.ArgumentsError` when the rule is made.
    """

    idle_for: Any
    idle_threshold: float
    name: str = ""
    memory_threshold: float | None = None
    clusters: tuple[str, ...] | None = field(default=None)

    def __post_init__(self) -> None:
        try:
            span = pd.Timedelta(duration_us(self.idle_for, "idle_for"), unit="us")
        except ValueError as err:
            raise ArgumentsError(
                "{idle_for}" + str(err).removeprefix("idle_for=").replace("{", "{{"), "idle_for"
            ) from None
        object.__setattr__(self, "idle_for", span)
        object.__setattr__(self, "idle_threshold", _percent(self.idle_threshold, "idle_threshold"))
        if self.memory_threshold is not None:
            line = _percent(self.memory_threshold, "memory_threshold")
            object.__setattr__(self, "memory_threshold", line)
        if self.clusters is not None:
            chosen = (self.clusters,) if isinstance(self.clusters, str) else self.clusters
            object.__setattr__(self, "clusters", tuple(str(c) for c in chosen))
        if not self.name:
            object.__setattr__(self, "name", f"{_spell(span)} at {self.idle_threshold:g}%")

    @property
    def idle_for_us(self) -> int:
        """``idle_for`` in microseconds."""
        return int(pd.Timedelta(self.idle_for).value // 1000)


def _spell(span: pd.Timedelta) -> str:
    minutes = int(span.total_seconds() // 60)
    if minutes and span == pd.Timedelta(minutes=minutes):
        hours, rest = divmod(minutes, 60)
        return f"{hours}h" if hours and not rest else f"{minutes}m"
    return str(span)


def check_rules(rules: IdleRule | Iterable[IdleRule]) -> list[IdleRule]:
    """``rules`` as a list: at least one, each an :class:`IdleRule`, no name twice."""
    chosen = [rules] if isinstance(rules, IdleRule) else list(rules)
    if not chosen:
        raise ArgumentsError("{rules}give at least one rule", "rules")
    seen: set[str] = set()
    for rule in chosen:
        if not isinstance(rule, IdleRule):
            raise ArgumentsError(f"{{rules}}{rule!r} is not an IdleRule", "rules")
        if rule.name in seen:
            raise ArgumentsError(f"{{rules}}the rule name {rule.name!r} is used twice", "rules")
        seen.add(rule.name)
    return chosen


def _rows_sql(rules: Sequence[IdleRule]) -> str:
    """Every pod row in the window with its span, and each rule's idle and busy verdicts."""
    idle = sql_bound_to_columns(IDLE_SQL, {"idle_threshold": "r.idle_threshold"})
    busy = f"({RUNNING_SQL} AND gpu_util_max IS NOT NULL AND NOT {idle})"
    memory = (
        "(r.memory_threshold IS NULL OR coalesce(gpu_mem_util_max < r.memory_threshold, FALSE))"
    )
    return f"""WITH
    {snapshot_instants()},
    {POD_ROWS_ONCE},
    {interval_ctes("snapshot_instants")},
    pod_rows AS (
        SELECT p.*, tm.t, coalesce(tm.hi, tm.lo) AS hi, tm.covered_us
        FROM pods_once p JOIN timed tm
          ON p.cluster_id = tm.cluster_id AND epoch_us(p.observed_at) = tm.t
        WHERE tm.in_window
    )
    SELECT r.rule_id, p.cluster_id, coalesce(p.pod_id, p.name) AS pod_id, p.t, p.hi,
           p.covered_us, coalesce(p.cost, 0.0) AS cost, coalesce(p.gpu_count, 0) AS gpu_count,
           coalesce({idle} AND {memory}, FALSE) AS idle,
           coalesce({busy}, FALSE) AS busy
    FROM pod_rows p CROSS JOIN {_rules_relation(rules)}
    ORDER BY r.rule_id, p.cluster_id, pod_id, p.t"""


def _rules_relation(rules: Sequence[IdleRule]) -> str:
    """The rules as an inline table ``r`` (rule_id, idle_threshold, memory_threshold):
    the checked numbers as literals, so any engine reads it (no registered frame)."""
    rows = ", ".join(
        f"({number}, CAST({float(rule.idle_threshold)!r} AS DOUBLE), "
        + (
            "CAST(NULL AS DOUBLE))"
            if rule.memory_threshold is None
            else f"CAST({float(rule.memory_threshold)!r} AS DOUBLE))"
        )
        for number, rule in enumerate(rules)
    )
    return f"(VALUES {rows}) AS r(rule_id, idle_threshold, memory_threshold)"


def _spacings(con: Any) -> pd.DataFrame:
    """Each cluster's median snapshot spacing over the whole store, in µs."""
    return run(
        con,
        f"""WITH {snapshot_instants()}
        SELECT cluster_id, median(spacing) AS spacing_us FROM (
            SELECT cluster_id, lead(t) OVER (PARTITION BY cluster_id ORDER BY t) - t AS spacing
            FROM snapshot_instants
        ) GROUP BY cluster_id HAVING count(spacing) > 0""",
        {},
    )


def _check_spacing(rules: Sequence[IdleRule], spacings: pd.DataFrame) -> None:
    for rule in rules:
        judged = spacings
        if rule.clusters is not None:
            judged = spacings[spacings["cluster_id"].astype(str).isin(rule.clusters)]
        if judged.empty:
            continue
        widest = judged.sort_values("spacing_us", ascending=False).iloc[0]
        if rule.idle_for_us < float(widest["spacing_us"]):
            spacing = pd.Timedelta(int(widest["spacing_us"]), unit="us")
            raise ArgumentsError(
                f"rule {rule.name!r}: {{idle_for}}{_spell(pd.Timedelta(rule.idle_for))} is "
                f"shorter than the snapshot spacing of cluster {widest['cluster_id']} "
                f"({_spell(spacing)}): the replay cannot tell it from {_spell(spacing)}",
                "idle_for",
            )


def _replay(
    t: np.ndarray,
    hi: np.ndarray,
    usd: np.ndarray,
    gpu_us: np.ndarray,
    idle: np.ndarray,
    busy: np.ndarray,
    idle_for: int,
    regret: int,
) -> tuple[int, int, float, float, float]:
    """One pod under one rule: stops, false stops, saved USD·µs and GPU·µs, interrupted USD·µs."""
    stops = false_stops = 0
    saved = saved_gpu = interrupted = 0.0
    run_start: int | None = None
    stopped_at: int | None = None
    for i in range(len(t)):
        contiguous = i > 0 and hi[i - 1] == t[i]
        if stopped_at is not None:
            if contiguous and not busy[i]:
                saved += usd[i]
                saved_gpu += gpu_us[i]
                continue
            if contiguous and t[i] - stopped_at <= regret:  # busy again, too soon
                false_stops += 1
                j = i
                while j < len(t) and busy[j] and (j == i or hi[j - 1] == t[j]):
                    interrupted += usd[j]
                    j += 1
            stopped_at = None
        if not idle[i]:
            run_start = None
            continue
        if run_start is None or not contiguous:
            run_start = int(t[i])
        if t[i] - run_start >= idle_for:
            stops += 1
            stopped_at = int(t[i])
            saved += usd[i]
            saved_gpu += gpu_us[i]
    return stops, false_stops, saved, saved_gpu, interrupted


def _per_pod(rows: pd.DataFrame, rules: Sequence[IdleRule], regret: int) -> pd.DataFrame:
    """One row per rule and pod: the replay's sums, in USD and hours, and the pod's spend."""
    covered = rows["covered_us"].to_numpy(dtype="float64")
    rows = rows.assign(
        usd=rows["cost"].to_numpy(dtype="float64") * covered,
        gpu_us=rows["gpu_count"].to_numpy(dtype="float64") * covered,
    )
    out: list[dict[str, Any]] = []
    for key, part in rows.groupby(["rule_id", "cluster_id", "pod_id"], sort=True, dropna=False):
        rule_id, cluster, pod = (int(str(key[0])), key[1], key[2])
        rule = rules[rule_id]
        stops, false, saved, saved_gpu, interrupted = _replay(
            part["t"].to_numpy(dtype="int64"),
            part["hi"].to_numpy(dtype="int64"),
            part["usd"].to_numpy(),
            part["gpu_us"].to_numpy(),
            part["idle"].to_numpy(dtype=bool),
            part["busy"].to_numpy(dtype=bool),
            rule.idle_for_us,
            regret,
        )
        out.append(
            {
                "rule_id": rule_id,
                "cluster_id": cluster,
                "pod_id": pod,
                "stops": stops,
                "false_stops": false,
                "saved_usd": saved / US_PER_HOUR,
                "saved_gpu_hours": saved_gpu / US_PER_HOUR,
                "interrupted_usd": interrupted / US_PER_HOUR,
                "total_cost": float(part["usd"].sum()) / US_PER_HOUR,
            }
        )
    return pd.DataFrame(out)


def _empty(by: str | None) -> pd.DataFrame:
    keys = {"cluster": ["cluster_id"], "pod": ["cluster_id", "pod_id"], None: []}[by]
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in _columns(keys).items()})


def backtest(
    con: Any,
    rules: IdleRule | Iterable[IdleRule],
    start: Any,
    end: Any,
    *,
    by: Literal["cluster", "pod"] | None = "cluster",
    regret: DurationLike = "1h",
    max_gap: DurationLike | None = None,
) -> pd.DataFrame:
    """Each rule replayed over ``[start, end)``: see the module's method. Columns:
    :data:`BACKTEST_COLUMNS` (without ``cluster_id``/``pod_id`` as ``by`` says)."""
    if by not in ("cluster", "pod", None):
        raise ArgumentsError(f"{{by}}{by!r} is not one of 'cluster', 'pod' or None", "by")
    chosen = check_rules(rules)
    regret_us = duration_us(regret, "regret")
    window = window_us(con, start, end)
    if window is None:
        return _empty(by)
    _check_spacing(chosen, _spacings(con))
    frame = _rows_with(con, chosen, window, max_gap)
    if frame.empty:
        return _empty(by)
    pods = _per_pod(frame, chosen, regret_us)
    return _shaped(pods, chosen, by)


def _rows_with(
    con: Any, rules: Sequence[IdleRule], window: tuple[int, int], gap: Any
) -> pd.DataFrame:
    """The rows of :func:`_rows_sql`, a rule's clusters filter applied to its verdicts."""
    params = {"start_us": window[0], "end_us": window[1], "max_gap_us": max_gap_us(gap)}
    frame = run(con, _rows_sql(rules), params)
    for rule_id, rule in enumerate(rules):
        if rule.clusters is not None:
            outside = (frame["rule_id"] == rule_id) & ~frame["cluster_id"].isin(rule.clusters)
            frame.loc[outside, "idle"] = False
    return frame


def _shaped(pods: pd.DataFrame, rules: Sequence[IdleRule], by: str | None) -> pd.DataFrame:
    """The per-pod replay grouped by rule and ``by`` in SQL: each figure the registry's
    backtest entry's own (``sum(stops)``), with the spend they are a share of."""
    keys = {"cluster": ["cluster_id"], "pod": ["cluster_id", "pod_id"], None: []}[by]
    relation = KIND_RELATIONS["backtest"]
    group = ", ".join(["rule_id", *keys])
    grouped = query(
        pods,
        f"""WITH {relation.name} AS (SELECT * FROM frame)
        SELECT {group}, {select_list("backtest")}, sum(total_cost) AS total_cost
        FROM {relation.name} GROUP BY {group} ORDER BY {group}""",
        {},
        reads=[*relation.columns, "rule_id", *keys, "total_cost"],
        frame_dtypes={
            **dict.fromkeys(relation.columns, "Float64"),
            "stops": "Int64",
            "false_stops": "Int64",
            "rule_id": "Int64",
            "cluster_id": "string",
            "pod_id": "string",
            "total_cost": "Float64",
        },
    )
    grouped["rule"] = [rules[i].name for i in grouped["rule_id"]]
    grouped["idle_for"] = [pd.Timedelta(rules[i].idle_for) for i in grouped["rule_id"]]
    grouped["idle_threshold"] = [rules[i].idle_threshold for i in grouped["rule_id"]]
    grouped["memory_threshold"] = pd.array(
        [rules[i].memory_threshold for i in grouped["rule_id"]], dtype="Float64"
    )
    spent = grouped["total_cost"].astype("Float64")
    grouped["saved_share"] = grouped["saved_usd"].astype("Float64") / spent.where(spent > 0)
    columns = _columns(keys)
    return grouped[list(columns)].astype(columns).reset_index(drop=True)


def _columns(keys: list[str]) -> dict[str, str]:
    """The answer's columns and dtypes: :data:`BACKTEST_COLUMNS` (``keys`` of the two),
    each backtest entry of the registry as it is now among them."""
    figures = [m.name for m in of_kind("backtest")]
    head = [
        c for c in BACKTEST_COLUMNS if c not in _FIGURES and c not in ("total_cost", "saved_share")
    ]
    names = [*(c for c in head if c not in ("cluster_id", "pod_id") or c in keys), *figures]
    return {c: _DTYPES.get(c, "Float64") for c in [*names, "total_cost", "saved_share"]}

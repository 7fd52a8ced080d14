"""The domain rules, written once, in SQL: judged, idle, unused capacity, stragglers.

Every path that answers these questions runs these predicates in DuckDB: the live
frames (:mod:`ccanalytics.analysis`, through :mod:`ccanalytics.measures._engine`, which
queries the in-memory frame) and the store (:class:`ccanalytics.history.History`). There
is no second rendering: a rule is one SQL text here, and its parameters are one
:class:`~ccanalytics.measures.Params`.

The rules (``status`` is the pod's lifecycle state as the service sends it):

- **running**: ``status`` is ``RUNNING`` and the pod has GPUs. Only running pods have
  runtime metrics (provider notes). A **missing status** (NULL: a cell the decoder
  could not read, or an older payload) is *not* ``RUNNING``: the pod is counted, and
  costs what it costs, but is never judged idle, unused or straggling
  (``NULL = 'RUNNING'`` is NULL, which a filter drops).
- **judged**: running and reporting ``gpu_util_mean``.
- **idle**: running, and its busiest GPU (``gpu_util_max``) is below the idle
  threshold (percent, ``$idle_threshold``, default :data:`IDLE_THRESHOLD`). A pod
  without metrics is unknown, never idle.
- **in use**: judged and not idle, or without GPUs and reporting its CPU utilization;
  a pod neither idle nor in use is **unjudged** (nothing it reports lets the rules say).
- **unused capacity**: over judged pods, ``cost * (1 - gpu_util_mean / 100)``.
- **straggler**: among judged pods with a rank that are not idle (busiest GPU at or
  above the idle threshold), with at least :data:`MIN_RANKS_FOR_STRAGGLERS` of them in
  the cluster snapshot, a rank straggles when it is at least ``$min_gap`` points below
  the median of ``gpu_util_mean`` and its robust z-score ``MAD_SCALE * (util - median)
  / MAD`` is below ``-$z`` (with MAD 0 the gap alone decides). Medians are numpy's (the
  middle value or the mean of the two middle values). See :func:`straggler_ctes`.
- **chronic**: a rank flagged in at least ``chronic_share`` of its snapshots.
- **memory at risk**: running, and its fullest GPU's memory (``gpu_mem_util_max``) is
  above ``$memory_threshold`` percent (default 95): the next allocation may fail.
- a missing ``cost`` counts as 0 USD/h in every sum.

**Waste classes** (:func:`waste_ctes` gives each pod row ``idle_gpus``, how many of its
GPUs are below the idle threshold in the per-GPU table, and ``straggler_deficit``, its
points below the median when the straggler rule flags it). Each running GPU pod row
reporting utilization falls in **at most one** class, the first that holds, in this
order, and wastes what the class says (USD per hour):

1. **idle, empty** (``$idle_threshold``; its fullest GPU's memory below
   ``$idle_memory_threshold`` or unknown): its whole cost;
2. **idle, model loaded** (idle, memory at or above ``$idle_memory_threshold``): its
   whole cost (a server nobody calls);
3. **straggling rank** (flagged by the straggler rule): ``cost * deficit / 100``, the
   share of its GPUs its peers use and it does not;
4. **idle GPUs in a busy pod** (not idle, more than one GPU, ``idle_gpus`` > 0):
   ``cost * idle_gpus / gpu_count``, the idle GPUs' part of its price;
5. **low compute** (not idle, its mean below ``$low_compute_threshold``):
   ``cost * (1 - gpu_util_mean / 100)``, its unused capacity.

So the classes never double count: idle, empty + idle, model loaded = idle cost, and the
five sum to the waste, which is at most the spend.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

__all__ = [
    "DAYS_PER_MONTH",
    "IDLE_SQL",
    "IN_USE_SQL",
    "JUDGED_SQL",
    "MAD_SCALE",
    "MEMORY_RISK_SQL",
    "MIN_RANKS_FOR_STRAGGLERS",
    "NOT_RUNNING_SQL",
    "RIGHTSIZING_HEADROOM",
    "RUNNING_SQL",
    "RUNNING_WITHOUT_METRICS_SQL",
    "SPEND_ANOMALY_MIN_RATIO",
    "SPEND_ANOMALY_Z",
    "SPEND_BASELINE_WEEKS",
    "SPEND_MIN_BASELINE_WEEKS",
    "STRAGGLER_RANKS_SQL",
    "UNJUDGED_SQL",
    "UNUSED_COST_SQL",
    "UTIL_WEIGHT_SQL",
    "WASTED_SQL",
    "WASTE_CLASSES",
    "WASTE_ROW_SQL",
    "WITHOUT_METRICS_SQL",
    "WasteClass",
    "median_sql",
    "robust_z_sql",
    "straggler_ctes",
    "waste_ctes",
]

#: The thresholds' defaults under their old constant names (``rules.IDLE_THRESHOLD``):
#: each is read off its entry in the registry (:data:`ccanalytics.measures.THRESHOLDS`).
_DEFAULTS: Final = {
    "IDLE_THRESHOLD": "idle_threshold",
    "STRAGGLER_Z": "z",
    "STRAGGLER_MIN_GAP": "min_gap",
    "CHRONIC_SHARE": "chronic_share",
    "MEMORY_THRESHOLD": "memory_threshold",
    "IDLE_MEMORY_THRESHOLD": "idle_memory_threshold",
    "LOW_COMPUTE_THRESHOLD": "low_compute_threshold",
}


def __getattr__(name: str) -> Any:
    # Read lazily: the thresholds' entries are the one home of their defaults.
    if name in _DEFAULTS:
        from ccanalytics.measures._thresholds import threshold

        return threshold(_DEFAULTS[name]).default
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Fewer ranks reporting than this, and "typical" has no meaning.
MIN_RANKS_FOR_STRAGGLERS: Final = 4
#: Makes a MAD-based z comparable to a standard z for normal data.
MAD_SCALE: Final = 0.6745
#: A cluster's hour of spend is judged against the same hour of the week this many
#: weeks back...
SPEND_BASELINE_WEEKS: Final = 4
#: ...and only with at least this many of them observed (fewer: no judgement, no alarm).
SPEND_MIN_BASELINE_WEEKS: Final = 3
#: An hour's spend is unusual when its robust z is above this (the straggler's z)...
SPEND_ANOMALY_Z: Final = 3.5
#: ...and it is at least this many times its usual (the median): a steady cluster, whose
#: MAD is 0, does not flag a cent of noise (the straggler rule's min_gap, as a ratio).
SPEND_ANOMALY_MIN_RATIO: Final = 1.5

#: A right-sizing hint keeps this share of memory free above the observed peak (0.2:
#: the peak plus 20 %).
RIGHTSIZING_HEADROOM: Final = 0.2
#: A month of savings and run rates is this many days (the report's "per month", the
#: hints' monthly saving); budgets use the calendar month instead.
DAYS_PER_MONTH: Final = 30

#: Running GPU pods: the only pods with runtime metrics.
RUNNING_SQL: Final = "(status = 'RUNNING' AND gpu_count > 0)"
#: Pods listed in any state but RUNNING, or with none: never judged.
NOT_RUNNING_SQL: Final = "(status IS NULL OR status <> 'RUNNING')"
#: Pods without the metric of their kind: GPU utilization on a GPU pod, CPU utilization on
#: the others (a running pod without it is not judged: its utilization is unknown).
WITHOUT_METRICS_SQL: Final = (
    "((coalesce(gpu_count, 0) > 0 AND gpu_util_mean IS NULL) "
    "OR (NOT coalesce(gpu_count, 0) > 0 AND cpu_util IS NULL))"
)
#: Running pods without the metric of their kind: counted and costed, never judged.
RUNNING_WITHOUT_METRICS_SQL: Final = f"(status = 'RUNNING' AND {WITHOUT_METRICS_SQL})"
#: Running GPU pods reporting utilization: the pods judged busy or idle.
JUDGED_SQL: Final = f"({RUNNING_SQL} AND gpu_util_mean IS NOT NULL)"
#: Idle pods; ``$idle_threshold`` is the idle threshold (percent).
IDLE_SQL: Final = f"({RUNNING_SQL} AND gpu_util_max IS NOT NULL AND gpu_util_max < $idle_threshold)"
#: Pods in use: judged and not idle, or without GPUs and reporting their CPU.
IN_USE_SQL: Final = f"(({JUDGED_SQL} AND NOT {IDLE_SQL}) OR (NOT coalesce(gpu_count, 0) > 0 AND cpu_util IS NOT NULL))"
#: Pods neither idle nor in use: nothing they report lets the rules judge them. A pod
#: with no status makes both NULL, hence the coalesces: it is unjudged, not dropped.
UNJUDGED_SQL: Final = f"(NOT coalesce({IDLE_SQL}, false) AND NOT coalesce({IN_USE_SQL}, false))"
#: USD per hour of a judged pod that no work uses (NULL cost: no sum).
UNUSED_COST_SQL: Final = "cost * (1 - gpu_util_mean / 100)"
#: The weight of a pod row in a mean of ``gpu_util_mean``: its GPUs reporting (all of
#: them when the count is unknown, as in rows stored before it was kept).
UTIL_WEIGHT_SQL: Final = "coalesce(gpus_reporting, gpu_count)"
#: Pods whose fullest GPU's memory is above ``$memory_threshold`` (percent).
MEMORY_RISK_SQL: Final = (
    f"({RUNNING_SQL} AND gpu_mem_util_max IS NOT NULL AND gpu_mem_util_max > $memory_threshold)"
)


#: A hair above one half: ``quantile_disc`` there is the upper middle of any group of
#: fewer than 500 million values (see :func:`median_sql`).
_ABOVE_HALF: Final = "0.500000001"


def median_sql(value: str) -> str:
    """numpy's median of ``value`` as an aggregate: the middle, or the two middles' mean.

    ``quantile_disc(v, q)`` is SQL's ``PERCENTILE_DISC``: the first value, in order,
    whose cumulative share of the ``n`` values reaches ``q``. At ``q = 0.5`` that is
    the lower middle; just above it (by less than ``1 / 2n``) the upper middle (the same
    value when ``n`` is odd). Both come from one aggregate over a list of the two
    fractions (one collection of the group's values; DuckDB computes an aggregate written
    twice once), so ``(lower + upper) / 2`` is numpy's arithmetic to the bit.
    DuckDB's ``median`` interpolates (``lo + (hi - lo) / 2``), which can differ in the
    last bit; two aggregates (the lower middle of ``v`` and of ``-v``) collected the
    values twice, 7 % of the live straggler query's instructions; collecting a sorted
    list per group was 3x slower.
    """
    both = f"quantile_disc({value}, [0.5, {_ABOVE_HALF}])"
    return f"((({both})[1] + ({both})[2]) / 2)"


def robust_z_sql(value: str, median: str, mad: str) -> str:
    """The robust z-score of ``value``: ``MAD_SCALE * (value - median) / mad``.

    The one definition the straggler rule and the spend anomalies judge by (``median``
    and ``mad`` from :func:`median_sql`). With MAD 0 (every other value equal) it is
    -inf below the median, +inf above it and 0 at it: the rule's gap (``min_gap``, or
    :data:`SPEND_ANOMALY_MIN_RATIO`) then decides alone.
    """
    return (
        f"CASE WHEN {mad} > 0 THEN {MAD_SCALE} * ({value} - {median}) / {mad} "
        f"WHEN {value} < {median} THEN CAST('-inf' AS DOUBLE) "
        f"WHEN {value} > {median} THEN CAST('inf' AS DOUBLE) ELSE 0.0 END"
    )


#: Per (cluster, rank) over the relation ``judged`` (:func:`straggler_ctes` keyed by
#: cluster and snapshot instant): snapshots judged, flagged, the share flagged (a DOUBLE
#: quotient, the one every path compares with a share), the mean deficit when flagged
#: and the first and last flagged instants (Unix µs).
STRAGGLER_RANKS_SQL: Final = """SELECT cluster_id, rank, count(*) AS snapshots,
       count(*) FILTER (WHERE flagged) AS flagged,
       count(*) FILTER (WHERE flagged) / count(*) AS share,
       avg(deficit) FILTER (WHERE flagged) AS mean_deficit,
       epoch_us(min(observed_at) FILTER (WHERE flagged)) AS first_us,
       epoch_us(max(observed_at) FILTER (WHERE flagged)) AS last_us
FROM judged GROUP BY cluster_id, rank"""


def straggler_ctes(source: str, keys: str, columns: str = "") -> str:
    """CTEs ``usable, centre, scored, mad, judged``: each snapshot's ranks judged.

    ``source`` is a relation of pod rows, ``keys`` the columns that name one snapshot of
    one cluster (``cluster_id`` for a live frame, ``cluster_id, observed_at`` in the
    store), ``columns`` more pod columns to carry (``", pod_id, name"``). ``judged``
    has, per usable rank: the keys, ``rank``, ``v`` (its ``gpu_util_mean``),
    ``median``, ``deficit`` (points below the median), ``mad``, ``robust_z``
    (:func:`robust_z_sql`; ``mad`` is NULL in a snapshot where no rank is ``$min_gap``
    below the median: nothing there can straggle, and ``robust_z`` is then that of MAD
    0) and ``flagged``. Parameters:
    ``$idle_threshold``, ``$min_ranks``, ``$min_gap``, ``$z``.
    """
    on = ", ".join(k.strip() for k in keys.split(","))
    # The MAD only where a rank is far enough below the median to be flagged at all:
    # elsewhere nothing straggles whatever the spread (a second median over every
    # snapshot was a third of the query). Those snapshots are read off each one's lowest
    # rank (some rank is $min_gap below the median exactly when the lowest is: x - v
    # only grows as v falls), not from a pass over every rank kept aside for it, which
    # cost a tenth of the live straggler query at 50,000 pods. Each rank meets its
    # snapshot's median once (scored), which both the MAD and the judgement read: a
    # second join of every rank to the medians was a twentieth of the live query.
    return f"""usable AS (
        SELECT {keys}, rank{columns}, CAST(gpu_util_mean AS DOUBLE) AS v
        FROM {source}
        WHERE {JUDGED_SQL} AND rank IS NOT NULL AND cluster_id IS NOT NULL
          AND gpu_util_max >= $idle_threshold
    ),
    centre AS (
        SELECT {keys}, {median_sql("v")} AS median, min(v) AS lowest
        FROM usable GROUP BY {keys} HAVING count(*) >= $min_ranks
    ),
    scored AS (
        SELECT u.*, c.median, c.median - u.v AS deficit,
               c.median - c.lowest >= $min_gap AS can_straggle
        FROM usable u JOIN centre c USING ({on})
    ),
    mad AS (
        SELECT {keys}, {median_sql("abs(v - median)")} AS mad
        FROM scored WHERE can_straggle GROUP BY {keys}
    ),
    judged AS (
        SELECT s.* EXCLUDE (can_straggle), m.mad,
               {robust_z_sql("s.v", "s.median", "m.mad")} AS robust_z,
               (s.deficit >= $min_gap
                AND {robust_z_sql("s.v", "s.median", "m.mad")} < -$z) AS flagged
        FROM scored s LEFT JOIN mad m USING ({on})
    )"""


#: Running GPU pods reporting utilization whose busiest GPU is at or above the idle line.
BUSY_SQL: Final = f"({JUDGED_SQL} AND gpu_util_max >= $idle_threshold)"
_NOT_STRAGGLING: Final = "straggler_deficit IS NULL"


class WasteClass(NamedTuple):
    """One waste class: which pod rows (``where``) and their waste per hour (``row``).

    Both read the columns :func:`waste_ctes` adds (``idle_gpus``, ``straggler_deficit``);
    each ``where`` excludes the classes before it, so a pod row is in one class at most.
    """

    name: str
    row: str
    where: str


#: The waste classes, in the order a pod row is assigned to the first that holds.
WASTE_CLASSES: Final = (
    WasteClass(
        "idle_empty_cost",
        "cost",
        f"({IDLE_SQL} AND coalesce(gpu_mem_util_max < $idle_memory_threshold, TRUE))",
    ),
    WasteClass(
        "idle_loaded_cost", "cost", f"({IDLE_SQL} AND gpu_mem_util_max >= $idle_memory_threshold)"
    ),
    WasteClass(
        "straggler_cost",
        "cost * straggler_deficit / 100",
        f"({BUSY_SQL} AND straggler_deficit IS NOT NULL)",
    ),
    WasteClass(
        "idle_gpus_cost",
        "cost * least(idle_gpus, gpu_count) / gpu_count",
        f"({BUSY_SQL} AND {_NOT_STRAGGLING} AND gpu_count > 1 AND idle_gpus > 0)",
    ),
    WasteClass(
        "low_compute_cost",
        UNUSED_COST_SQL,
        f"({BUSY_SQL} AND {_NOT_STRAGGLING} AND NOT (gpu_count > 1 AND coalesce(idle_gpus, 0) > 0)"
        " AND gpu_util_mean < $low_compute_threshold)",
    ),
)


#: Any class's waste per hour of a pod row: the row of the one class it is in (none: NULL).
WASTE_ROW_SQL: Final = (
    "CASE " + " ".join(f"WHEN {c.where} THEN {c.row}" for c in WASTE_CLASSES) + " END"
)
#: The pod rows some class holds.
WASTED_SQL: Final = "(" + " OR ".join(c.where for c in WASTE_CLASSES) + ")"


def waste_ctes(source: str, gpus: str, gpu_keys: str, row_keys: str) -> str:
    """CTEs ``idle_gpu_counts, pod_waste``: ``source``'s pod rows with what the classes read.

    Needs the CTE ``judged`` of :func:`straggler_ctes` over ``source`` carrying
    ``row_keys`` (the columns that name one pod row: ``_row`` live; ``cluster_id,
    observed_at, pod_id`` in the store). ``gpus`` is a relation of GPU rows
    (``gpu_index``, ``util``) joined to the pod rows on ``gpu_keys``. ``pod_waste`` is
    every row of ``source`` plus ``idle_gpus`` (GPUs reporting a utilization below
    ``$idle_threshold``; NULL when the per-GPU table has none of its rows: unknown, never
    idle) and ``straggler_deficit`` (points below the median when flagged, else NULL).
    """
    on = ", ".join(k.strip() for k in gpu_keys.split(","))
    rows = ", ".join(k.strip() for k in row_keys.split(","))
    return f"""idle_gpu_counts AS (
        SELECT {on}, count(DISTINCT gpu_index) FILTER (WHERE util < $idle_threshold) AS idle_gpus
        FROM {gpus} GROUP BY {on}
    ),
    pod_waste AS (
        SELECT s.*, c.idle_gpus, j.deficit AS straggler_deficit
        FROM {source} s
        LEFT JOIN idle_gpu_counts c USING ({on})
        LEFT JOIN (SELECT {rows}, deficit FROM judged WHERE flagged) j USING ({rows})
    )"""

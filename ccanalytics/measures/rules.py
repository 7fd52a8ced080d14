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
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CHRONIC_SHARE",
    "IDLE_SQL",
    "IDLE_THRESHOLD",
    "JUDGED_SQL",
    "MAD_SCALE",
    "MEMORY_RISK_SQL",
    "MEMORY_THRESHOLD",
    "MIN_RANKS_FOR_STRAGGLERS",
    "RUNNING_SQL",
    "SPEND_ANOMALY_MIN_RATIO",
    "SPEND_ANOMALY_Z",
    "SPEND_BASELINE_WEEKS",
    "SPEND_MIN_BASELINE_WEEKS",
    "STRAGGLER_MIN_GAP",
    "STRAGGLER_Z",
    "UNUSED_COST_SQL",
    "median_sql",
    "robust_z_sql",
    "straggler_ctes",
]

#: A GPU pod is idle when its busiest GPU is below this utilization (percent).
IDLE_THRESHOLD: Final = 10.0
#: A rank straggles when its robust z-score is below minus this...
STRAGGLER_Z: Final = 3.5
#: ...and it is at least this many utilization points below its cluster's median
#: (so a perfectly uniform cluster, whose MAD is ~0, does not flag noise).
STRAGGLER_MIN_GAP: Final = 10.0
#: Fewer ranks reporting than this, and "typical" has no meaning.
MIN_RANKS_FOR_STRAGGLERS: Final = 4
#: Makes a MAD-based z comparable to a standard z for normal data.
MAD_SCALE: Final = 0.6745
#: A rank flagged in at least this share of its snapshots is a chronic straggler.
CHRONIC_SHARE: Final = 0.5
#: A GPU pod's memory is at risk when its fullest GPU's memory is above this (percent).
MEMORY_THRESHOLD: Final = 95.0
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

#: Running GPU pods: the only pods with runtime metrics.
RUNNING_SQL: Final = "(status = 'RUNNING' AND gpu_count > 0)"
#: Running GPU pods reporting utilization: the pods judged busy or idle.
JUDGED_SQL: Final = f"({RUNNING_SQL} AND gpu_util_mean IS NOT NULL)"
#: Idle pods; ``$idle_threshold`` is the idle threshold (percent).
IDLE_SQL: Final = f"({RUNNING_SQL} AND gpu_util_max IS NOT NULL AND gpu_util_max < $idle_threshold)"
#: USD per hour of a judged pod that no work uses (NULL cost: no sum).
UNUSED_COST_SQL: Final = "cost * (1 - gpu_util_mean / 100)"
#: Pods whose fullest GPU's memory is above ``$memory_threshold`` (percent).
MEMORY_RISK_SQL: Final = (
    f"({RUNNING_SQL} AND gpu_mem_util_max IS NOT NULL AND gpu_mem_util_max > $memory_threshold)"
)


def median_sql(value: str) -> str:
    """numpy's median of ``value`` as an aggregate: the middle, or the two middles' mean.

    ``quantile_disc(v, 0.5)`` is the lower middle; the upper middle is minus the lower
    middle of ``-v`` (negation is exact), so ``(lower + upper) / 2`` is numpy's
    arithmetic to the bit. DuckDB's ``median`` interpolates (``lo + (hi - lo) / 2``),
    which can differ in the last bit; collecting a sorted list per group was 3x slower.
    """
    return f"((quantile_disc({value}, 0.5) - quantile_disc(-({value}), 0.5)) / 2)"


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


def straggler_ctes(source: str, keys: str, columns: str = "") -> str:
    """CTEs ``usable, centre, spread, mad, judged``: each snapshot's ranks judged.

    ``source`` is a relation of pod rows, ``keys`` the columns that name one snapshot of
    one cluster (``cluster_id`` for a live frame, ``cluster_id, observed_at`` in the
    store), ``columns`` more pod columns to carry (``", pod_id, name"``). ``judged``
    has, per usable rank: the keys, ``rank``, ``v`` (its ``gpu_util_mean``),
    ``median``, ``mad``, ``deficit`` (points below the median), ``robust_z``
    (:func:`robust_z_sql`; ``mad`` is NULL in a snapshot where no rank is ``$min_gap``
    below the median, nothing there can straggle, and ``robust_z`` is then that of MAD
    0) and ``flagged``. Parameters:
    ``$idle_threshold``, ``$min_ranks``, ``$min_gap``, ``$z``.
    """
    on = ", ".join(k.strip() for k in keys.split(","))
    return f"""usable AS (
        SELECT {keys}, rank{columns}, CAST(gpu_util_mean AS DOUBLE) AS v
        FROM {source}
        WHERE {JUDGED_SQL} AND rank IS NOT NULL AND cluster_id IS NOT NULL
          AND gpu_util_max >= $idle_threshold
    ),
    centre AS (
        SELECT {keys}, {median_sql("v")} AS median
        FROM usable GROUP BY {keys} HAVING count(*) >= $min_ranks
    ),
    spread AS (
        SELECT u.*, c.median, c.median - u.v AS deficit, abs(u.v - c.median) AS distance
        FROM usable u JOIN centre c USING ({on})
    ),
    -- The MAD only where a rank is far enough below the median to be flagged at all:
    -- elsewhere nothing straggles whatever the spread, and a second median over every
    -- snapshot was a third of the query.
    candidates AS (SELECT DISTINCT {keys} FROM spread WHERE deficit >= $min_gap),
    mad AS (
        SELECT {keys}, {median_sql("distance")} AS mad
        FROM spread SEMI JOIN candidates USING ({on}) GROUP BY {keys}
    ),
    judged AS (
        SELECT s.* EXCLUDE (distance), m.mad,
               {robust_z_sql("s.v", "s.median", "m.mad")} AS robust_z,
               (s.deficit >= $min_gap
                AND {robust_z_sql("s.v", "s.median", "m.mad")} < -$z) AS flagged
        FROM spread s LEFT JOIN mad m USING ({on})
    )"""

"""Rollups: each compacted day's measures per cluster and snapshot instant, read by long windows.

A year of minute snapshots is 34 million pod rows but only 2.6 million cluster
snapshot instants, and every idle-cost answer (:func:`~ccanalytics.history.History.idle_cost`
by cluster, by day or in all) needs only, per instant, the sums of the registry's
"sum" measures over its pod rows and whether its listing answered. So compaction
(:func:`~ccanalytics.history.store._maintenance.compact`) also writes that per-instant
table for the day, as Prometheus and Thanos downsample, and readers take it in place of
the day's pod and snapshot rows; days without one (today, a day a late collector added
a file to) are read from their rows, in the same query.

One definition: the rollup's rows are :func:`instant_rows_sql` over the day's files, the
very SQL the queries run over pod rows (the same :data:`~ccanalytics.measures.MEASURES`
sums and :func:`snapshot_instants`), so a rollup holds exactly what a query would have
computed from the day's rows. The query then does the rest (time accounting, windows,
``max_gap``, days) on the instants, whichever their source.

Parameters: the sums judge pods by ``$idle_threshold`` and ``$memory_threshold``. A
rollup is computed at the defaults (:class:`~ccanalytics.measures.Params`); a query with
other thresholds reads the pod rows (no rollup can answer another threshold), and so is
as fast as it was before rollups.

Staleness cannot happen silently: a rollup's name carries a digest of the exact SQL it
ran (so a changed measure or rule retires every rollup), its parameters and the names of
the day's pods and snapshots files it summed (names are unique and never rewritten).
A reader uses a day's rollup only when the day's listed files are exactly those; a day
that gained a file, or was compacted again, is read from its rows until the next
compaction writes its new rollup (and removes the old). Rollups live outside the
tables, in ``STORE/.rollup/`` (hidden: Spark, Dask and DuckDB's globs skip it), one
file per day, and a store without them reads as before.

A month is then 30 small files, and on object storage each is a request per query: so
the first reader of a set of rollups also writes their rows as one file,
``STORE/.rollup/merged/<digest>.parquet`` (:func:`merged_rollups`), named by a digest
of the rollups' names and :data:`~ccanalytics.history.store._fs.FileKey` values, which
later readers of the same set read instead (one request). Like the day cache it is a
cache: made only if absent (a rival's identical copy is as good), skipped on a store
the reader may not write, and copies no reader has used for
:data:`MERGED_KEEP_SECONDS` are removed when a new one is made.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any, Final

from ccanalytics.history.store._fs import Location
from ccanalytics.history.store._layout import DATA_SUFFIX
from ccanalytics.history.store._schema import OK
from ccanalytics.measures import MEASURES, Measure, Params, sql_parameters

__all__ = [
    "ROLLUP_DIR",
    "SUMMED",
    "instant_rows_sql",
    "instant_sums_sql",
    "list_rollups",
    "merged_rollups",
    "rolled_days",
    "rollup_name",
    "rollup_params",
    "snapshot_instants",
    "write_rollup",
]

#: The rollups' folder, in the store's top folder.
ROLLUP_DIR: Final = ".rollup"
#: Merged copies of sets of rollups, in :data:`ROLLUP_DIR` (see the module docstring).
MERGED_DIR: Final = "merged"
#: A merged copy of another set of rollups is removed once this old (a reader opened
#: before the day's compaction may still be reading it).
MERGED_KEEP_SECONDS: Final = 3600.0
#: The registry's sums over pod rows: what a rollup keeps per instant.
SUMMED: Final = tuple(m for m in MEASURES if m.kind == "sum")


def instant_sums_sql(pods: str = "pods", summed: Sequence[Measure] = SUMMED) -> str:
    """One row per cluster and ``observed_at`` of ``pods``: ``cluster_id``, ``t`` (epoch µs)
    and each sum measure of ``summed`` (every one: a rollup's) over the instant's pod rows
    (NULL where no row counts).

    Lean on purpose (the one pass over every pod row): GPU counts are summed as DOUBLE
    in the registry (a BIGINT sum is a 128-bit HUGEINT, three times the CPU time)."""
    sums = ",".join(f"\n               {m.sql_sum()} AS {m.name}" for m in summed)
    return f"""SELECT cluster_id, epoch_us(observed_at) AS t, {sums}
        FROM {pods} GROUP BY cluster_id, observed_at"""


def snapshot_instants(
    source: str = "pods",
    t: str = "epoch_us(observed_at)",
    *,
    grouped: bool = False,
    snapshots: str = "snapshots",
) -> str:
    """CTE ``snapshot_instants``: one row per cluster per snapshot instant, ``t`` in epoch µs.

    The instants are those of the pod rows in ``source`` (the ``pods`` view, or a
    relation already grouped by instant, which saves a scan) and those of the
    ``snapshots`` table, where an empty listing is an instant with no pod rows and a
    failed listing an instant that covers no time. ``ok`` is false only for an instant
    whose every record failed. A store written before the table has only pod rows'
    instants: exactly the accounting it had then.

    ``grouped``: ``source`` holds one row per instant already, with ``cluster_id`` and
    ``t`` (and sums over its pod rows): its rows are kept whole, ``ok`` (a pod row says
    the listing answered), and the snapshots table adds only the instants without pod
    rows, whose other columns are NULL. The same instants, without grouping every
    instant of the store again and joining the sums back (a third of a year's query).
    """
    if grouped:
        return f"""snapshot_instants AS (
        SELECT *, TRUE AS ok FROM {source}
        UNION ALL BY NAME
        SELECT cluster_id, epoch_us(observed_at) AS t, bool_or(outcome = '{OK}') AS ok
        FROM {snapshots} s
        WHERE NOT EXISTS (
            SELECT 1 FROM {source} g
            WHERE g.cluster_id = s.cluster_id AND g.t = epoch_us(s.observed_at)
        )
        GROUP BY cluster_id, epoch_us(observed_at)
    )"""
    return f"""snapshot_instants AS (
        SELECT cluster_id, t, bool_or(ok) AS ok FROM (
            SELECT DISTINCT cluster_id, {t} AS t, TRUE AS ok FROM {source}
            UNION ALL
            SELECT cluster_id, epoch_us(observed_at) AS t, outcome = '{OK}' AS ok
            FROM {snapshots}
        ) GROUP BY cluster_id, t
    )"""


def instant_rows_sql(
    sums: str = "sums", name: str = "snap", summed: Sequence[Measure] = SUMMED
) -> str:
    """CTE ``name``: every instant of :func:`snapshot_instants` (over the grouped ``sums``)
    with ``ok`` and each sum measure of ``summed``, 0 where no pod row counts: with every
    sum, a rollup's rows."""
    measures = ", ".join(f"coalesce({m.name}, 0) AS {m.name}" for m in summed)
    return f"""{name} AS (
        SELECT cluster_id, t, ok, {measures}
        FROM snapshot_instants
    )"""


#: What a rollup holds, from one day's pods (``_day_pods``) and snapshots (``_day_snapshots``).
_ROLLUP_SQL: Final = f"""WITH sums AS ({instant_sums_sql("_day_pods")}),
    {snapshot_instants("sums", grouped=True, snapshots="_day_snapshots")},
    {instant_rows_sql()}
    SELECT * FROM snap ORDER BY cluster_id, t"""


def rollup_params(params: Params | None = None) -> dict[str, Any]:
    """The named parameters the rollup's SQL reads, at ``params`` (default: the defaults)."""
    given = (params if params is not None else Params()).sql()
    bound = sql_parameters(_ROLLUP_SQL)
    return {name: value for name, value in given.items() if name in bound}


def rollup_name(day: str, pods: str, snapshots: str | None) -> str:
    """The rollup's file name for ``day`` summing the files named ``pods`` and
    ``snapshots`` (None: the day has none) at the default parameters."""
    identity = json.dumps(
        [_ROLLUP_SQL, pods, snapshots, rollup_params()], sort_keys=True, default=str
    )
    digest = hashlib.sha256(identity.encode()).hexdigest()[:24]
    return f"{day}.{digest}{DATA_SUFFIX}"


def list_rollups(store: Location) -> frozenset[str]:
    """The names of the rollup files in the store (one listing; none: empty)."""
    folder = store.root / ROLLUP_DIR
    if store.outside(folder):
        return frozenset()
    try:
        entries = store.entries(folder)
    except FileNotFoundError:
        return frozenset()
    return frozenset(n for n, out in entries if n.endswith(DATA_SUFFIX) and not out)


def rolled_days(
    store: Location,
    days: Mapping[str, tuple[list[PurePath], list[PurePath]]],
    names: frozenset[str],
) -> dict[str, PurePath]:
    """The days whose rollup (a name in ``names``) matches their listed files exactly.

    ``days``: per day, its listed pods files and snapshots files. A day qualifies with
    one pods file and at most one snapshots file: what compaction leaves.
    """
    found = {}
    for day, (pods, snapshots) in days.items():
        if len(pods) != 1 or len(snapshots) > 1:
            continue
        name = rollup_name(day, pods[0].name, snapshots[0].name if snapshots else None)
        if name in names:
            found[day] = store.root / ROLLUP_DIR / name
    return found


def write_rollup(store: Location, day: str, pods: PurePath, snapshots: PurePath | None) -> PurePath:
    """Write ``day``'s rollup of the files ``pods`` and ``snapshots`` (unless it exists),
    then remove the day's other rollups (stale: other files or definitions)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from ccanalytics.history.store._duckdb import connect
    from ccanalytics.history.store._schema import empty_table
    from ccanalytics.history.store._write import write_parquet

    folder = store.root / ROLLUP_DIR
    name = rollup_name(day, pods.name, snapshots.name if snapshots is not None else None)
    existing = list_rollups(store)
    if name not in existing:
        lease = connect()  # reads only the tables registered on it
        con = lease.con
        try:
            for table, path in (("pods", pods), ("snapshots", snapshots)):
                con.register(f"_empty_{table}", empty_table(table))
                union = f"SELECT * FROM _empty_{table}"
                if path is not None:
                    con.register(f"_file_{table}", pq.read_table(store.source(path)))
                    union += f" UNION ALL BY NAME SELECT * FROM _file_{table}"
                # The store's own time type, as History's views read it.
                con.execute(
                    f"CREATE TEMP VIEW _day_{table} AS SELECT * REPLACE "
                    f"(CAST(observed_at AS TIMESTAMPTZ) AS observed_at) FROM ({union})"
                )
            rows = con.sql(_ROLLUP_SQL, params=rollup_params()).to_arrow_table()
        finally:
            lease.release()
        store.make_dirs(folder)
        # FileExistsError: another compaction of the day wrote the same rollup.
        with contextlib.suppress(FileExistsError):
            store.create(folder / name, lambda sink: write_parquet(rows, sink))
    for old in existing:
        if old.startswith(f"{day}.") and old != name:
            store.delete(folder / old)
    return folder / name


def merged_rollups(store: Location, paths: Sequence[PurePath]) -> PurePath | None:
    """One file holding the rows of the rollups ``paths``, in their order: the merged
    copy of exactly these files, made now if missing; None when there is nothing to
    merge or the copy cannot be had (a store this reader may not write, a rollup gone:
    the rollups themselves are read, and the query says why if one is gone)."""
    if len(paths) < 2:
        return None
    folder = store.root / ROLLUP_DIR / MERGED_DIR
    try:
        keys = [store.key(path) for path in paths]
        identity = json.dumps([[path.name, *key] for path, key in zip(paths, keys, strict=True)])
        name = hashlib.sha256(identity.encode()).hexdigest()[:32] + DATA_SUFFIX
        existing = [n for n, out in store.entries(folder) if n.endswith(DATA_SUFFIX) and not out]
        if name not in existing:
            _write_merged(store, folder / name, paths)
            _remove_old_copies(store, folder, [n for n in existing if n != name])
    except OSError:
        return None
    return folder / name


def _write_merged(store: Location, path: PurePath, paths: Sequence[PurePath]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ccanalytics.history.store._write import write_parquet

    rows = pa.concat_tables(
        [pq.read_table(store.source(rollup)) for rollup in paths], promote_options="permissive"
    )
    store.make_dirs(path.parent)
    with contextlib.suppress(FileExistsError):  # a rival reader merged the same set
        store.create(path, lambda sink: write_parquet(rows, sink))


def _remove_old_copies(store: Location, folder: PurePath, names: list[str]) -> None:
    cutoff = time.time() - MERGED_KEEP_SECONDS
    for name in names:
        with contextlib.suppress(OSError):  # gone already, or not ours to remove
            if store.key(folder / name)[1] / 1e9 < cutoff:
                store.delete(folder / name)

"""``History(store)``: SQL over a store's Parquet files, in an embedded DuckDB.

The queries run inside DuckDB, which streams the Parquet files (a store larger than
memory is fine); only results become pandas frames, with the live frames' nullable
dtypes. The connection is in memory and locked down before the first query: it may
read the store's folder and nothing else, installs no extension, and so opens no
network connection. Its database outlives it, for the next History of the same store
(:mod:`~ccanalytics.history.store._duckdb`: starting one costs more than a question).

Three views: ``pods`` and ``gpus`` hold every snapshot's rows, and ``snapshots`` one row
per cluster per snapshot, its listing's outcome (each with the bookkeeping
columns ``date``, ``schema_version`` and ``file_index``, which file a row was read from:
the accounting counts each snapshot instant from one file only). Before each query they
are pointed at the files :func:`~ccanalytics.history.store._layout.list_store` lists (which
honours a compaction in progress), and a query that finds a listed file gone (a
compaction finished meanwhile) is run again on a fresh listing. Each listed file is
vetted first (a snapshot file of ours, or a StoreError naming it); the verdicts are
kept in the store's readers' cache (:mod:`~ccanalytics.history.store._vetted`), so a fresh
History reads only the footers of files new or changed since a reader last saw them. A
quiet day of many small files is read from one merged copy of exactly those files
(:mod:`~ccanalytics.history.store._daycache`), which the first reader writes outside the
tables. The views always have at least the columns a file written now would have, with
their types: an empty or missing store gives empty frames with the right columns, and a
column that older files lack reads as null in their rows.

Queries over history belong here, as methods that call ``History._sql`` (:meth:`History.sql`
is the user's own SQL: a History that ran it does not hand its database on).
"""

from __future__ import annotations

import functools
import os
import re
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime, timedelta
from itertools import pairwise
from os import PathLike
from pathlib import Path, PurePath
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar

import duckdb

from ccanalytics.errors import StoreError
from ccanalytics.history.queries._window import BOUNDS_SQL, BOUNDS_VIEW, resolve_window
from ccanalytics.history.store._daycache import DayCache
from ccanalytics.history.store._duckdb import connect
from ccanalytics.history.store._fs import FileKey, Location, dataset_of, open_store
from ccanalytics.history.store._layout import (
    Listing,
    list_store,
    list_tables,
    partition_day,
    store_folder,
)
from ccanalytics.history.store._rollup import list_rollups, merged_rollups, rolled_days
from ccanalytics.history.store._schema import (
    TABLES,
    TimeSpan,
    empty_table,
    schema_key,
    to_pandas,
    vet_file,
)
from ccanalytics.history.store._vetted import Verdict, VetCache
from ccanalytics.measures import Params, renamed
from ccanalytics.measures.rules import RIGHTSIZING_HEADROOM

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

    import pandas as pd
    import pyarrow as pa  # type: ignore[import-untyped]

    from ccanalytics.history.queries._teams import Teams
    from ccanalytics.history.queries._window import DurationLike, TimeLike
    from ccanalytics.history.store._maintenance import StoreReport
    from ccanalytics.measures import GpuTypes

__all__ = ["History"]

_T = TypeVar("_T")

#: A query that keeps finding listed files gone is given up after this many runs
#: (then a StoreError: the store kept changing under it).
MAX_QUERY_ATTEMPTS = 8
#: The pause before the n-th new run is n times this: a compaction of a day takes a
#: moment, and running again at once would likely find the same files going.
RETRY_PAUSE_SECONDS = 0.05
#: More runs of differently-typed files than this and a view reads them all in one
#: read that matches columns by name (slower, but one read, not hundreds).
MAX_SCHEMA_RUNS = 16
#: Vetting this many new files or more is spread over threads.
PARALLEL_VETTING_FROM = 64
#: Columns of the views that are store bookkeeping, not pod data: left out of pods()/gpus().
BOOKKEEPING_COLUMNS = ("date", "schema_version", "file_index")
#: Row order of pods()/gpus() (columns every frame has, per the public API).
_ORDER = {
    "pods": "observed_at, cluster_id, pod_id",
    "gpus": "observed_at, cluster_id, pod_id, gpu_index",
    "snapshots": "observed_at, cluster_id",
}
_VANISHED = re.compile(
    r"No files found that match|No such file|Cannot open file"
    # An S3 object gone between the listing and the read (pyarrow's words for it):
    r"|Path does not exist|RESOURCE_NOT_FOUND|NO_SUCH_KEY|NoSuchKey",
    re.IGNORECASE,
)


class History:
    """The read side of a store: ``with History(store) as h: h.pods(since="2026-11-20")``.

    Parameters
    ----------
    store:
        The store's folder (see :mod:`ccanalytics.history`). A path that holds no
        store (missing, or no file in its ``pods/``, ``gpus/`` or ``snapshots/``: a
        typo, another folder, an S3 prefix nothing was collected to) is a
        :class:`~ccanalytics.errors.StoreError` naming it: only
        :func:`~ccanalytics.history.collect` creates a store. A path that is not a
        folder, a data file that is not a snapshot file of ours
        (:func:`~ccanalytics.history.store._schema.file_problem`: what
        :func:`~ccanalytics.history.verify` reports too) and a folder or file that is a
        symbolic link out of the store are each a
        :class:`~ccanalytics.errors.StoreError` naming the path, never rows of nulls.

    Notes
    -----
    ``since``/``until`` take anything :class:`pandas.Timestamp` reads (a naive time
    means UTC) or a duration back from the newest snapshot: a
    :class:`~datetime.timedelta` or the CLI's ``--window`` strings (``"24h"``,
    ``"7d"``, ``"1h30m"``); the window is ``[since, until)`` on ``observed_at``. A
    string of numbers and units only (``s``, ``m``/``min``, ``h``, ``d``) is always a
    duration; every other string is a timestamp. ``max_gap`` and ``freq`` take the
    same durations.

    The ``snapshots`` table (one row per cluster per snapshot: ``ok`` with the number of
    pods, or the failure's exception class and HTTP status) is what tells an empty
    listing (observed time at zero cost) from a failed one (unobserved time, named in
    :meth:`coverage`). Stores written before it (no ``snapshots`` folder, or days
    without it) still read: their instants are their pod rows' ``observed_at``, so an
    empty listing there reads as unobserved and :meth:`coverage` counts no failure.

    Each History has a DuckDB connection of its own. Its in-memory database outlives
    :meth:`close`, for the next History of the same store in this process (at most
    four are kept; starting a database costs more than most questions), unless SQL of
    your own ran in it (:meth:`sql`, :attr:`connection`): that one is closed with it.
    """

    def __init__(self, store: str | PathLike[str] | Location) -> None:
        self._location = store_folder(open_store(store, resolve=True))
        self._store = self._location.root
        # An S3 store's objects reach DuckDB as pyarrow datasets registered on the
        # connection (DuckDB's httpfs extension is never loaded): it may read no folder.
        readable = [f"{self._store}{os.sep}"] if self._location.local else []
        self._lease = connect(readable)
        self._con = self._lease.con
        self._spill = self._lease.spill
        self._finalizer = weakref.finalize(self, self._lease.release)
        #: Verdicts on the store's files, kept while each file is unchanged (_vetted).
        self._cache: VetCache | None = None
        #: Merged copies of quiet days of many files, read in their place (_daycache).
        self._days = DayCache(self._location, self._read_files)
        #: An S3 store's file schemas by schema key (one footer read per schema; none
        #: for the schemas a file written now has).
        self._schemas: dict[str, pa.Schema] = {}
        #: The files each view reads now (a refresh that lists the same keeps the view).
        self._viewed: dict[str, object] = {}
        #: Inside _one_listing (nested: its depth), and whether it has listed the store.
        self._questions = 0
        self._listed_once = False
        for table in TABLES:
            empty = empty_table(table)
            self._con.register(f"_empty_{table}", empty)
            self._schemas[schema_key(empty.schema, table)] = empty.schema
        self._retrying(self.refresh)
        if not self._holds_store:
            self.close()
            raise self._no_store()

    # -- lifetime -------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the DuckDB connection (idempotent; :mod:`~ccanalytics.history.store._duckdb`
        keeps its database for the next History of the store)."""
        self._finalizer()

    def __repr__(self) -> str:
        return f"History({self._location.show(self._store)!r})"

    def _no_store(self) -> StoreError:
        """The error of a path that holds no store: a typo or another folder would
        otherwise answer every question with an empty frame. Only collect creates one."""
        where = self._location.show(self._store)
        folders = [f"{table}/" for table in TABLES]
        why = (
            f"no file in its {', '.join(folders[:-1])} or {folders[-1]}"
            if self._location.exists()
            else "it does not exist"
        )
        return StoreError(
            f"the store {where} holds no snapshot: {why} (is the path right? collect "
            "creates a store)",
            self._location.at(self._store),
        )

    @property
    def store(self) -> Path | str:
        """The store's folder (absolute), or its ``s3://bucket/prefix`` address."""
        at = self._location.at(self._store)
        return Path(at) if isinstance(at, PurePath) else at

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection with the views ``pods`` and ``gpus`` (read-only access).

        The views list the files as of the last :meth:`refresh` (each :meth:`sql` call
        refreshes them); prefer :meth:`sql`, which also retries across a compaction.
        Its database is not handed to another History once this one closes.
        """
        self._lease.touch()
        return self._con

    # -- the views ------------------------------------------------------------------

    def refresh(self) -> None:
        """Point the views at the store's files as they are now."""
        if self._listed_once:
            return  # one question, one listing (_one_listing)
        # One listing of an S3 store answers every table, its rollups and the day cache
        # (the markers still get their own listing, after the data files' one).
        with self._location.surveyed():
            self._refresh()
        self._listed_once = self._questions > 0

    @contextmanager
    def _one_listing(self, *, listed: bool = False) -> Iterator[None]:
        """The queries inside read the store as one listing found it.

        A question answered in several queries (spend's periods and burn rates, a
        policy's judgements) is then answered from one state of the store, not from a
        store that a collector added to between two of its queries; and an S3 store is
        listed once for it, not once a query. A query that finds a listed file gone (a
        compaction) still lists again (:meth:`_retrying`). ``listed``: the views read a
        listing made for this question already (the History was opened for it).
        """
        if listed and not self._questions:
            self._listed_once = True
        self._questions += 1
        try:
            yield
        finally:
            self._questions -= 1
            if not self._questions:
                self._listed_once = False

    def _refresh(self) -> None:
        listings = list_tables(self._location, list(TABLES), every_marker=False)
        # Any file a writer left, even one being written, says a store is there.
        self._holds_store = any(
            listing.files or listing.temporary or listing.markers for listing in listings.values()
        )
        for listing in listings.values():
            if listing.outside:
                where = listing.outside[0]
                raise StoreError(
                    f"{where} lies outside the store {self._store} (a symbolic link to "
                    f"{os.path.realpath(where)}); History reads only inside the store's "
                    "folder: move the data in",
                    where,
                )
        verdicts, keys = self._vet(listings)
        spans = []
        viewed: dict[str, tuple[tuple[PurePath, str], ...]] = {}
        for table, listing in listings.items():
            found = [verdicts.get(path) for path in listing.files]
            spans += [None if verdict is None else verdict[1] for verdict in found]
            files = tuple(
                (path, "" if verdict is None else verdict[0])
                for path, verdict in zip(listing.files, found, strict=True)
            )
            # A quiet day of many small files is read from its one merged copy (_daycache).
            files = self._days.substitute(table, files, keys)
            viewed[table] = files
            self._define(table, table, files)
        self._define_rollups(listings, viewed)
        bounds = _bounds_sql(spans)
        if self._viewed.get(BOUNDS_VIEW) != bounds:
            self._con.execute(f"CREATE OR REPLACE TEMP VIEW {BOUNDS_VIEW} AS {bounds}")
            self._viewed[BOUNDS_VIEW] = bounds
        # After the views: the queries' accounting module (pandas) is loaded by then anyway.
        from ccanalytics.history.queries._accounting import ONE_FILE_VIEW

        pods = [verdicts.get(path) for path in listings["pods"].files]
        one_file = _spans_disjoint([None if v is None else v[1] for v in pods])
        if self._viewed.get(ONE_FILE_VIEW) != one_file:
            self._con.execute(
                f"CREATE OR REPLACE TEMP VIEW {ONE_FILE_VIEW} AS SELECT {one_file} AS one_file"
            )
            self._viewed[ONE_FILE_VIEW] = one_file
        self._days.sweep()

    def _define(self, name: str, table: str, files: tuple[tuple[PurePath, str], ...]) -> None:
        """View ``name`` of ``table``'s ``files`` (unless it reads exactly these already)."""
        if self._viewed.get(name) != files:
            self._con.execute(
                f"CREATE OR REPLACE TEMP VIEW {name} AS {self._view_sql(table, files, name)}"
            )
            self._viewed[name] = files

    def _define_rollups(
        self,
        listings: dict[str, Listing],
        viewed: dict[str, tuple[tuple[PurePath, str], ...]],
    ) -> None:
        """The rollups' views (:data:`~ccanalytics.history.queries._accounting.ROLLUP_VIEW`).

        A day is read from its rollup when its listed pods and snapshots files are
        exactly the ones the rollup summed (:func:`~ccanalytics.history.store._rollup.rolled_days`);
        ``_pods_rest`` and ``_snapshots_rest`` hold every other day's files.
        """
        from ccanalytics.history.queries._accounting import ROLLUP_VIEW

        per_day: dict[str, tuple[list[PurePath], list[PurePath]]] = {}
        for table, index in (("pods", 0), ("snapshots", 1)):
            for path in listings[table].files:
                day = partition_day(path)
                if day is not None:
                    per_day.setdefault(day, ([], []))[index].append(path)
        names = list_rollups(self._location) if per_day else frozenset()
        rolled = rolled_days(self._location, per_day, names)
        if rolled:
            for table in ("pods", "snapshots"):
                rest = tuple(f for f in viewed[table] if partition_day(f[0]) not in rolled)
                self._define(f"_{table}_rest", table, rest)
            files = [str(path) for _, path in sorted(rolled.items())]
            if self._viewed.get("_rollup") != files:
                # One merged file for the set (one request on S3), else the rollups.
                paths = [path for _, path in sorted(rolled.items())]
                merged = merged_rollups(self._location, paths)
                paths = paths if merged is None else [merged]
                if self._location.local:
                    self._con.execute("SET VARIABLE _files_rollup = ?", [[str(p) for p in paths]])
                    source = "read_parquet(getvariable('_files_rollup'))"
                else:
                    source = self._rollup_dataset(paths)
                self._con.execute(f"CREATE OR REPLACE TEMP VIEW _rollup AS SELECT * FROM {source}")
                self._viewed["_rollup"] = files
        if self._viewed.get(ROLLUP_VIEW) != len(rolled):
            self._con.execute(
                f"CREATE OR REPLACE TEMP VIEW {ROLLUP_VIEW} AS SELECT {len(rolled)} AS days"
            )
            self._viewed[ROLLUP_VIEW] = len(rolled)

    def _rollup_dataset(self, paths: list[PurePath]) -> str:
        """An S3 store's rollups as one registered pyarrow dataset (one footer read)."""
        schema = pq_schema(self._location, paths[0])
        entries = [(path, None, index) for index, path in enumerate(paths)]
        # Fetched whole now (one GET each, the set is one merged copy when it can be):
        # most questions read the rollups, which are then scanned from memory, with no
        # read through pyarrow's S3 filesystem (the dataset still names it).
        dataset = dataset_of(self._location, entries, schema, with_date=False, fetch=True)
        self._con.register("_data_rollup", dataset)
        return "_data_rollup"

    def _view_sql(
        self, table: str, files: tuple[tuple[PurePath, str], ...], name: str | None = None
    ) -> str:
        """The view of ``table`` over ``files`` (in listing order, each with its schema key)."""
        name = name or table
        empty = (
            f"SELECT *, CAST(NULL AS DATE) AS date, CAST(NULL AS UBIGINT) AS file_index "
            f"FROM _empty_{table}"
        )
        if not self._location.local:
            dataset = self._dataset(table, files, name)
            return _times_as_stored(table, f"{empty} UNION ALL BY NAME SELECT * FROM {dataset}")
        # Runs of consecutive files with one schema, each read without matching columns
        # by name: union_by_name reads every file's footer when the view is bound, and
        # again for each query (seconds for a month of 5-minute files). file_index
        # (DuckDB's virtual column: which file a row came from) counts within a read,
        # so each run adds its offset to keep the listing's order across runs.
        runs: list[tuple[int, list[str]]] = []
        previous = None
        for index, (path, key) in enumerate(files):
            if not runs or not key or key != previous:
                runs.append((index, []))
            runs[-1][1].append(str(path))
            previous = key
        if len(runs) > MAX_SCHEMA_RUNS:  # schemas interleaved: one read that matches names
            runs = [(0, [str(path) for path, _ in files])]
            options = "hive_partitioning = true, union_by_name = true"
        else:
            options = "hive_partitioning = true"
        parts = [empty]
        for number, (offset, names) in enumerate(runs):
            variable = f"_files_{name}_{number}"
            self._con.execute(f"SET VARIABLE {variable} = ?", [names])
            parts.append(
                f"SELECT {_times_cast(table)}, CAST(file_index + {offset} AS UBIGINT) "
                f"AS file_index FROM read_parquet(getvariable('{variable}'), {options})"
            )
        return _times_as_stored(table, " UNION ALL BY NAME ".join(parts))

    def _dataset(
        self, table: str, files: tuple[tuple[PurePath, str], ...], view: str | None = None
    ) -> str:
        """An S3 store's ``files`` registered as one pyarrow dataset; its name.

        Each file is a fragment whose ``date`` (its partition) and ``file_index`` (its
        place in the listing) pyarrow fills in, as DuckDB's ``read_parquet`` does for
        a folder; its schema is the files' own, unified by name (columns a file lacks
        read as null), so every view means the same on both backends.
        """
        schema = self._unified([path for path, _ in files], [key for _, key in files])
        entries = [(path, partition_day(path), index) for index, (path, _) in enumerate(files)]
        name = f"_data_{view or table}"
        self._con.register(name, dataset_of(self._location, entries, schema, with_date=True))
        return name

    def _unified(self, paths: list[PurePath], keys: list[str]) -> pa.Schema:
        """The schema of files read as one: each distinct schema's footer read once."""
        import pyarrow as pa

        schemas = []
        seen: set[str] = set()
        for path, key in zip(paths, keys, strict=True):
            if key in seen:
                continue  # "" (unknown) is never seen: such a file is read on its own
            known = self._schemas.get(key) if key else None
            if known is None:
                known = pq_schema(self._location, path)
                if key:
                    self._schemas[key] = known
            if key:
                seen.add(key)
            schemas.append(known)
        if not schemas:
            return pa.schema([])
        return pa.unify_schemas(schemas, promote_options="permissive")

    def _read_files(self, paths: list[PurePath], by_name: bool) -> pa.Table | None:
        """Every row of ``paths`` with ``file_index`` (for the day cache); None if one is gone."""
        if not self._location.local:
            try:
                some = paths if by_name else paths[:1]  # else they share one schema
                schema = self._unified(some, [""] * len(some))
                entries = [(path, None, index) for index, path in enumerate(paths)]
                dataset = dataset_of(self._location, entries, schema, with_date=False)
                return dataset.to_table()
            except Exception:  # a file gone or unreadable: read from the files, which says why
                return None
        options = ", union_by_name = true" if by_name else ""
        query = f"SELECT *, file_index FROM read_parquet(?, hive_partitioning = false{options})"
        try:
            return self._con.sql(query, params=[[str(p) for p in paths]]).to_arrow_table()
        except duckdb.Error:
            return None  # a file gone or unreadable: read from the files, which says why

    def _vet(
        self, listings: dict[str, Listing]
    ) -> tuple[dict[PurePath, Verdict], dict[PurePath, FileKey]]:
        """Refuse a file that is not a snapshot of ours, before DuckDB reads it as nulls.

        Returns each listed file's schema key and time span, and its
        :data:`~ccanalytics.history.store._fs.FileKey`. A verdict is reused while the file is
        unchanged (:mod:`~ccanalytics.history.store._vetted`: in this History and across
        processes, through the store's cache); files new to it are vetted in threads
        (reading a footer releases the GIL).
        """
        if self._cache is None:
            self._cache = VetCache.load(self._location)
        cache = self._cache
        keys: dict[PurePath, Verdict] = {}
        stats: dict[PurePath, FileKey] = {}
        todo: list[tuple[str, PurePath, str, FileKey]] = []
        listed: set[str] = set()
        prefix = len(str(self._store)) + 1  # listed paths are the store's + "/" + relative
        for table, listing in listings.items():
            for path in listing.files:
                relative = str(path)[prefix:]
                listed.add(relative)
                try:
                    stat = self._location.key(path)
                except FileNotFoundError:
                    continue  # a compaction removed it: the query lists again
                stats[path] = stat
                known = cache.lookup(relative, stat)
                if known is not None:
                    keys[path] = known
                else:
                    todo.append((table, path, relative, stat))
        for (_, path, relative, stat), verdict in zip(todo, self._judge(todo), strict=True):
            if verdict is None:
                continue  # vanished meanwhile
            problem, key, span = verdict
            if problem is not None:
                where = self._location.at(path)
                raise StoreError(
                    f"cannot read store file {where}: {problem} (move it out of the store)", where
                )
            cache.record(relative, stat, (key, span))
            keys[path] = (key, span)
        cache.keep_only(listed)
        # The cache is saved once the query has run (_retrying): not between listing and reading.
        return keys, stats

    def _judge(
        self, todo: list[tuple[str, PurePath, str, FileKey]]
    ) -> list[tuple[str | None, str, TimeSpan] | None]:
        location = self._location

        def one(
            item: tuple[str, PurePath, str, FileKey],
        ) -> tuple[str | None, str, TimeSpan] | None:
            try:
                return vet_file(location.source(item[1]), item[0])
            except FileNotFoundError:
                return None

        if len(todo) < PARALLEL_VETTING_FROM:
            return [one(item) for item in todo]
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
            return list(pool.map(one, todo))

    def verify(self) -> StoreReport:
        """Unreadable files, crash leftovers and unfinished compactions of the store."""
        from ccanalytics.history.store._maintenance import verify

        return verify(self._location)

    # -- queries --------------------------------------------------------------------

    def sql(self, query: str, params: Any = None) -> pd.DataFrame:
        """Run ``query`` (SQL over the views ``pods`` and ``gpus``) and return a frame.

        ``params`` fills ``?`` or ``$name`` placeholders (a sequence or a mapping).
        Results have the live frames' nullable dtypes; times are UTC. A corrupt store
        file raises :class:`~ccanalytics.errors.StoreError` naming the file; SQL
        mistakes raise DuckDB's own errors.
        """
        self._lease.touch()  # SQL of the user's own: the database is not handed on
        return self._sql(query, params)

    def _sql(self, query: str, params: Any = None) -> pd.DataFrame:
        """:meth:`sql` for this package's own queries (its database may be kept)."""

        def run() -> pa.Table | None:
            self.refresh()
            relation = self._con.sql(query, params=params)
            return relation.to_arrow_table() if relation is not None else None

        result = self._retrying(run)
        return to_pandas(result) if result is not None else _empty_frame()

    def _retrying(self, action: Callable[[], _T]) -> _T:
        """``action()``, again on a fresh listing if a listed file vanished meanwhile."""
        for attempt in range(1, MAX_QUERY_ATTEMPTS + 1):
            try:
                result = action()
            except (
                duckdb.IOException,
                duckdb.InvalidInputException,
                duckdb.PermissionException,
            ) as err:
                if not _VANISHED.search(str(err)):
                    raise self._store_error(err) from None
            except FileNotFoundError:  # the same, found by a footer read (an S3 view's schema)
                pass
            else:
                # The verdicts are written after the query, not in the moment between
                # listing the files and reading them: the write (fsync included) would
                # widen the window in which a compaction removes a listed file.
                if self._cache is not None:
                    self._cache.save()
                return result
            # A compaction removed a listed file: list again, inside a question too.
            if attempt < MAX_QUERY_ATTEMPTS:
                self._listed_once = False
                time.sleep(RETRY_PAUSE_SECONDS * attempt)
        raise StoreError(
            f"the store {self._location.show(self._store)} kept changing under the query: {MAX_QUERY_ATTEMPTS} "
            "runs each found a listed file gone (is something compacting it in a loop?)",
            self._store,
        )

    def pods(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        cluster_ids: str | Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """Every snapshot's pod rows in the window, oldest first (see the class docstring).

        Rows as stored: a cluster instant two collects wrote within the same second is
        here twice until :func:`~ccanalytics.history.compact` merges its day, which
        keeps the first file's copy. Every figure of this class counts it once either way.
        """
        return self._rows("pods", since, until, cluster_ids)

    def gpus(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        cluster_ids: str | Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """Every snapshot's GPU rows in the window, oldest first."""
        return self._rows("gpus", since, until, cluster_ids)

    def snapshots(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        cluster_ids: str | Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """The snapshots table's rows in the window, oldest first: one per cluster per
        snapshot (``pods``, ``outcome``: ``"ok"`` or the exception class, ``http_status``).

        Empty for a store written before the table (see the class docstring).
        """
        return self._rows("snapshots", since, until, cluster_ids)

    def coverage(self, since: TimeLike = None, until: TimeLike = None) -> pd.DataFrame:
        """Per cluster: snapshots taken, failed and missing against its schedule, and why
        the last one failed; see :func:`ccanalytics.history.queries._queries.coverage`."""
        from ccanalytics.history.queries import _queries

        return self._answer(
            lambda start, end: _queries.coverage(self._con, start, end), since, until
        )

    def _rows(
        self, table: str, since: TimeLike, until: TimeLike, cluster_ids: str | Iterable[str] | None
    ) -> pd.DataFrame:
        with self._one_listing():  # the window and its rows from the same files
            return self._rows_in(
                table, *self._retrying(lambda: self._window(since, until)), cluster_ids
            )

    def _rows_in(
        self,
        table: str,
        start: pd.Timestamp | None,
        end: pd.Timestamp | None,
        cluster_ids: str | Iterable[str] | None,
    ) -> pd.DataFrame:
        where: list[str] = ["TRUE"]
        params: dict[str, Any] = {}
        if start is not None:
            # The date condition lets DuckDB skip whole partitions without opening them.
            where.append("observed_at >= CAST($start AS TIMESTAMPTZ)")
            where.append("date >= CAST($start_day AS DATE)")
            params |= {"start": start.isoformat(), "start_day": start.strftime("%Y-%m-%d")}
        if end is not None:
            where.append("observed_at < CAST($end AS TIMESTAMPTZ)")
            where.append("date <= CAST($end_day AS DATE)")
            params |= {"end": end.isoformat(), "end_day": end.strftime("%Y-%m-%d")}
        if cluster_ids is not None:
            ids = [cluster_ids] if isinstance(cluster_ids, str) else list(cluster_ids)
            where.append("list_contains($ids, cluster_id)")
            params["ids"] = [str(cid) for cid in ids]
        query = (
            f"SELECT * EXCLUDE ({', '.join(BOOKKEEPING_COLUMNS)}) FROM {table} "
            f"WHERE {' AND '.join(where)} ORDER BY {_ORDER[table]}"
        )
        return self._sql(query, params).reset_index(drop=True)

    def _window(
        self, since: TimeLike, until: TimeLike
    ) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
        self.refresh()
        return resolve_window(self._con, since, until)

    # -- answers over a window (computed in SQL by _queries and _stragglers) ---------

    def idle_cost(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        by: Literal["cluster", "day", "pod"] | None = "cluster",
        idle_threshold: float | None = None,
        max_gap: DurationLike | None = None,
        params: Params | None = None,
        threshold: float | None = None,
    ) -> pd.DataFrame:
        """Spend, idle spend and unused-GPU spend in the window, per ``by`` value.

        See :func:`ccanalytics.history.queries._queries.idle_cost` for the columns (USD,
        hours, the registry's shares) and the time accounting; ``by`` is ``"cluster"``,
        ``"day"``, ``"pod"`` or ``None``. ``idle_threshold`` (percent, default 10) is the
        live rule's; ``params`` (:class:`ccanalytics.measures.Params`) gives every
        threshold at once; ``threshold=`` is the old spelling of ``idle_threshold=``
        (DeprecationWarning). With no covered time the sums are 0.
        """
        from ccanalytics.history.queries import _queries

        idle = renamed("threshold", "idle_threshold", threshold, idle_threshold)
        judged_by = Params.of(params, idle_threshold=idle)
        return self._answer(
            lambda start, end: _queries.idle_cost(
                self._con, start, end, by=by, params=judged_by, max_gap=max_gap
            ),
            since,
            until,
        )

    def _idle_cost_since(
        self, starts: Sequence[pd.Timestamp], until: pd.Timestamp, max_gap: DurationLike | None
    ) -> list[pd.DataFrame]:
        """:meth:`idle_cost` by cluster from each of ``starts`` to ``until``, in one query
        (:func:`~ccanalytics.history.queries._queries.idle_cost_since`)."""
        from ccanalytics.history.queries import _queries

        def run() -> list[pd.DataFrame]:
            self.refresh()
            return _queries.idle_cost_since(self._con, starts, until, max_gap=max_gap)

        return self._retrying(run)

    def waste(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        by: Literal["cluster", "pod"] | None = "cluster",
        max_gap: DurationLike | None = None,
        params: Params | None = None,
    ) -> pd.DataFrame:
        """What each waste class cost in the window, USD: one row per ``by`` value.

        ``h.waste("7d", by="pod")``: per pod (or ``"cluster"``, or ``None`` for one row),
        a column per class of the registry (``idle_empty_cost``, ``idle_loaded_cost``,
        ``straggler_cost``, ``idle_gpus_cost``, ``low_compute_cost``), their sum
        ``waste_cost``, ``total_cost`` and ``waste_share``. A pod-snapshot is in one class
        at most (:mod:`ccanalytics.measures.rules`), so ``idle_empty_cost +
        idle_loaded_cost`` is :meth:`idle_cost`'s ``idle_cost``. ``params`` judges
        (idle, memory and low-compute lines, straggler ``z`` and ``min_gap``). See
        :func:`ccanalytics.history.queries._waste.waste`.
        """
        from ccanalytics.history.queries import _waste

        judged_by = params if params is not None else Params()
        return self._answer(
            lambda start, end: _waste.waste(
                self._con, start, end, by=by, params=judged_by, max_gap=max_gap
            ),
            since,
            until,
        )

    def rightsizing(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        gpu_types: GpuTypes | None = None,
        headroom: float = RIGHTSIZING_HEADROOM,
        max_gap: DurationLike | None = None,
        params: Params | None = None,
    ) -> pd.DataFrame:
        """Right-sizing hints over the window, with what each saves per month (USD, 30 days).

        ``h.rightsizing("7d")``: one row per hint, largest saving first: the pod
        (``cluster_id, pod_id, name``), its ``gpu_type`` and ``gpu_count``, the
        ``suggested_type`` and ``suggested_count``, ``monthly_saving``, ``reason``, and
        the evidence (peak GPU memory in GB, mean utilization, hours observed). "Fits on
        fewer GPUs": GPUs below the idle line in every snapshot; "fits a cheaper type":
        a pod under ``params.low_compute_threshold`` whose fullest GPU's peak memory
        plus ``headroom`` (0.2: 20 %) fits one GPU of a type the store saw cost less.
        ``gpu_types``: a TOML file (or mapping ``{gpu id: GB}``) extending the packaged
        table (:func:`ccanalytics.measures.gpu_types`). See
        :mod:`ccanalytics.history.queries._rightsizing`.
        """
        from ccanalytics.history.queries import _rightsizing
        from ccanalytics.measures import gpu_types as load_gpu_types

        memory = load_gpu_types(gpu_types)
        judged_by = params if params is not None else Params()
        return self._answer(
            lambda start, end: _rightsizing.rightsizing(
                self._con,
                start,
                end,
                memory=memory,
                headroom=headroom,
                params=judged_by,
                max_gap=max_gap,
            ),
            since,
            until,
        )

    def utilization(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        freq: DurationLike = "1h",
        by: Literal["cluster", "rank", "pod"] = "cluster",
        max_gap: DurationLike | None = None,
    ) -> pd.DataFrame:
        """GPU utilization per ``freq`` bucket, long format: ``time, cluster_id, ...``.

        ``by`` is ``"cluster"``, ``"rank"`` or ``"pod"``; unobserved buckets are <NA>.
        See :func:`ccanalytics.history.queries._queries.utilization`.
        """
        from ccanalytics.history.queries import _queries

        return self._answer(
            lambda start, end: _queries.utilization(
                self._con, start, end, freq=freq, by=by, max_gap=max_gap
            ),
            since,
            until,
        )

    def stragglers(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        min_share: float | None = None,
        idle_threshold: float | None = None,
        z: float | None = None,
        min_gap: float | None = None,
        params: Params | None = None,
    ) -> pd.DataFrame:
        """Per (cluster_id, rank): snapshots judged, flagged, share flagged (>= ``min_share``).

        Flagged by the rule of :func:`ccanalytics.analysis.stragglers`, snapshot by
        snapshot, at ``idle_threshold``, ``z`` and ``min_gap`` (or ``params``'s; the
        defaults are the live function's); ``min_share`` defaults to the chronic share
        (0.5). See :func:`ccanalytics.history.queries._stragglers.stragglers`.
        """
        from ccanalytics.history.queries import _stragglers

        judged_by = Params.of(params, idle_threshold=idle_threshold, z=z, min_gap=min_gap)
        return self._answer(
            lambda start, end: _stragglers.stragglers(
                self._con, start, end, min_share=min_share, params=judged_by
            ),
            since,
            until,
        )

    def straggler_flags(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        params: Params | None = None,
    ) -> pd.DataFrame:
        """Every judgement of the straggler rule in the window: one row per snapshot and rank.

        Columns ``cluster_id, observed_at, rank, deficit, flagged``: what
        :meth:`stragglers` counts, for drill-downs (the report's runs of flagged snapshots).
        """
        from ccanalytics.history.queries import _stragglers

        judged_by = params if params is not None else Params()
        return self._answer(
            lambda start, end: _stragglers.flags(self._con, start, end, params=judged_by),
            since,
            until,
        )

    def pod_lifetimes(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        idle_threshold: float | None = None,
        max_gap: DurationLike | None = None,
        params: Params | None = None,
        threshold: float | None = None,
    ) -> pd.DataFrame:
        """Per pod seen: first/last seen, statuses, observed hours, cost in this window, idle
        time share.

        Most expensive idle pods first; see
        :func:`ccanalytics.history.queries._queries.pod_lifetimes`. ``threshold=`` is the
        old spelling of ``idle_threshold=`` (DeprecationWarning).
        """
        from ccanalytics.history.queries import _queries

        idle = renamed("threshold", "idle_threshold", threshold, idle_threshold)
        judged_by = Params.of(params, idle_threshold=idle)
        return self._answer(
            lambda start, end: _queries.pod_lifetimes(
                self._con, start, end, params=judged_by, max_gap=max_gap
            ),
            since,
            until,
        )

    def spend(
        self,
        at: str | datetime | pd.Timestamp | None = None,
        *,
        by: Literal["cluster"] | None = "cluster",
        max_gap: DurationLike | None = None,
        limit: float | Mapping[str, float] | None = None,
    ) -> pd.DataFrame:
        """Spend so far in the current UTC day, ISO week and month, and its projection.

        Parameters
        ----------
        at
            The instant to judge (anything :class:`pandas.Timestamp` reads; naive means
            UTC); ``None``: the store's newest snapshot.
        by
            ``"cluster"``: one row per cluster and period; ``None``: one row per period.
        max_gap
            As for :meth:`idle_cost`.
        limit
            A budget in USD, for every period or per period (``{"month": 4000}``):
            ``breach_at`` says when the projection reaches it (NULL without one).

        Returns
        -------
        pandas.DataFrame
            One row per period (``day``, ``week``, ``month``) and cluster, with the
            columns of :data:`ccanalytics.history.SPEND_COLUMNS`: ``spent`` is Σ cost·Δt
            from the period's start to now over observed time only, ``burn_rate`` the
            USD/h of each cluster's latest snapshot, and ``projected`` = ``spent`` +
            ``burn_rate`` × ``hours_left``, and ``breach_at`` the UTC instant that line
            reaches ``limit`` (when ``spent < limit < projected``; else NULL). Empty
            when the store holds no snapshot.
        """
        from ccanalytics.history.queries import _spend
        from ccanalytics.history.queries._window import _timestamp, as_duration

        instant = None if at is None else _timestamp(at, "at")
        gap = None if max_gap is None else as_duration(max_gap)
        if max_gap is not None and gap is None:
            raise ValueError(f"max_gap={max_gap!r} is not a duration like 90min, 24h or 1h30m")
        with self._one_listing():
            self.refresh()
            return _spend.spend(self, instant, by=by, max_gap=gap, limit=limit)

    def spend_anomalies(
        self,
        at: str | datetime | pd.Timestamp | None = None,
        *,
        weeks: int | None = None,
        z: float | None = None,
    ) -> pd.DataFrame:
        """Each cluster's latest complete hour of spend against the same hour of past weeks.

        ``at``: judge as of that instant (default: the store's newest snapshot). The
        baseline is the same hour of the week 1 to ``weeks`` weeks back (default 4),
        judged by the robust z (median and MAD, the straggler rule's statistics); an
        hour is ``unusual`` when its z is above ``z`` (default 3.5) and it spent at least
        1.5 times its usual. Fewer than 3 baseline weeks observed: no z, never unusual.
        Columns: :data:`ccanalytics.history.SPEND_ANOMALY_COLUMNS`;
        the rule is :mod:`ccanalytics.history.queries._anomalies`'. Empty for an empty store.
        """
        from ccanalytics.history.queries import _anomalies
        from ccanalytics.history.queries._window import _timestamp
        from ccanalytics.measures.rules import SPEND_ANOMALY_Z, SPEND_BASELINE_WEEKS

        instant = None if at is None else _timestamp(at, "at")

        def run() -> pd.DataFrame:
            self.refresh()
            now = resolve_window(self._con, timedelta(0), None)[0] if instant is None else instant
            return _anomalies.spend_anomalies(
                self._con,
                now,
                weeks=SPEND_BASELINE_WEEKS if weeks is None else weeks,
                z=SPEND_ANOMALY_Z if z is None else float(z),
            )

        return self._retrying(run)

    def showback(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        by: Literal["hour", "day"] = "hour",
        teams: Teams | str | PathLike[str] | None = None,
        idle_threshold: float | None = None,
        max_gap: DurationLike | None = None,
        params: Params | None = None,
    ) -> pd.DataFrame:
        """What each pod cost per UTC hour (or day) of the window, and whose it was.

        Parameters
        ----------
        since, until
            The window, as for :meth:`idle_cost`: ``h.showback("7d")`` is the week
            before the newest snapshot.
        by
            ``"hour"`` or ``"day"``: the charge periods (UTC), each clipped to the window.
        teams
            A team mapping (:class:`ccanalytics.history.Teams`, or the path of its TOML
            file: cluster and pod-name globs to a team, the first matching rule wins);
            ``None``: every pod is ``"unallocated"``. A bad file raises
            :class:`~ccanalytics.errors.TeamsError` before the store is read.
        idle_threshold, params, max_gap
            As for :meth:`idle_cost`.

        Returns
        -------
        pandas.DataFrame
            One row per pod and period in which the pod was observed, with the columns
            of :data:`ccanalytics.history.SHOWBACK_COLUMNS`. ``cost`` is Σ cost·Δt by the
            one rule of time :meth:`idle_cost` uses, unrounded: the rows sum to its
            ``total_cost`` over the same window (and any grouping of them to the
            matching answer: per cluster, per day, per pod).
        """
        from ccanalytics.history.queries import _showback

        mapping = _showback.resolve_teams(teams)  # a bad file fails before any query
        judged_by = Params.of(params, idle_threshold=idle_threshold)
        return self._answer(
            lambda start, end: _showback.showback(
                self._con, start, end, by=by, teams=mapping, params=judged_by, max_gap=max_gap
            ),
            since,
            until,
        )

    def window_bounds(
        self, since: TimeLike = None, until: TimeLike = None
    ) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
        """The window ``[start, end)`` these bounds select now, in UTC (``None``: open).

        A timedelta is resolved against the newest snapshot, as every query resolves it:
        ``h.window_bounds(timedelta(hours=24))`` says which day ``h.idle_cost(...)`` covers.
        """
        return self._retrying(lambda: self._window(since, until))

    def _answer(
        self, query: Callable[[Any, Any], pd.DataFrame], since: TimeLike, until: TimeLike
    ) -> pd.DataFrame:
        """``query(start, end)`` on fresh views, again if a compaction moved files meanwhile."""

        def run() -> pd.DataFrame:
            start, end = self._window(since, until)
            return query(start, end)

        return self._retrying(run)

    # -- errors ---------------------------------------------------------------------

    def _store_error(self, err: duckdb.Error) -> Exception:
        """A DuckDB failure as a :class:`StoreError` naming the bad file, if one is bad."""
        # DuckDB appends the query text and a caret line after "LINE n:": not for people.
        message = " ".join(re.split(r"\bLINE \d+:", str(err))[0].split())
        for table in TABLES:
            for path in list_store(self._location, table).files:
                if str(path) in message:
                    where = self._location.at(path)
                    return StoreError(f"cannot read store file {where}: {message}", where)
        bad = _first_unreadable(self._location)
        if bad is not None:
            return StoreError(f"cannot read store file {bad[0]}: {bad[1]}", bad[0])
        return err  # not the store's fault: the query's own error


def _times_as_stored(table: str, union: str) -> str:
    """``union`` with every time column as the store's own type (TIMESTAMPTZ, µs).

    The vetting accepts a time column of any width and zone (``DataFrame.to_parquet``
    writes nanoseconds), and DuckDB reads each as it is stored: one such file made the
    whole column TIMESTAMP_NS, which ``epoch_us`` and the comparisons with the queries'
    TIMESTAMPTZ bounds refuse. Cast once here, every query reads one type. A naive
    column is taken as UTC (the connection's zone), as :func:`to_pandas` does; for
    a store of only its own files the cast is to the type it has, which DuckDB drops.
    """
    times = _time_columns(table)
    casts = ", ".join(f'CAST("{name}" AS TIMESTAMPTZ) AS "{name}"' for name in times)
    return f"SELECT * REPLACE ({casts}) FROM ({union})" if times else union


def _times_cast(table: str) -> str:
    """A read's select list with its time columns cast to TIMESTAMPTZ, those it has.

    Each read of a folder's files is cast before the reads are unioned: DuckDB before
    2.0 unions a TIMESTAMPTZ with a TIMESTAMP_NS as TIMESTAMP_NS and cannot cast the
    first to it (a ConversionException on the declared floor, 1.3). ``COLUMNS`` with a
    lambda matches only the columns a read has; every file has ``observed_at`` (the
    vetting's identity columns), so the match is never empty.
    """
    names = _time_columns(table)
    if not names:
        return "*"
    listed = "[" + ", ".join(f"'{name}'" for name in names) + "]"
    return (
        f"COLUMNS(lambda c: NOT list_contains({listed}, c)), "
        f"CAST(COLUMNS(lambda c: list_contains({listed}, c)) AS TIMESTAMPTZ)"
    )


@functools.cache
def _time_columns(table: str) -> tuple[str, ...]:
    """The store's time columns of ``table`` (its own schema's timestamps)."""
    import pyarrow as pa

    return tuple(f.name for f in empty_table(table).schema if pa.types.is_timestamp(f.type))


def _bounds_sql(spans: list[TimeSpan]) -> str:
    """The bounds view's query: :data:`BOUNDS_SQL`, or its answer when the footers tell it.

    Every listed file's span (from its footer's statistics: exact, and free once
    vetted) gives the oldest and newest ``observed_at`` without opening a file; a file
    whose footer cannot tell (or that vanished) leaves it to the query.
    """
    if any(span is None for span in spans):
        return BOUNDS_SQL
    known = [span for span in spans if span]
    if not known:
        return "SELECT CAST(NULL AS BIGINT) AS lo_us, CAST(NULL AS BIGINT) AS hi_us"
    low = min(span[0] for span in known)
    high = max(span[1] for span in known)
    return f"SELECT CAST({int(low)} AS BIGINT) AS lo_us, CAST({int(high)} AS BIGINT) AS hi_us"


def _spans_disjoint(spans: list[TimeSpan]) -> bool:
    """Whether no ``observed_at`` can lie in two of the files with these spans.

    From the footers' statistics (exact, and free once vetted): sorted by start, each
    range begins after every earlier one ended. A file without times cannot share one;
    a file whose range is unknown (or that vanished) might, so the answer is then False.
    """
    ranges: list[tuple[int, int]] = []
    for span in spans:
        if span is None:
            return False
        if span:
            ranges.append((span[0], span[1]))
    ranges.sort()
    return all(later[0] > earlier[1] for earlier, later in pairwise(ranges))


def _empty_frame() -> pd.DataFrame:
    """What a statement that returns no relation (``SET``, ``CREATE``, ...) gives."""
    import pandas as pd

    return pd.DataFrame()


def _first_unreadable(store: Location) -> tuple[PurePath | str, str] | None:
    """The first data file whose Parquet footer cannot be read, and why."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    for table in TABLES:
        for path in list_store(store, table).files:
            try:
                pq.read_metadata(store.source(path))
            except FileNotFoundError:
                continue
            except Exception as err:  # pyarrow raises ArrowInvalid, OSError, ...
                return store.at(path), " ".join(str(err).split())
    return None


def pq_schema(store: Location, path: PurePath) -> pa.Schema:
    """A file's Arrow schema from its footer, without pandas' metadata."""
    import pyarrow.parquet as pq

    return pq.read_schema(store.source(path)).remove_metadata()

"""The store's catalog: the views a History's questions read, and how they stay true.

Three views: ``pods`` and ``gpus`` hold every snapshot's rows, and ``snapshots`` one row
per cluster per snapshot, its listing's outcome (each with the bookkeeping columns
``date``, ``schema_version`` and ``file_index``, which file a row was read from: the
accounting counts each snapshot instant from one file only). Before each query they are
pointed at the files :func:`~ccanalytics.history.store._layout.list_store` lists (which
honours a compaction in progress), and a query that finds a listed file gone (a
compaction finished meanwhile) is run again on a fresh listing (:mod:`._retries`). Each
listed file is vetted first (:mod:`._vetting`); a quiet day of many small files is read
from one merged copy of exactly those files (:mod:`~ccanalytics.history.store._daycache`),
and a day whose rollup matches its files from the rollup (``_rollup``). An S3 store's
objects reach DuckDB as pyarrow datasets registered on the connection (DuckDB's httpfs
extension is never loaded). The views' SQL is :mod:`._views`'.

A :class:`Catalog` belongs to one :class:`~ccanalytics.history.History`; the questions
(this package's modules, and ``alerts`` through :func:`~ccanalytics.history.queries._history.catalog_of`)
ask it for fresh views, one listing per question and retries.
"""

from __future__ import annotations

import os
import time
import weakref
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from ccanalytics.errors import StoreError
from ccanalytics.history.queries import _views
from ccanalytics.history.queries._retries import (
    MAX_QUERY_ATTEMPTS,
    RETRY_PAUSE_SECONDS,
    store_error,
    vanished,
)
from ccanalytics.history.queries._vetting import vet
from ccanalytics.history.queries._window import BOUNDS_VIEW, resolve_window
from ccanalytics.history.store import (
    TABLES,
    DayCache,
    VetCache,
    connect,
    dataset_of,
    empty_table,
    holds_store,
    list_rollups,
    list_tables,
    merged_rollups,
    no_store_error,
    open_store,
    partition_day,
    rolled_days,
    schema_key,
    store_folder,
    survey,
    to_pandas,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from os import PathLike
    from pathlib import PurePath

    import pandas as pd
    import pyarrow as pa  # type: ignore[import-untyped]

    from ccanalytics.history.queries._spark import SparkEngine
    from ccanalytics.history.queries._views import Files
    from ccanalytics.history.queries._window import TimeLike
    from ccanalytics.history.store import Lease, Listing, Location

__all__ = ["Catalog"]

_T = TypeVar("_T")


class Catalog:
    """One History's connection, its views over the store's files, and their caches."""

    def __init__(self, store: str | PathLike[str] | Location, engine: Any = "duckdb") -> None:
        self.location = store_folder(open_store(store, resolve=True))
        #: The engine the questions run on, when not this connection (a Spark session's).
        self.engine: SparkEngine | None = None
        if engine != "duckdb":
            from ccanalytics.history.queries._spark import SparkEngine

            self.engine = SparkEngine(engine, self.location)
        self.root = self.location.root
        readable = [f"{self.root}{os.sep}"] if self.location.local else []
        self.lease: Lease = connect(readable)
        self.con = self.lease.con
        self.spill = self.lease.spill
        self._finalizer = weakref.finalize(self, self.lease.release)
        #: Verdicts on the store's files, kept while each file is unchanged (_vetted).
        self._cache: VetCache | None = None
        #: Merged copies of quiet days of many files, read in their place (_daycache).
        self._days = DayCache(self.location, self._read_files)
        #: An S3 store's file schemas by schema key (one footer read per schema; none
        #: for the schemas a file written now has).
        self._schemas: dict[str, pa.Schema] = {}
        #: The files each view reads now (a refresh that lists the same keeps the view).
        self._viewed: dict[str, object] = {}
        #: Inside one_listing (nested: its depth), and whether it has listed the store.
        self._questions = 0
        self._listed_once = False
        #: Whether the last listing found any file a writer left (see :meth:`no_store`).
        self.holds_store = False
        for table in TABLES:
            empty = empty_table(table)
            self.con.register(f"_empty_{table}", empty)
            self._schemas[schema_key(empty.schema, table)] = empty.schema
        self.retrying(self.refresh)

    def close(self) -> None:
        """Close the connection (idempotent; its database may be kept for the next reader)."""
        self._finalizer()

    def no_store(self) -> StoreError:
        """The error of a path that holds no store (see :func:`holds_store`)."""
        return no_store_error(self.location, TABLES)

    # -- the questions' side ----------------------------------------------------------

    def reader(self, question: str) -> Any:
        """The connection ``question`` (a History method's name) runs its SQL on: this
        DuckDB one, or the engine's (an EngineError if that engine does not answer it)."""
        if self.engine is None:
            return self.con
        from ccanalytics.history.queries._spark import SPARK_QUESTIONS

        if question not in SPARK_QUESTIONS:
            raise self.engine.refuse(question)
        self.engine.question = question
        return self.engine

    @contextmanager
    def one_listing(self, *, listed: bool = False) -> Iterator[None]:
        """The queries inside read the store as one listing found it.

        A question answered in several queries (spend's periods and burn rates, a
        policy's judgements) is then answered from one state of the store, not from a
        store that a collector added to between two of its queries; and an S3 store is
        listed once for it, not once a query. A query that finds a listed file gone (a
        compaction) still lists again (:meth:`retrying`). ``listed``: the views read a
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

    def query(self, sql: str, params: Any = None) -> pd.DataFrame:
        """``sql`` on fresh views as a frame with the live frames' dtypes (the package's own
        queries: unlike :meth:`History.sql <ccanalytics.history.History.sql>`, the
        database may be handed on)."""

        def run() -> pa.Table | None:
            self.refresh()
            relation = self.con.sql(sql, params=params)
            return relation.to_arrow_table() if relation is not None else None

        result = self.retrying(run)
        if result is None:  # a statement that returns no relation (SET, CREATE, ...)
            import pandas as pd

            return pd.DataFrame()
        return to_pandas(result)

    def fresh(self, action: Callable[[duckdb.DuckDBPyConnection], _T]) -> _T:
        """``action(con)`` on fresh views, again if a compaction moved files meanwhile."""

        def run() -> _T:
            self.refresh()
            return action(self.con)

        return self.retrying(run)

    def window(
        self, since: TimeLike, until: TimeLike
    ) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
        """The ``[start, end)`` that ``since``/``until`` select, on fresh views (no retry)."""
        self.refresh()
        return resolve_window(self.con, since, until)

    def window_bounds(
        self, since: TimeLike = None, until: TimeLike = None
    ) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
        """:meth:`window`, again if a compaction moved files meanwhile."""
        return self.retrying(lambda: self.window(since, until))

    def answer(
        self, query: Callable[[Any, Any], pd.DataFrame], since: TimeLike, until: TimeLike
    ) -> pd.DataFrame:
        """``query(start, end)`` on fresh views, again if a compaction moved files meanwhile."""
        return self.retrying(lambda: query(*self.window(since, until)))

    def retrying(self, action: Callable[[], _T]) -> _T:
        """``action()``, again on a fresh listing if a listed file vanished meanwhile."""
        for attempt in range(1, MAX_QUERY_ATTEMPTS + 1):
            try:
                result = action()
            except (
                duckdb.IOException,
                duckdb.InvalidInputException,
                duckdb.PermissionException,
            ) as err:
                if not vanished(err):
                    raise store_error(self.location, err) from None
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
            f"the store {self.location.show(self.root)} kept changing under the query: "
            f"{MAX_QUERY_ATTEMPTS} runs each found a listed file gone (is something "
            "compacting it in a loop?)",
            self.root,
        )

    # -- the views ----------------------------------------------------------------------

    def refresh(self) -> None:
        """Point the views at the store's files as they are now."""
        if self._listed_once:
            return  # one question, one listing (one_listing)
        # One listing of an S3 store answers every table, its rollups and the day cache
        # (the markers still get their own listing, after the data files' one).
        with survey(self.location):
            self._refresh()
        self._listed_once = self._questions > 0

    def _refresh(self) -> None:
        listings = list_tables(self.location, list(TABLES), every_marker=False)
        self.holds_store = holds_store(listings)
        self._refuse_outside(listings)
        if self._cache is None:
            self._cache = VetCache.load(self.location)
        verdicts, keys = vet(self.location, self._cache, listings)
        spans = []
        viewed: dict[str, Files] = {}
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
        self._define_flag(BOUNDS_VIEW, _views.bounds_sql(spans))
        # After the views: the queries' accounting module (pandas) is loaded by then anyway.
        from ccanalytics.history.queries._accounting import ONE_FILE_VIEW

        pods = [verdicts.get(path) for path in listings["pods"].files]
        one_file = _views.spans_disjoint([None if v is None else v[1] for v in pods])
        self._define_flag(ONE_FILE_VIEW, f"SELECT {one_file} AS one_file")
        self._days.sweep()
        if self.engine is not None:  # the same listing, read by the engine from the files
            from ccanalytics.history.queries._window import snapshot_bounds

            flags = {"_bounds": snapshot_bounds(self.con), "_one_file_per_instant": one_file}
            self.engine.define({t: found.files for t, found in listings.items()}, flags)

    def _refuse_outside(self, listings: dict[str, Listing]) -> None:
        for listing in listings.values():
            if listing.outside:
                where = listing.outside[0]
                raise StoreError(
                    f"{where} lies outside the store {self.root} (a symbolic link to "
                    f"{os.path.realpath(where)}); History reads only inside the store's "
                    "folder: move the data in",
                    where,
                )

    def _define_flag(self, name: str, sql: str) -> None:
        """View ``name`` as ``sql`` (unless it is that already): the bounds, the flags."""
        if self._viewed.get(name) != sql:
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {sql}")
            self._viewed[name] = sql

    def _define(self, name: str, table: str, files: Files) -> None:
        """View ``name`` of ``table``'s ``files`` (unless it reads exactly these already)."""
        if self._viewed.get(name) != files:
            self.con.execute(
                f"CREATE OR REPLACE TEMP VIEW {name} AS {self._view_sql(table, files, name)}"
            )
            self._viewed[name] = files

    def _define_rollups(self, listings: dict[str, Listing], viewed: dict[str, Files]) -> None:
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
        names = list_rollups(self.location) if per_day else frozenset()
        rolled = rolled_days(self.location, per_day, names)
        if rolled:
            for table in ("pods", "snapshots"):
                rest = tuple(f for f in viewed[table] if partition_day(f[0]) not in rolled)
                self._define(f"_{table}_rest", table, rest)
            self._define_rollup([path for _, path in sorted(rolled.items())])
        self._define_flag(ROLLUP_VIEW, f"SELECT {len(rolled)} AS days")

    def _define_rollup(self, paths: list[PurePath]) -> None:
        """The ``_rollup`` view over the rolled days' rollups (unless it reads these already)."""
        files = [str(path) for path in paths]
        if self._viewed.get("_rollup") == files:
            return
        # One merged file for the set (one request on S3), else the rollups.
        merged = merged_rollups(self.location, paths)
        paths = paths if merged is None else [merged]
        if self.location.local:
            self.con.execute("SET VARIABLE _files_rollup = ?", [[str(p) for p in paths]])
            source = "read_parquet(getvariable('_files_rollup'))"
        else:
            source = self._rollup_dataset(paths)
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW _rollup AS SELECT * FROM {source}")
        self._viewed["_rollup"] = files

    def _rollup_dataset(self, paths: list[PurePath]) -> str:
        """An S3 store's rollups as one registered pyarrow dataset (one footer read)."""
        schema = _views.pq_schema(self.location, paths[0])
        entries = [(path, None, index) for index, path in enumerate(paths)]
        # Fetched whole now (one GET each, the set is one merged copy when it can be):
        # most questions read the rollups, which are then scanned from memory, with no
        # read through pyarrow's S3 filesystem (the dataset still names it).
        dataset = dataset_of(self.location, entries, schema, with_date=False, fetch=True)
        self.con.register("_data_rollup", dataset)
        return "_data_rollup"

    def _view_sql(self, table: str, files: Files, name: str) -> str:
        """The view of ``table`` over ``files`` (in listing order, each with its schema key)."""
        empty = _views.empty_sql(table)
        if not self.location.local:
            dataset = self._dataset(table, files, name)
            return _views.times_as_stored(
                table, f"{empty} UNION ALL BY NAME SELECT * FROM {dataset}"
            )
        runs, options = _views.schema_runs(files)
        parts = [empty]
        for number, (offset, names) in enumerate(runs):
            variable = f"_files_{name}_{number}"
            self.con.execute(f"SET VARIABLE {variable} = ?", [names])
            parts.append(
                f"SELECT {_views.times_cast(table)}, CAST(file_index + {offset} AS UBIGINT) "
                f"AS file_index FROM read_parquet(getvariable('{variable}'), {options})"
            )
        return _views.times_as_stored(table, " UNION ALL BY NAME ".join(parts))

    def _dataset(self, table: str, files: Files, view: str) -> str:
        """An S3 store's ``files`` registered as one pyarrow dataset; its name.

        Each file is a fragment whose ``date`` (its partition) and ``file_index`` (its
        place in the listing) pyarrow fills in, as DuckDB's ``read_parquet`` does for
        a folder; its schema is the files' own, unified by name (columns a file lacks
        read as null), so every view means the same on both backends.
        """
        schema = self._unified([path for path, _ in files], [key for _, key in files])
        entries = [(path, partition_day(path), index) for index, (path, _) in enumerate(files)]
        name = f"_data_{view}"
        self.con.register(name, dataset_of(self.location, entries, schema, with_date=True))
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
                known = _views.pq_schema(self.location, path)
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
        if not self.location.local:
            try:
                some = paths if by_name else paths[:1]  # else they share one schema
                schema = self._unified(some, [""] * len(some))
                entries = [(path, None, index) for index, path in enumerate(paths)]
                dataset = dataset_of(self.location, entries, schema, with_date=False)
                return dataset.to_table()
            except Exception:  # a file gone or unreadable: read from the files, which says why
                return None
        options = ", union_by_name = true" if by_name else ""
        query = f"SELECT *, file_index FROM read_parquet(?, hive_partitioning = false{options})"
        try:
            return self.con.sql(query, params=[[str(p) for p in paths]]).to_arrow_table()
        except duckdb.Error:
            return None  # a file gone or unreadable: read from the files, which says why

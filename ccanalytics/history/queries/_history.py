"""``History(store)``: SQL over a store's Parquet files, in an embedded DuckDB.

The queries run inside DuckDB, which streams the Parquet files (a store larger than
memory is fine); only results become pandas frames, with the live frames' nullable
dtypes. The connection is in memory and locked down before the first query: it may
read the store's folder and nothing else, installs no extension, and so opens no
network connection. Its database outlives it, for the next History of the same store
(:mod:`~ccanalytics.history.store._duckdb`: starting one costs more than a question).

A History is the store's catalog (:class:`~ccanalytics.history.queries._catalog.Catalog`:
the views over the files, their vetting and caches, the retries across a compaction)
and the questions over it (:class:`~ccanalytics.history.queries._questions.Questions`,
and here the rows, spend and the user's own SQL). The views always have at least the
columns a file written now would have, with their types: an empty or missing store
gives empty frames with the right columns, and a column that older files lack reads
as null in their rows.

The package's own questions go through the catalog (:func:`catalog_of`): :meth:`History.sql`
is the user's own SQL, and a History that ran it does not hand its database on.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from os import PathLike
from pathlib import Path, PurePath
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

from ccanalytics.history.queries._catalog import Catalog
from ccanalytics.history.queries._questions import Questions
from ccanalytics.history.queries._window import resolve_window

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    import duckdb
    import pandas as pd

    from ccanalytics.history.queries._backtest import IdleRule
    from ccanalytics.history.queries._window import DurationLike, TimeLike
    from ccanalytics.history.store import Location, StoreReport

__all__ = ["History", "catalog_of"]

#: Columns of the views that are store bookkeeping, not pod data: left out of pods()/gpus().
BOOKKEEPING_COLUMNS = ("date", "schema_version", "file_index")
#: Row order of pods()/gpus() (columns every frame has, per the public API).
_ORDER = {
    "pods": "observed_at, cluster_id, pod_id",
    "gpus": "observed_at, cluster_id, pod_id, gpu_index",
    "snapshots": "observed_at, cluster_id",
}


class History(Questions):
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

    ``engine``: ``"duckdb"`` (the default), or a :class:`pyspark.sql.SparkSession`:
    every question over the store's rows (:meth:`measures` and its views, :meth:`spend`,
    :meth:`backtest`, :meth:`showback`, ...) then runs on Spark, the same SQL printed in
    Spark's dialect over the same files (:mod:`~ccanalytics.history.queries._spark`),
    and gives the same frames; a question it does not answer raises
    :class:`~ccanalytics.errors.EngineError` naming it. The listing,
    the vetting of each file, the window and :meth:`pods`/:meth:`sql` stay DuckDB's.

    Each History has a DuckDB connection of its own. Its in-memory database outlives
    :meth:`close`, for the next History of the same store in this process (at most
    four are kept; starting a database costs more than most questions), unless SQL of
    your own ran in it (:meth:`sql`, :attr:`connection`): that one is closed with it.
    """

    def __init__(self, store: str | PathLike[str] | Location, *, engine: Any = "duckdb") -> None:
        _check_engine(engine)
        self._catalog = Catalog(store, engine)
        if not self._catalog.holds_store:
            self._catalog.close()
            raise self._catalog.no_store()

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
        self._catalog.close()

    def __repr__(self) -> str:
        return f"History({self._catalog.location.show(self._catalog.root)!r})"

    def _repr_html_(self) -> str:
        from ccanalytics.history.queries._show import history_html

        return history_html(self)

    @property
    def store(self) -> Path | str:
        """The store's folder (absolute), or its ``s3://bucket/prefix`` address."""
        at = self._catalog.location.at(self._catalog.root)
        return Path(at) if isinstance(at, PurePath) else at

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection with the views ``pods`` and ``gpus`` (read-only access).

        The views list the files as of the last :meth:`refresh` (each :meth:`sql` call
        refreshes them); prefer :meth:`sql`, which also retries across a compaction.
        Its database is not handed to another History once this one closes.
        """
        self._catalog.lease.touch()
        return self._catalog.con

    def refresh(self) -> None:
        """Point the views at the store's files as they are now."""
        self._catalog.refresh()

    def verify(self) -> StoreReport:
        """Unreadable files, crash leftovers and unfinished compactions of the store."""
        from ccanalytics.history.store import verify

        return verify(self._catalog.location)

    # -- queries --------------------------------------------------------------------

    def sql(self, query: str, params: Any = None) -> pd.DataFrame:
        """Run ``query`` (SQL over the views ``pods`` and ``gpus``) and return a frame.

        ``params`` fills ``?`` or ``$name`` placeholders (a sequence or a mapping).
        Results have the live frames' nullable dtypes; times are UTC. A corrupt store
        file raises :class:`~ccanalytics.errors.StoreError` naming the file; SQL
        mistakes raise DuckDB's own errors.
        """
        self._catalog.lease.touch()  # SQL of the user's own: the database is not handed on
        return self._catalog.query(query, params)

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

    def _rows(
        self, table: str, since: TimeLike, until: TimeLike, cluster_ids: str | Iterable[str] | None
    ) -> pd.DataFrame:
        with self._catalog.one_listing():  # the window and its rows from the same files
            return self._rows_in(table, *self._catalog.window_bounds(since, until), cluster_ids)

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
        return self._catalog.query(query, params).reset_index(drop=True)

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

        self._catalog.reader("spend")
        instant = None if at is None else _timestamp(at, "at")
        gap = None if max_gap is None else as_duration(max_gap)
        if max_gap is not None and gap is None:
            raise ValueError(f"max_gap={max_gap!r} is not a duration like 90min, 24h or 1h30m")
        with self._catalog.one_listing():
            self.refresh()
            return _spend.spend(self._catalog, instant, by=by, max_gap=gap, limit=limit)

    def backtest(
        self,
        rules: IdleRule | Iterable[IdleRule],
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        by: Literal["cluster", "pod"] | None = "cluster",
        regret: DurationLike = "1h",
        max_gap: DurationLike | None = None,
    ) -> pd.DataFrame:
        """What idle rules would have saved over the window, and the work they would have cut.

        ``h.backtest([IdleRule("30m", 1), IdleRule("2h", 1)], "30d")``: each rule
        (:class:`~ccanalytics.history.IdleRule`) replayed over the stored snapshots by
        the one rule of time (the method: :mod:`ccanalytics.history.queries._backtest`).

        Parameters
        ----------
        rules
            One rule or several, side by side (their names must differ).
        since, until, max_gap
            As for :meth:`idle_cost`.
        by
            ``"cluster"``, ``"pod"`` or ``None`` (one row per rule).
        regret
            A stop followed by the pod busy again within this long is a false stop.

        Returns
        -------
        pandas.DataFrame
            One row per rule (and cluster or pod seen in the window), in the rules'
            order, with the columns of :data:`ccanalytics.history.BACKTEST_COLUMNS`.
            Empty when the window holds no pod row. A rule whose ``idle_for`` is
            shorter than a judged cluster's snapshot spacing, a rule name given twice,
            or no rule is an :class:`~ccanalytics.errors.ArgumentsError`.
        """
        from ccanalytics.history.queries import _backtest

        chosen = _backtest.check_rules(rules)  # bad rules fail before the store is read
        return self._catalog.answer(
            lambda start, end: _backtest.backtest(
                self._catalog.reader("backtest"),
                chosen,
                start,
                end,
                by=by,
                regret=regret,
                max_gap=max_gap,
            ),
            since,
            until,
        )

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

        self._catalog.reader("spend_anomalies")
        instant = None if at is None else _timestamp(at, "at")

        def run(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
            now = resolve_window(con, timedelta(0), None)[0] if instant is None else instant
            return _anomalies.spend_anomalies(
                con,
                now,
                weeks=SPEND_BASELINE_WEEKS if weeks is None else weeks,
                z=SPEND_ANOMALY_Z if z is None else float(z),
            )

        return self._catalog.fresh(run)

    def window_bounds(
        self, since: TimeLike = None, until: TimeLike = None
    ) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
        """The window ``[start, end)`` these bounds select now, in UTC (``None``: open).

        A timedelta is resolved against the newest snapshot, as every query resolves it:
        ``h.window_bounds(timedelta(hours=24))`` says which day ``h.idle_cost(...)`` covers.
        """
        return self._catalog.window_bounds(since, until)


def _check_engine(engine: Any) -> None:
    """``engine`` is ``"duckdb"`` or a Spark session, else a ValueError saying so."""
    from ccanalytics.history.queries._spark import is_spark_session

    if engine != "duckdb" and not is_spark_session(engine):
        raise ValueError(f"engine={engine!r} is neither 'duckdb' nor a pyspark.sql.SparkSession")


def catalog_of(history: History) -> Catalog:
    """The catalog a History's questions read: for the questions of ``alerts`` and
    ``export`` (one listing for a policy's judgements, their own queries)."""
    return history._catalog

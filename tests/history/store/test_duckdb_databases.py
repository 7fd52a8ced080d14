"""The DuckDB databases History reads in, kept for the next History of the same store
(ccanalytics/history/store/_duckdb.py): handed on whole, never with anything of a
reader's own in them, and never read outside their store."""

from __future__ import annotations

import multiprocessing
import os
import re
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from ccanalytics.history import History, check_policy, check_store, compact, parse_policy
from ccanalytics.history.store import _duckdb
from tests.history_helpers import pod_row, write_store


def _store(folder: Path, pods: int = 2) -> Path:
    write_store(
        folder,
        [pod_row("cl-a", f"2026-11-02T0{h}:00", f"p{i}") for h in range(3) for i in range(pods)],
    )
    return folder


@pytest.fixture(autouse=True)
def _no_kept_databases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no database kept (another test's would be handed on)."""
    monkeypatch.setattr(_duckdb, "_SHARED", {})
    monkeypatch.setattr(_duckdb, "_IDLE", type(_duckdb._IDLE)())


def test_the_next_history_of_a_store_reads_in_the_first_ones_database(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    with History(store) as first:
        database = first._catalog.lease.database
        rows = first.pods()
    with History(store) as second:
        assert second._catalog.lease.database is database
        assert second.pods().equals(rows)
    with History(_store(tmp_path / "other")) as other:
        assert other._catalog.lease.database is not database  # it may read another folder


def test_two_histories_at_once_each_keep_their_own_views(tmp_path: Path) -> None:
    """One database, two readers: each has its own views (TEMP) and registrations; one
    closing, or reading a store grown since, leaves the other's answers as they were."""
    store = _store(tmp_path / "s")
    first = History(store)
    with first._catalog.one_listing():  # first keeps the listing it made now
        before = first.pods()
        write_store(store, [pod_row("cl-a", "2026-11-03T00:00", "p9")])
        with History(store) as second:
            assert second._catalog.lease.database is first._catalog.lease.database
            assert len(second.pods()) == len(before) + 1
        assert first.pods().equals(before)
    assert len(first.pods()) == len(before) + 1  # a fresh listing: the new file too
    database = first._catalog.lease.database
    first.close()
    # Nothing a reader defined outlives its connection: the next one starts bare.
    fresh = database.con.cursor()
    assert fresh.sql("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall() == []
    assert fresh.sql("SELECT table_name FROM duckdb_tables()").fetchall() == []
    fresh.close()


def test_a_table_the_user_made_is_never_seen_by_the_next_history(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    with History(store) as mine:
        mine.sql("CREATE TABLE notes AS SELECT 42 AS answer")
        mine.sql("SET memory_limit = '123MB'")
        limit = "SELECT current_setting('memory_limit') AS m"
        set_here = mine.sql(limit)["m"].iloc[0]
        used = mine._catalog.lease.database
        assert mine.sql("SELECT answer FROM notes")["answer"].tolist() == [42]
    with pytest.raises(duckdb.ConnectionException):
        used.con.execute("SELECT 1")  # closed with its last reader, not kept
    with History(store) as next_one:
        assert next_one._catalog.lease.database is not used
        with pytest.raises(duckdb.CatalogException, match="notes"):
            next_one.sql("SELECT * FROM notes")
        assert next_one.sql(limit)["m"].iloc[0] != set_here


def test_a_history_whose_connection_was_handed_out_does_not_hand_on_its_database(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path / "s")
    with History(store) as h:
        h.connection.execute("CREATE MACRO twice(x) AS x * 2")
        used = h._catalog.lease.database
    with History(store) as next_one:
        assert next_one._catalog.lease.database is not used
        with pytest.raises(duckdb.CatalogException, match="twice"):
            next_one._catalog.con.execute("SELECT twice(1)")


def test_a_kept_database_still_reads_only_its_own_store(tmp_path: Path) -> None:
    mine, theirs = _store(tmp_path / "mine"), _store(tmp_path / "theirs")
    with History(theirs):
        pass
    with History(mine):
        pass
    theirs_file = next((theirs / "pods").rglob("*.parquet"))
    with History(mine) as h:  # the kept database of mine
        assert len(h.pods()) == 6
        with pytest.raises(duckdb.Error, match="disabled by configuration"):
            h.sql(f"SELECT * FROM read_parquet('{theirs_file}')")


def test_at_most_a_few_idle_databases_are_kept_and_the_others_closed(tmp_path: Path) -> None:
    stores = [_store(tmp_path / f"s{i}", pods=1) for i in range(_duckdb.IDLE_DATABASES + 2)]
    used = []
    for store in stores:
        with History(store) as h:
            used.append(h._catalog.lease.database)
    kept = used[-_duckdb.IDLE_DATABASES :]
    assert list(_duckdb._IDLE.values()) == kept
    for database in used[: -_duckdb.IDLE_DATABASES]:
        with pytest.raises(duckdb.ConnectionException):
            database.con.execute("SELECT 1")
    for database in kept:
        assert database.con.execute("SELECT 1").fetchall() == [(1,)]


def test_a_database_in_use_is_not_closed_when_more_idle_ones_are_kept(tmp_path: Path) -> None:
    store = _store(tmp_path / "busy")
    with History(store) as busy:
        for i in range(_duckdb.IDLE_DATABASES + 1):
            with History(_store(tmp_path / f"s{i}", pods=1)):
                pass
        assert len(busy.pods()) == 6
    assert busy._catalog.lease.database in _duckdb._IDLE.values()


def test_a_compaction_writes_its_rollup_in_a_kept_database_too(tmp_path: Path) -> None:
    store = _store(tmp_path / "s")
    with History(store) as h:
        idle = h.idle_cost(by="cluster")
    compact(store, "2026-11-02")
    compact(store, "2026-11-02")  # nothing left to merge: the rollup is there already
    assert list((store / ".rollup").glob("2026-11-02.*"))
    with History(store) as h:
        assert h.idle_cost(by="cluster").equals(idle)


def _open_in_child(store: str, parent_spill: str, answer: multiprocessing.SimpleQueue) -> None:
    with History(store) as h:
        answer.put((str(h._catalog.spill) != parent_spill, len(h.pods())))


def test_a_forked_child_opens_a_database_of_its_own(tmp_path: Path) -> None:
    """DuckDB is not fork-safe: a child that used the parent's database could wait for
    ever on threads the fork did not copy."""
    store = _store(tmp_path / "s")
    with History(store) as h:
        spill = str(h._catalog.spill)
    context = multiprocessing.get_context("fork")
    answer = context.SimpleQueue()
    child = context.Process(target=_open_in_child, args=(str(store), spill, answer))
    child.start()
    try:
        child.join(30)
        assert child.exitcode == 0
        assert answer.get() == (True, 6)
    finally:
        if child.is_alive():  # stuck on the parent's database
            child.kill()


def _setting(con: duckdb.DuckDBPyConnection, name: str) -> object:
    return con.execute("SELECT current_setting(?)", [name]).fetchone()[0]  # type: ignore[index]


def test_a_database_runs_on_the_cores_it_may_use_and_half_the_memory(tmp_path: Path) -> None:
    """DuckDB's own defaults are a thread per core of the machine and 80 % of its memory
    (as if it were alone there); History's database shares a Python process with pandas
    frames, and runs on the cores this process may use."""
    plain = duckdb.connect()
    with History(_store(tmp_path / "s")) as h:
        assert _setting(h._catalog.con, "threads") == len(os.sched_getaffinity(0))
        assert _setting(h._catalog.con, "allocator_background_threads") is True
        flush = str(_setting(h._catalog.con, "allocator_flush_threshold"))
        assert _bytes(flush) == 16 * 1024**2  # "16MiB" in DuckDB 2, "16.0 MiB" in 1.3
        ours = _bytes(str(_setting(h._catalog.con, "memory_limit")))
    # DuckDB's default is 80 % of the memory it sees, printed to 3 digits; ours is half of
    # that or of the machine's, the less.
    seen = min(_bytes(str(_setting(plain, "memory_limit"))) / 0.8, _machine_memory())
    assert ours == pytest.approx(seen * 0.5, rel=0.01)


def test_a_database_is_held_to_the_machine_s_memory_when_duckdb_sees_no_limit() -> None:
    """Where DuckDB cannot read the memory (a container whose limit it misreads: it
    printed "1023.9 PiB" on one), a database that may use half of that never spills, and
    the process is killed instead."""
    con = duckdb.connect()
    con.execute("SET memory_limit = '100000TiB'")  # what DuckDB 1.3 saw there, near enough
    _duckdb._share_the_process(con)
    ours = _bytes(str(_setting(con, "memory_limit")))
    assert ours == pytest.approx(_machine_memory() * 0.5, rel=0.01)


def _machine_memory() -> float:
    """The machine's memory as the kernel reports it (MemTotal, in KiB)."""
    meminfo = Path("/proc/meminfo").read_text()
    found = re.search(r"^MemTotal:\s+(\d+) kB$", meminfo, re.MULTILINE)
    assert found, meminfo
    return int(found.group(1)) * 1024.0


_UNITS = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


def _bytes(setting: str) -> float:
    """A size as DuckDB prints it: ``16.0 MiB`` (1.3) or ``16MiB``."""
    found = re.fullmatch(r"([\d.]+)\s*(" + "|".join(_UNITS) + ")", setting.strip())
    assert found, setting
    number, unit = found.groups()
    return float(number) * 1024 ** _UNITS.index(unit)


def test_an_idle_database_keeps_one_thread_and_a_new_reader_gets_every_core(
    tmp_path: Path,
) -> None:
    """Memory a query freed stays with DuckDB's worker threads until they end (3.9 GiB
    held after 30 days of a busy store's rows, 0.84 GiB with one thread)."""
    threads = "SELECT current_setting('threads')"
    default = [(len(os.sched_getaffinity(0)),)]
    store = _store(tmp_path / "s")
    with History(store) as h:
        assert h._catalog.con.execute(threads).fetchall() == default
        database = h._catalog.lease.database
    assert database.con.execute(threads).fetchall() == [(1,)]
    with History(store) as h:
        assert h._catalog.lease.database is database
        assert h._catalog.con.execute(threads).fetchall() == default


def _fatal(database: object) -> None:
    raise duckdb.FatalException("database has been invalidated because of a previous fatal error")


def test_a_database_broken_while_idle_is_replaced_by_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path / "s")
    with History(store) as h:
        broken = h._catalog.lease.database
        rows = h.pods()
    monkeypatch.setattr(_duckdb._Database, "wake", _fatal)
    with History(store) as h:
        assert h._catalog.lease.database is not broken
        assert h.pods().equals(rows)
    with pytest.raises(duckdb.ConnectionException):
        broken.con.execute("SELECT 1")


def test_a_database_that_cannot_rest_is_closed_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path / "s")
    monkeypatch.setattr(_duckdb._Database, "rest", _fatal)
    with History(store) as h:
        broken = h._catalog.lease.database
    assert _duckdb._IDLE == {} and _duckdb._SHARED == {}
    with pytest.raises(duckdb.ConnectionException):
        broken.con.execute("SELECT 1")


def test_a_connection_released_twice_counts_once(tmp_path: Path) -> None:
    lease = _duckdb.connect([f"{tmp_path}/"])
    database = lease.database
    lease.release()
    lease.release()
    assert database.users == 0
    assert list(_duckdb._IDLE.values()) == [database]
    again = _duckdb.connect([f"{tmp_path}/"])
    assert again.database is database and database.users == 1
    again.release()


def test_a_connection_that_cannot_be_set_up_leaves_its_database_unused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(lease: object, database: object, con: object) -> None:
        raise duckdb.InvalidInputException("no time zone here")

    monkeypatch.setattr(_duckdb.Lease, "__init__", refuse)
    with pytest.raises(duckdb.InvalidInputException):
        _duckdb.connect([f"{tmp_path}/"])
    (database,) = _duckdb._SHARED.values()
    assert database.users == 0
    assert list(_duckdb._IDLE.values()) == [database]


def test_after_a_fork_the_parents_databases_are_forgotten_never_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the child runs after a fork (os.register_at_fork), run here on a copy of the
    state: the child above only shows its effect."""
    monkeypatch.setattr(_duckdb, "_INHERITED", [])
    lease = _duckdb.connect([f"{tmp_path}/"])
    database = lease.database
    _duckdb._forget_inherited()
    assert _duckdb._SHARED == {} and _duckdb._IDLE == {}
    database.close()  # detached: a no-op, as at the child's exit
    assert database.con.execute("SELECT 1").fetchall() == [(1,)]
    lease.con.close()
    database.con.close()


def test_the_packages_own_questions_leave_the_database_to_be_handed_on(tmp_path: Path) -> None:
    """Only SQL of the user's own keeps a database from the next History: every question
    of the package runs through its catalog's query(), whichever module asks it."""
    store = _store(tmp_path / "s")
    with History(store) as h:
        database = h._catalog.lease.database
        h.spend(by=None)
        h.idle_cost(by="pod")
        h.stragglers()
        h.pods()
        h.coverage()
    policy = parse_policy('[[rule]]\nname = "b"\nclusters = "cl-*"\nmax_spend = { month = 1 }\n')
    check_policy(store, policy)
    check_store(store, window=timedelta(hours=1), max_idle_cost=0)
    assert database.kept and list(_duckdb._IDLE.values()) == [database]

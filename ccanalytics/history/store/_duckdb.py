"""The in-memory DuckDB databases that history reads in, each kept for the next reader.

Starting a DuckDB database costs ~17 ms of CPU (it builds its catalog of functions), and
its first queries cost more than on a database that has answered before (its caches are
cold): a :class:`~ccanalytics.history.History` opened and asked one question took 130
ms, 105 ms in a database that an earlier History of the store had used. So a database
outlives its History: the next History of the same store (one that may read the same
folders) takes a new connection to it (:func:`connect`), a cursor, which costs 0.3 ms.

Nothing of one reader reaches another. A connection's views are ``TEMP`` views, its
registered Arrow objects, variables and session settings (``TimeZone``) its own, and all
go with it. What a user could change in the database itself, through
:attr:`History.connection <ccanalytics.history.History.connection>` or SQL of their own
(a table, a global setting), is never handed on: a database that such SQL has run in
(:meth:`Lease.touch`) is closed with its last connection instead of being kept. Each
database may read its folders and its own spill folder and nothing else
(``enable_external_access = false``, which cannot be turned back on).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import tempfile
import threading
import uuid
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import duckdb

__all__ = ["IDLE_DATABASES", "Lease", "connect"]

#: Databases kept while no reader uses them, the most recently used (each a few MB).
IDLE_DATABASES = 4


class _Database:
    """One in-memory DuckDB, locked down to ``readable`` and its spill folder."""

    def __init__(self, readable: tuple[str, ...]) -> None:
        import duckdb

        self.readable = readable
        self.spill = Path(tempfile.gettempdir()) / f"ccanalytics-duckdb-{uuid.uuid4().hex}"
        con = duckdb.connect(
            ":memory:",
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
        )
        # Each reader's queries bind its views again, which reads every file's footer:
        # kept after the first read. A file's name stands for its bytes (data files are
        # never rewritten; a cache copy made again holds what its name says), and DuckDB
        # checks the mtime too.
        con.execute("SET parquet_metadata_cache = true")
        _share_the_process(con)
        con.execute("SET temp_directory = ?", [str(self.spill)])
        con.execute("SET allowed_directories = ?", [[*readable, f"{self.spill}{os.sep}"]])
        con.execute("SET enable_external_access = false")  # cannot be turned back on
        self.con = con
        #: Connections open on it now.
        self.users = 0
        #: False once SQL not of this package has run in it: closed with its last user.
        self.kept = True
        self._finalizer = weakref.finalize(self, _close, con, self.spill)

    def rest(self) -> None:
        """Give back what its worker threads hold while no one reads in it.

        The memory a query freed stays with the allocator's per-thread caches until
        those threads end: after 30 days of a busy store's rows (pods(): 2.8 million rows,
        a 2.2 GiB frame, then freed) the process held 3.9 GiB, 0.84 GiB once the database
        had one thread.
        """
        self.con.execute("SET threads = 1")

    def wake(self) -> None:
        """A worker per core this process may use again, for a new reader."""
        self.con.execute("SET threads = ?", [_cores()])

    def close(self) -> None:
        self._finalizer()

    def detach(self) -> None:
        """Never close it from this process (a forked child's copy of it)."""
        self._finalizer.detach()


#: The share of the memory DuckDB sees (its own default: 80 %) that a database may use
#: before it spills to its folder.
MEMORY_SHARE = 0.5
#: Freed memory DuckDB's allocator keeps in its threads' caches before giving it back
#: (its own default: 128 MiB).
ALLOCATOR_FLUSH = "16MiB"


def _share_the_process(con: duckdb.DuckDBPyConnection) -> None:
    """Settings for a database that is one part of a Python process, not the machine's.

    DuckDB's defaults (a thread per core of the machine, 80 % of its memory, freed
    memory kept by each thread) suit a process of its own. Here pandas frames and
    the query's results share the process, and the cores may be fewer than the
    machine's (a CPU affinity, a container). The freed memory given back sooner cost
    no time and cut a year's peak RSS by a tenth (1,202 -> 1,097 MB).
    """
    memory = _memory_seen(con)
    if math.isfinite(memory):  # else DuckDB's default stays
        con.execute("SET memory_limit = ?", [f"{int(memory * MEMORY_SHARE) // 2**20}MiB"])
    con.execute("SET threads = ?", [_cores()])
    con.execute("SET allocator_flush_threshold = ?", [ALLOCATOR_FLUSH])
    con.execute("SET allocator_background_threads = true")


def _memory_seen(con: duckdb.DuckDBPyConnection) -> float:
    """The memory DuckDB sees, held to the machine's: in some containers DuckDB misreads
    the limit (it printed "1023.9 PiB" on one), and a share of that would never spill."""
    setting = _bytes(str(con.execute("SELECT current_setting('memory_limit')").fetchone()[0]))  # type: ignore[index]
    machine = _machine_memory()
    if setting is None:  # a form DuckDB may print one day that this does not know
        return machine
    return min(setting / 0.8, machine)  # DuckDB's default is 80 % of what it sees


def _machine_memory() -> float:
    """The machine's physical memory (infinite where the system does not say)."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # not on Windows
        return math.inf


_UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def _bytes(setting: str) -> float | None:
    """A DuckDB memory setting as it prints it (``"18.8 GiB"``), in bytes; None for a
    form it may print one day that this does not know (the default is kept then)."""
    number, _, unit = setting.partition(" ")
    try:
        return float(number) * 2.0 ** (10 * _UNITS.index(unit))
    except ValueError:
        return None


def _cores() -> int:
    """The cores this process may run on (DuckDB counts the machine's)."""
    if hasattr(os, "sched_getaffinity"):  # not on macOS or Windows
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _close(con: duckdb.DuckDBPyConnection, spill: Path) -> None:
    with contextlib.suppress(Exception):  # one DuckDB invalidated may refuse even this
        con.close()
    shutil.rmtree(spill, ignore_errors=True)


_LOCK = threading.Lock()
#: The database a new reader of these folders joins, in use or idle.
_SHARED: dict[tuple[str, ...], _Database] = {}
#: The databases no one uses, least recently released first.
_IDLE: OrderedDict[tuple[str, ...], _Database] = OrderedDict()
#: In a forked child, the parent's databases: kept, never used or closed there.
_INHERITED: list[_Database] = []


def _forget_inherited() -> None:
    """After a fork, in the child: its first reader starts a database of its own.

    DuckDB is not fork-safe (a database's threads are not copied into the child, and a
    query there may wait on them for ever); closing the parent's databases here would
    join those threads too, and their spill folders are the parent's to remove.
    """
    for database in _SHARED.values():  # the idle ones among them
        database.detach()
    _INHERITED.extend(_SHARED.values())
    _SHARED.clear()
    _IDLE.clear()


if hasattr(os, "register_at_fork"):  # not on Windows, which cannot fork
    os.register_at_fork(after_in_child=_forget_inherited)


class Lease:
    """One reader's connection (:attr:`con`) to a shared database; :meth:`release` once."""

    def __init__(self, database: _Database, con: duckdb.DuckDBPyConnection) -> None:
        self.database = database
        self.con = con
        # A session setting: each connection has its own.
        self.con.execute("SET TimeZone = 'UTC'")
        self.touched = False
        self._released = False

    @property
    def spill(self) -> Path:
        """The folder DuckDB may spill to (its database's, removed when that closes)."""
        return self.database.spill

    def touch(self) -> None:
        """Note that SQL not of this package may run on :attr:`con`: its database is
        closed with its last connection, never handed to another reader."""
        self.touched = True

    def release(self) -> None:
        """Close the connection; keep its database for the next reader, or close it."""
        if self._released:
            return
        self._released = True
        self.con.close()
        _release(self.database, touched=self.touched)


def connect(readable: Sequence[str] = ()) -> Lease:
    """A new connection to a database that may read the folders ``readable`` (each with
    its trailing separator) and nothing else: one kept from an earlier reader of the same
    folders, or a new one."""
    key = tuple(readable)
    stale = None
    with _LOCK:
        database = _SHARED.get(key)
        idle = _IDLE.pop(key, None)  # database itself, when no one uses it
        if idle is not None and not _refused_nothing(idle.wake):
            stale, database = idle, None  # broken while idle: a fresh one instead
        if database is None:
            database = _SHARED[key] = _Database(key)
        con = database.con.cursor()
        database.users += 1
    if stale is not None:
        stale.close()
    try:
        return Lease(database, con)
    except BaseException:
        con.close()
        _release(database, touched=False)
        raise


def _refused_nothing(statement: Callable[[], object]) -> bool:
    """Whether ``statement`` (readying a database, or resting it) ran: a database that
    DuckDB invalidated after a fatal error refuses every statement, and is not kept."""
    try:
        statement()
    except Exception:
        return False
    return True


def _release(database: _Database, *, touched: bool) -> None:
    closing = []
    with _LOCK:
        database.users -= 1
        if touched and database.kept:  # a kept database is its folders' shared one
            database.kept = False
            del _SHARED[database.readable]
        if database.users == 0:
            if not database.kept:
                closing.append(database)
            elif not _refused_nothing(database.rest):
                del _SHARED[database.readable]
                closing.append(database)
            else:
                _IDLE[database.readable] = database
                _IDLE.move_to_end(database.readable)
                while len(_IDLE) > IDLE_DATABASES:
                    _, oldest = _IDLE.popitem(last=False)
                    del _SHARED[oldest.readable]
                    closing.append(oldest)
    for old in closing:  # outside the lock: closing joins DuckDB's threads
        old.close()

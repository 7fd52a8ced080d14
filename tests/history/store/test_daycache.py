"""The readers' day cache (history.store._daycache): a quiet day of many small files is read
from one merged copy outside the tables (a day still being written, from a copy of each
complete block of its files), with exactly the answers its files give; a
change to the day's files is never hidden by an old copy; the store's tables are never
touched; a store that cannot hold copies, or a broken copy, only costs time."""

from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, pods_table

from ccanalytics import History
from ccanalytics.history.queries._catalog import Catalog
from ccanalytics.history.store import _daycache
from ccanalytics.history.store._write import append_frame

DAYS = ("2026-11-20", "2026-11-21")
HOURS = range(0, 12)


def _snapshot(store: Path, day: str, hour: int, minute: int = 0) -> list[Path]:
    """One collect's pods file: cl-a's two pods (p2 idle) and cl-b's rank pair."""
    at = f"{day}T{hour:02d}:{minute:02d}:00Z"
    rows = [
        pod_row("cl-a", at, "p1", cost=2.5),
        pod_row("cl-a", at, "p2", cost=1.25, gpu_util_mean=1.0, gpu_util_max=2.0),
        pod_row("cl-b", at, "r0", rank=0, cost=4.0, gpu_util_mean=90.0, gpu_util_max=95.0),
        pod_row("cl-b", at, "r1", rank=1, cost=4.0, gpu_util_mean=20.0 + hour, gpu_util_max=30.0),
    ]
    return append_frame(store, "pods", pods_table(rows).drop(columns="schema_version"))


def _age(store: Path, seconds: float, paths: list[Path] | None = None) -> None:
    """Make the data files (every one by default) ``seconds`` old, as a collector left them."""
    then = time.time() - seconds
    for path in store.glob("*/date=*/*.parquet") if paths is None else paths:
        os.utime(path, (then, then))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two days of 12 hourly snapshots (one held by two files), written an hour ago.

    Written once per module and never read: each test reads and changes a copy of it
    (``store``). Its 25 appends took 0.56 s of CPU, a copy of their files 3 ms.
    """
    folder = tmp_path_factory.mktemp("day-cache-store")
    for day in DAYS:
        for hour in HOURS:
            _snapshot(folder, day, hour)
    _snapshot(folder, DAYS[0], 5)  # a second collect within the same second
    _age(folder, 2 * _daycache.QUIET_SECONDS)
    return folder


@pytest.fixture
def store(written: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the written store, its files' times kept (an hour old, or older)."""
    monkeypatch.setattr(_daycache, "CACHE_FROM_FILES", 8)
    return Path(shutil.copytree(written, tmp_path / "store"))  # copy2: mtimes kept


def _answers(store: Path) -> dict[str, pd.DataFrame]:
    with History(store) as h:
        return {
            "idle_by_day": h.idle_cost(by="day"),
            "idle_by_pod": h.idle_cost(by="pod"),
            "stragglers": h.stragglers(min_share=0.0),
            "utilization": h.utilization(by="cluster", freq="1h"),
            "coverage": h.coverage(),
        }


def _uncached(store: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, pd.DataFrame]:
    with monkeypatch.context() as patch:  # every day read from its files, in no copy
        patch.setattr(_daycache, "CACHE_FROM_FILES", 10**9)
        patch.setattr(_daycache, "BLOCK_FILES", 10**9)
        return _answers(store)


def _copies(store: Path) -> list[Path]:
    return sorted((store / _daycache.CACHE_DIR).rglob("*.parquet"))


def _tables(store: Path) -> dict[Path, tuple[int, int]]:
    return {
        p: (p.stat().st_size, p.stat().st_mtime_ns)
        for t in ("pods", "gpus", "snapshots")
        for p in (store / t).rglob("*")
    }


def _assert_same(got: dict[str, pd.DataFrame], want: dict[str, pd.DataFrame]) -> None:
    for name in want:
        pd.testing.assert_frame_equal(got[name], want[name], obj=name)


def test_a_quiet_day_is_read_from_one_copy_with_the_same_answers(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = _uncached(store, monkeypatch)
    tables = _tables(store)
    assert not _copies(store)

    got = _answers(store)

    _assert_same(got, want)
    # One copy per day (pods only: this store has no gpus or snapshots files), outside
    # the tables, which are exactly as they were.
    copies = _copies(store)
    assert [p.parent.name for p in copies] == [f"date={d}" for d in DAYS]
    assert _tables(store) == tables
    # By hand: cl-a's idle p2 costs 1.25 USD/h over the 24 hours cl-a is observed
    # (11 h each day, and 2 h after 11:00 on the first: the gap to the next day is
    # capped at twice the 1-hour spacing); the instant written twice counts once.
    assert got["idle_by_day"]["idle_cost"].sum() == pytest.approx(24 * 1.25)
    # A second reader uses the copies as they are.
    made = {p: p.stat().st_mtime_ns for p in copies}
    _assert_same(_answers(store), want)
    assert {p: p.stat().st_mtime_ns for p in _copies(store)} == made


def test_the_views_read_the_copies_not_the_days_files(store: Path) -> None:
    _answers(store)  # makes the copies
    with History(store) as h:
        # The list of files the pods view reads (the catalog's _view_sql keeps it there).
        (listed,) = h.connection.sql("SELECT getvariable('_files_pods_0')").fetchall()[0]
    assert [Path(p) for p in listed] == _copies(store)


@pytest.mark.slow
def test_a_file_added_to_a_day_makes_a_new_copy_with_its_rows(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _answers(store)["idle_by_day"]
    (old_day0, _) = _copies(store)
    late = _snapshot(store, DAYS[0], 12)  # a late collect into the first day
    _age(store, 2 * _daycache.QUIET_SECONDS, late)
    want = _uncached(store, monkeypatch)

    got = _answers(store)

    _assert_same(got, want)
    # Each cluster's first day: 12 h then the 2-hour cap, not 11 h then the cap.
    assert before["observed_hours"].iloc[0] == pytest.approx(2 * (11 + 2))
    assert got["idle_by_day"]["observed_hours"].iloc[0] == pytest.approx(2 * (12 + 2))
    assert len(_copies(store)) == 3  # the new copy beside the old (swept after an hour)
    with History(store) as h:
        (listed,) = h.connection.sql("SELECT getvariable('_files_pods_0')").fetchall()[0]
    assert old_day0 not in [Path(p) for p in listed]


@pytest.mark.parametrize(
    ("block", "copies"),
    # 4: the instant written twice (two files at 05:00) lies inside a block; 6: the
    # boundary falls between its two files. Day 1's 13 files, day 2's 12.
    [(4, 3 + 3), (6, 2 + 2)],
)
def test_a_day_still_being_written_is_read_from_copies_of_its_complete_blocks(
    store: Path, monkeypatch: pytest.MonkeyPatch, block: int, copies: int
) -> None:
    monkeypatch.setattr(_daycache, "BLOCK_FILES", block)
    _age(store, 0)  # every file just written: a collector may add more any minute
    want = _uncached(store, monkeypatch)
    tables = _tables(store)

    got = _answers(store)

    _assert_same(got, want)
    assert got["idle_by_day"]["idle_cost"].sum() == pytest.approx(24 * 1.25)  # as by hand
    made = _copies(store)
    assert len(made) == copies
    assert _tables(store) == tables
    # Each block's copy where its files were, then the files after the last whole block.
    files = sorted(store.glob("pods/date=*/*.parquet"))
    tails: list[Path] = []
    for day in DAYS:
        mine = [f for f in files if f.parent.name == f"date={day}"]
        tails += mine[len(mine) - len(mine) % block :]
    with History(store) as h:
        (listed,) = h.connection.sql("SELECT getvariable('_files_pods_0')").fetchall()[0]
    assert sorted(Path(p) for p in listed) == sorted([*made, *tails])


def test_a_new_file_in_a_day_being_written_leaves_its_blocks_copies_as_they_are(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_daycache, "BLOCK_FILES", 4)
    _age(store, 0)
    _answers(store)
    made = {p: p.stat().st_mtime_ns for p in _copies(store)}
    _snapshot(store, DAYS[1], 12)  # day 2's 13th file: a block of 4 has one file more
    want = _uncached(store, monkeypatch)

    got = _answers(store)

    _assert_same(got, want)
    assert {p: p.stat().st_mtime_ns for p in _copies(store)} == made  # none made again
    for _ in range(3):  # 16 files: the fourth block is complete, and copied once
        _snapshot(store, DAYS[1], 13 + _)
    _answers(store)
    assert set(_copies(store)) > set(made) and len(_copies(store)) == len(made) + 1


def test_a_store_that_cannot_hold_copies_still_answers(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = _uncached(store, monkeypatch)
    attempts: list[Path] = []

    def refuse(location: object, final: Path, write: object) -> None:
        attempts.append(final)
        raise OSError(errno.EROFS, "Read-only file system", str(final))

    monkeypatch.setattr("ccanalytics.history.store._local.LocalLocation.create", refuse)
    _assert_same(_answers(store), want)  # five queries in one History
    assert not _copies(store)
    # One try per History: reading a day's files to learn again that the copy cannot
    # be written would double every query's reading.
    assert len(attempts) == 1


def test_a_copy_another_reader_wrote_first_is_used(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two readers copying one block at once: the second finds the copy written (S3's
    create-if-absent says so; locally a rename would replace it) and reads it."""
    from ccanalytics.history.store._fs import LocalLocation

    monkeypatch.setattr(_daycache, "BLOCK_FILES", 4)
    _age(store, 0)
    want = _uncached(store, monkeypatch)
    real = LocalLocation.create
    rivals: list[Path] = []

    def rival_first(location: LocalLocation, final: Path, write: object) -> None:
        real(location, final, write)  # type: ignore[arg-type]
        if _daycache.CACHE_DIR in str(final):
            rivals.append(final)
            raise FileExistsError(errno.EEXIST, "File exists", str(final))

    monkeypatch.setattr(LocalLocation, "create", rival_first)
    _assert_same(_answers(store), want)
    assert rivals and set(rivals) == set(_copies(store))


def test_a_block_whose_files_go_while_it_is_copied_is_read_from_its_files(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file gone between the listing and the copy (a compaction): no copy, the run is
    read from its files, whose reading says what happened (here: nothing, they stayed)."""
    monkeypatch.setattr(_daycache, "BLOCK_FILES", 4)
    _age(store, 0)
    want = _uncached(store, monkeypatch)
    # As if a file vanished: the History reads no rows for a copy.
    monkeypatch.setattr(Catalog, "_read_files", lambda self, paths, by_name: None)
    _assert_same(_answers(store), want)
    assert not _copies(store)


def test_a_read_only_cache_folder_is_not_read_for_nothing(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = _uncached(store, monkeypatch)
    (store / _daycache.CACHE_DIR).write_text("not a folder")  # mkdir fails, as read-only
    reads: list[int] = []
    real = Catalog._read_files

    def counted(self: Catalog, paths: list[Path], by_name: bool) -> object:
        reads.append(len(paths))
        return real(self, paths, by_name)

    monkeypatch.setattr(Catalog, "_read_files", counted)
    _assert_same(_answers(store), want)
    assert reads == []  # the folder refused before a day's files were read


@pytest.mark.slow
def test_a_broken_copy_is_made_again(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    want = _uncached(store, monkeypatch)
    _answers(store)
    broken = _copies(store)[0]
    broken.write_bytes(broken.read_bytes()[:100])  # truncated (a full disk, a bad copy)

    _assert_same(_answers(store), want)
    assert len(_copies(store)) == 2
    assert broken.stat().st_size > 100  # made again under its name


def test_unused_copies_are_swept_after_an_hour(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _answers(store)
    in_use = _copies(store)
    stale = in_use[0].with_name("0" * 32 + ".parquet")
    stale.write_bytes(in_use[0].read_bytes())  # a copy of files that changed since
    young = in_use[0].with_name("1" * 32 + ".parquet")
    young.write_bytes(stale.read_bytes())
    old = time.time() - 2 * _daycache.KEEP_SECONDS
    for path in [stale, *in_use]:  # the copies the views use are old too, and stay
        os.utime(path, (old, old))

    _answers(store)

    assert not stale.exists()
    assert young.exists()  # another reader may be reading it still
    assert all(p.exists() for p in in_use)

"""The readers' cache of vetted files (``STORE/.vetted.json``, history.store._vetted) and the
views built from it: a fresh History reads no footer it has vetted before, never trusts
a verdict for a file that changed, ignores a cache it cannot make sense of, and answers
exactly as a History that vets every file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from history_helpers import pod_row, pods_table

from ccanalytics import History, StoreError
from ccanalytics.history import verify
from ccanalytics.history.queries import _vetting, _views
from ccanalytics.history.queries._window import BOUNDS_SQL
from ccanalytics.history.store import _vetted
from ccanalytics.history.store._write import append_frame

DAY = "2026-11-20"


def _collect(store: Path, hours: range, **values: Any) -> None:
    """One file per snapshot, as collect writes them (microsecond times, zstd)."""
    for hour in hours:
        rows = [pod_row("cl-a", f"{DAY}T{hour:02d}:00:00Z", f"p{i}", **values) for i in (1, 2)]
        append_frame(store, "pods", pods_table(rows).drop(columns="schema_version"))


def _answers(store: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    with History(store) as h:
        return h.idle_cost(by="day"), h.pods()


@pytest.fixture
def vets(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files History reads a footer of, in order."""
    seen: list[Path] = []
    real = _vetting.vet_file

    def counting(path: Path, table: str) -> Any:
        seen.append(path)
        return real(path, table)

    monkeypatch.setattr(_vetting, "vet_file", counting)
    return seen


def test_a_second_history_reads_no_footer_and_answers_the_same(
    tmp_path: Path, vets: list[Path]
) -> None:
    _collect(tmp_path, range(6))
    first = _answers(tmp_path)
    assert len(vets) == 6 and (tmp_path / _vetted.CACHE_NAME).is_file()
    vets.clear()
    second = _answers(tmp_path)
    assert vets == []
    pd.testing.assert_frame_equal(first[0], second[0])
    pd.testing.assert_frame_equal(first[1], second[1])
    _collect(tmp_path, range(6, 8))  # new files: only they are vetted
    with History(tmp_path) as h:
        assert len(h.pods()) == 16
    assert sorted(vets) == sorted(
        p for p in tmp_path.rglob("*.parquet") if "T06" in p.name or "T07" in p.name
    )


def test_a_vetted_file_replaced_by_a_foreign_one_is_refused(tmp_path: Path) -> None:
    _collect(tmp_path, range(3))
    _answers(tmp_path)  # vetted and cached
    victim = sorted((tmp_path / "pods").rglob("*.parquet"))[1]
    foreign = victim.with_name(".foreign.tmp")
    pq.write_table(pa.table({"foo": [1, 2], "bar": ["a", "b"]}), foreign)
    os.replace(foreign, victim)  # the same name: only the file's identity changed
    with pytest.raises(StoreError) as caught, History(tmp_path) as h:
        h.idle_cost(by="day")
    assert caught.value.path == victim
    assert list(verify(tmp_path).unreadable) == [victim]  # verify and History agree


def test_a_file_rewritten_in_place_is_vetted_again(tmp_path: Path) -> None:
    _collect(tmp_path, range(3))
    _answers(tmp_path)
    victim = sorted((tmp_path / "pods").rglob("*.parquet"))[0]
    stat = victim.stat()
    pq.write_table(pa.table({"foo": [1, 2]}), victim)  # same inode, new content
    os.utime(victim, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even with the old mtime
    with pytest.raises(StoreError) as caught, History(tmp_path) as h:
        h.pods()
    assert caught.value.path == victim


@pytest.fixture(scope="module")
def three_hours(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, tuple[pd.DataFrame, pd.DataFrame]]:
    """Three snapshots' files and the answers of a History that vetted each of them:
    written and asked once for the six caches that make no sense, each of which spoils
    a copy of the store and compares its answers with these."""
    store = tmp_path_factory.mktemp("three-hours")
    _collect(store, range(3))
    return store, _answers(store)


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"[" * 100_000,
        b'{"version": 1, "files": []}',
        b'{"version": 1, "files": {"pods/x.parquet": [1, 2, 3, 4, "k", [1, 2]]}}',
        b'{"version": 99, "files": {}}',
        b"null",
    ],
)
def test_a_cache_that_makes_no_sense_is_ignored(
    three_hours: tuple[Path, tuple[pd.DataFrame, pd.DataFrame]],
    tmp_path: Path,
    content: bytes,
    vets: list[Path],
) -> None:
    shared, expected = three_hours
    shutil.copytree(shared, tmp_path, dirs_exist_ok=True)  # this test writes the cache
    (tmp_path / _vetted.CACHE_NAME).write_bytes(content)
    vets.clear()
    got = _answers(tmp_path)
    assert len(vets) == 3  # vetted again
    pd.testing.assert_frame_equal(expected[0], got[0])
    assert json.loads((tmp_path / _vetted.CACHE_NAME).read_bytes())["version"] == 1  # rewritten


def test_a_cache_entry_for_a_foreign_file_with_the_wrong_identity_is_not_trusted(
    tmp_path: Path,
) -> None:
    _collect(tmp_path, range(2))
    path = tmp_path / "pods" / f"date={DAY}" / "foreign.parquet"
    pq.write_table(pa.table({"foo": [1]}), path)
    stat = path.stat()
    entry = [stat.st_size + 1, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, "k", []]
    cache = {"version": 1, "files": {f"pods/date={DAY}/foreign.parquet": entry}}
    (tmp_path / _vetted.CACHE_NAME).write_text(json.dumps(cache))
    with pytest.raises(StoreError) as caught, History(tmp_path) as h:
        h.pods()
    assert caught.value.path == path


def test_a_store_that_cannot_be_written_gets_no_cache_and_still_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _collect(tmp_path, range(3))

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("ccanalytics.history.store._local.LocalLocation.replace", refuse)
    got = _answers(tmp_path)
    assert len(got[1]) == 6 and not (tmp_path / _vetted.CACHE_NAME).exists()


def test_the_cache_is_invisible_to_verify_and_leaves_compacted_files_out(tmp_path: Path) -> None:
    from ccanalytics.history import compact

    _collect(tmp_path, range(4))
    _answers(tmp_path)
    assert verify(tmp_path).ok
    compact(tmp_path, DAY)
    with History(tmp_path) as h:
        assert len(h.pods()) == 8
    cached = json.loads((tmp_path / _vetted.CACHE_NAME).read_bytes())["files"]
    assert list(cached) == [
        str(p.relative_to(tmp_path)) for p in (tmp_path / "pods").rglob("*.parquet")
    ]


def _bounds(h: History) -> tuple[object, object]:
    return tuple(h.connection.execute(BOUNDS_SQL).fetchall()[0])


def test_the_store_bounds_from_the_footers_are_the_queried_ones(tmp_path: Path) -> None:
    _collect(tmp_path, range(2, 5))
    # A snapshot only half written (its gpus file alone), later than every pod row.
    gpus = pd.DataFrame(
        {
            "cluster_id": pd.array(["cl-a"], "string"),
            "pod_id": pd.array(["p1"], "string"),
            "gpu_index": pd.array([0], "Int64"),
            "observed_at": [pd.Timestamp(f"{DAY}T07:30:00.123456Z")],
        }
    )
    append_frame(tmp_path, "gpus", gpus)
    with History(tmp_path) as h:
        assert h.connection.execute("SELECT * FROM _bounds").fetchall()[0] != (None, None)
        from_footers = h.connection.execute("SELECT lo_us, hi_us FROM _bounds").fetchall()[0]
        assert (
            "read_parquet"
            not in h.connection.execute(
                "SELECT sql FROM duckdb_views() WHERE view_name = '_bounds'"
            ).fetchall()[0][0]
        )
        assert from_footers == _bounds(h)
        assert h.window_bounds("1h") == (
            pd.Timestamp(f"{DAY}T06:30:00.123456Z"),
            None,
        )


def test_files_of_two_schemas_interleaved_read_as_one_view(tmp_path: Path) -> None:
    # An older writer's files (no gpus_reporting column) between newer ones: runs of
    # one schema each, read in the listing's order; too many runs, one read by name.
    for hour in range(6):
        rows = pods_table([pod_row("cl-a", f"{DAY}T{hour:02d}:00:00Z", "p1", gpus_reporting=8)])
        frame = rows.drop(columns="schema_version")
        if hour % 2:
            frame = frame.drop(columns="gpus_reporting")
        append_frame(tmp_path, "pods", frame)
    with History(tmp_path) as h:
        pods = h.pods()
        assert pods["gpus_reporting"].isna().tolist() == [False, True] * 3
        indexes = h.sql("SELECT file_index FROM pods ORDER BY observed_at")["file_index"]
        assert indexes.tolist() == list(range(6))
    original = _views.MAX_SCHEMA_RUNS
    try:
        _views.MAX_SCHEMA_RUNS = 2
        with History(tmp_path) as h:
            pd.testing.assert_frame_equal(h.pods(), pods)
            view = h.connection.execute(
                "SELECT sql FROM duckdb_views() WHERE view_name = 'pods'"
            ).fetchall()[0][0]
            assert "union_by_name" in view
    finally:
        _views.MAX_SCHEMA_RUNS = original

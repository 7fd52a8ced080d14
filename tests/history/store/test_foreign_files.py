"""Files in a store that are not snapshots of ours: unrelated columns, wrong types, no
columns, no ``schema_version``. ``verify`` names them, ``History`` refuses them with a
StoreError naming the file (never all-null rows), ``compact`` never merges them (and
``ccanalytics check`` says so in one line, exit 1:
tests/cli/test_check_store_failures.py)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from history_helpers import FOREIGN, pod_row, write_foreign_store, write_store

from ccanalytics import History, StoreError
from ccanalytics.history import compact, verify

DAY = "2026-11-20"


@pytest.fixture(params=sorted(FOREIGN))
def foreign(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    """A store of three snapshots plus one foreign file in its pods day folder."""
    return write_foreign_store(tmp_path, request.param)


def test_verify_names_a_foreign_file(foreign: tuple[Path, Path]) -> None:
    store, path = foreign
    report = verify(store)
    assert not report.ok
    assert list(report.unreadable) == [path]
    assert "not a snapshot" in report.unreadable[path]


def test_history_refuses_a_foreign_file_naming_it(foreign: tuple[Path, Path]) -> None:
    store, path = foreign
    with pytest.raises(StoreError) as caught, History(store) as h:
        h.pods()
    assert caught.value.path == path
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_history_answers_refuse_a_foreign_file_too(foreign: tuple[Path, Path]) -> None:
    store, path = foreign
    with pytest.raises(StoreError) as caught, History(store) as h:
        h.idle_cost(by=None)
    assert caught.value.path == path


def test_compact_never_merges_a_foreign_file(foreign: tuple[Path, Path]) -> None:
    store, path = foreign
    before = {p: p.read_bytes() for p in store.rglob("*.parquet")}
    with pytest.raises(StoreError) as caught:
        compact(store, DAY)
    assert caught.value.path == path
    assert {p: p.read_bytes() for p in store.rglob("*.parquet")} == before


def test_files_of_ours_from_other_writers_still_read(tmp_path: Path) -> None:
    # pandas' own Arrow types (large strings, nanosecond times), an all-null column
    # (Arrow's null type) and a column newer than this version: all ours.
    write_store(tmp_path, [pod_row("cl-a", f"{DAY}T0{h}:00:00Z", "p1") for h in (0, 1)])
    path = next((tmp_path / "pods").rglob("*.parquet"))
    table = pq.read_table(path)
    table = table.set_column(
        table.column_names.index("image"), "image", pa.nulls(table.num_rows, pa.null())
    )
    table = table.append_column("power_watts", pa.array([300.0] * table.num_rows))
    pq.write_table(table, path)
    assert verify(tmp_path).ok
    with History(tmp_path) as h:
        assert len(h.pods()) == 2

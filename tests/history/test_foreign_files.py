"""Files in a store that are not snapshots of ours (issue 21 item 5): unrelated columns,
wrong types, no columns, no ``schema_version``. ``verify`` names them, ``History``
refuses them with a StoreError naming the file (never all-null rows), ``compact`` never
merges them, and ``check`` says so in one line, exit 1."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from history_helpers import pod_row, write_store

from ccanalytics import History, StoreError
from ccanalytics.cli import main
from ccanalytics.history import compact, verify

DAY = "2026-11-20"
STAMP = pa.array([0], pa.timestamp("us", tz="UTC"))

FOREIGN = {
    "unrelated columns": pa.table({"foo": [1, 2], "bar": ["a", "b"]}),
    "a column of the wrong type": pa.table(
        {
            "cluster_id": pa.array([7], pa.int64()),
            "pod_id": ["p9"],
            "observed_at": STAMP,
            "schema_version": pa.array([1], pa.int32()),
        }
    ),
    "observed_at as text": pa.table(
        {
            "cluster_id": ["cl-a"],
            "observed_at": ["2026-11-20T05:00:00Z"],
            "schema_version": pa.array([1], pa.int32()),
        }
    ),
    "no columns": pa.table({}),
    "no schema_version": pa.table({"cluster_id": ["cl-a"], "pod_id": ["p9"], "observed_at": STAMP}),
    "a column twice": pa.Table.from_arrays(
        [pa.array(["cl-a"]), STAMP, pa.array([1], pa.int32()), pa.array([1], pa.int32())],
        names=["cluster_id", "observed_at", "schema_version", "schema_version"],
    ),
}


@pytest.fixture(params=sorted(FOREIGN))
def foreign(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    """A store of three snapshots plus one foreign file in its pods day folder."""
    write_store(tmp_path, [pod_row("cl-a", f"{DAY}T0{h}:00:00Z", "p1") for h in (0, 1, 2)])
    path = tmp_path / "pods" / f"date={DAY}" / "foreign.parquet"
    pq.write_table(FOREIGN[request.param], path)
    return tmp_path, path


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


def test_check_on_a_store_with_a_foreign_file_is_one_line_and_exit_1(
    foreign: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    store, path = foreign
    code = main(["check", "--store", str(store), "--max-idle-cost", "1"])
    _, err = capsys.readouterr()
    assert code == 1
    assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err


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

"""The showback export's CSV holds hostile names inert; its Parquet keeps them as they are.

A pod's name is the caller's text: ``=HYPERLINK(...)`` as a ``ResourceName`` cell would
run when the CSV is opened in a spreadsheet. The store: one pod per hostile name in
cl-a at 2.00 USD/h, snapshots at 00:00 and 01:00 (one hour each: 2.00 USD a pod).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from csv_cells import HOSTILE, assert_inert, file_rows
from history_helpers import pod_row, write_store

from ccanalytics.history import export_showback

TIMES = ["2026-11-02T00:00", "2026-11-02T01:00"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "store"
    write_store(
        path,
        [
            pod_row("cl-a", t, f"p{i}", name=name, cost=2.0)
            for t in TIMES
            for i, name in enumerate(HOSTILE)
        ],
    )
    return path


def _by_pod(written: list[dict[str, str]], id_column: str, column: str) -> list[str]:
    cells = {row[id_column]: row[column] for row in written}
    return [cells[f"p{i}"] for i in range(len(HOSTILE))]


def test_focus_csv_resource_names_are_inert_and_costs_stay_numbers(
    store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "focus.csv"
    export_showback(store, out, fmt="focus", since="7d")
    written = file_rows(out)
    assert_inert(_by_pod(written, "ResourceId", "ResourceName"), list(HOSTILE))
    assert {row["BilledCost"] for row in written} == {"2.0"}  # a number, unquoted, in full


def test_plain_csv_names_are_inert(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "showback.csv"
    export_showback(store, out, fmt="csv", since="7d")
    written = file_rows(out)
    assert_inert(_by_pod(written, "pod_id", "name"), list(HOSTILE))
    assert pd.read_csv(out)["cost"].sum() == pytest.approx(2.0 * len(HOSTILE))


def test_parquet_keeps_the_names_as_they_are(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "focus.parquet"
    export_showback(store, out, fmt="focus", since="7d")
    frame = pd.read_parquet(out).sort_values("ResourceId")
    assert list(frame["ResourceName"]) == [HOSTILE[int(p[1:])] for p in frame["ResourceId"]]

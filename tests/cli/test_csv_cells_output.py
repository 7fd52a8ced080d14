"""``--format csv`` of every command holds hostile text inert and keeps numbers numbers.

Through ``history sql`` over a store whose pods carry hostile names (cl-a, one pod per
name, 2.00 USD/h), and through ``write_frame`` itself for negative numbers.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from csv_cells import HOSTILE, assert_inert, file_rows, rows
from history_helpers import pod_row, write_store

from ccanalytics.cli import main
from ccanalytics.cli._output import write_frame


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    times = ["2026-11-02T00:00", "2026-11-02T01:00"]
    write_store(
        path,
        [
            pod_row("cl-a", t, f"p{i:02d}", name=n, cost=2.0)
            for t in times
            for i, n in enumerate(HOSTILE)
        ],
    )
    return path


def test_history_csv_names_are_inert_and_negative_numbers_stay(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    query = "SELECT DISTINCT pod_id, name, -cost AS refund FROM pods ORDER BY pod_id"
    code = main(["history", "sql", query, "--store", str(store), "--format", "csv"])
    out = capsys.readouterr().out
    assert code == 0
    written = rows(out)
    assert_inert([row["name"] for row in written], list(HOSTILE))
    assert {row["refund"] for row in written} == {"-2.0"}


def test_a_csv_file_output_is_inert_too(tmp_path: Path) -> None:
    frame = pd.DataFrame({"name": list(HOSTILE), "delta": [-3.5] * len(HOSTILE)})
    write_frame(frame, "csv", str(tmp_path / "out.csv"))
    written = file_rows(tmp_path / "out.csv")
    assert_inert([row["name"] for row in written], list(HOSTILE))
    assert {row["delta"] for row in written} == {"-3.5"}

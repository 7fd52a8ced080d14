"""The commands' tables are for people (aligned, units, "no rows" in words); CSV and JSON
keep the raw numbers for programs."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ccanalytics.cli import main
from ccanalytics.cli._table import format_table
from tests.history_helpers import pod_row, ts, write_store


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One hour (13 snapshots 5 minutes apart) of one idle pod at 2 USD/h and one busy pod
    at 3 USD/h on cl-a, from 2026-04-01 10:00: 5.00 USD spent, 2.00 USD of it idle (40 %)."""
    rows = []
    for i in range(13):
        when = str(ts("2026-04-01 10:00") + pd.Timedelta(minutes=5 * i))
        rows.append(pod_row("cl-a", when, "idle", cost=2.0, gpu_util_mean=1.0, gpu_util_max=2.0))
        rows.append(pod_row("cl-a", when, "busy", cost=3.0))
    folder = tmp_path_factory.mktemp("tables") / "store"
    write_store(folder, rows)
    return folder


@pytest.fixture
def store(written: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(written, tmp_path / "store"))


def _run(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    code = main(list(words))
    out, err = capsys.readouterr()
    return code, out, err


def _cell(lines: list[str], row: int, column: str) -> str:
    """The text of ``column`` in line ``row``: its header's span, right-aligned numbers."""
    header = lines[0]
    start = header.index(column)
    end = start + len(column)
    # A right-aligned column ends where its header ends; widen to the left up to the gap.
    text = lines[row][:end]
    return text.rsplit("  ", 1)[-1].strip()


def test_the_idle_cost_table_is_aligned_with_units(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "history", "idle-cost", "--store", str(store))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "Empty DataFrame" not in out and "<NA>" not in out
    names = lines[0].split()
    assert names[:3] == ["cluster_id", "observed_hours", "total_cost"]
    # The second line says each column's unit, under its name's end.
    assert _cell(lines, 1, "total_cost") == "USD"
    assert _cell(lines, 1, "idle_cost_share") == "%"
    assert _cell(lines, 1, "observed_hours") == "h"
    assert _cell(lines, 1, "cluster_id") == ""
    # 2 + 3 USD/h for an hour; 2 of 5 idle: 40 %.
    assert _cell(lines, 2, "total_cost") == "5.00"
    assert _cell(lines, 2, "idle_cost") == "2.00"
    assert _cell(lines, 2, "idle_cost_share") == "40.0"
    assert lines[2].startswith("cl-a ")
    # Every line as long as the header: the columns are aligned.
    assert len({len(line) for line in lines}) == 1


def test_no_rows_is_said_in_words(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "history", "pods", "--store", str(store), "--since", "2030-01-01")
    assert (code, err) == (0, "")
    assert out == "no rows\n"


def test_csv_and_json_keep_the_raw_numbers(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "history", "idle-cost", "--store", str(store), "--format", "csv")
    frame = pd.read_csv(io.StringIO(out))
    assert frame.loc[0, "total_cost"] == pytest.approx(5.0)
    assert frame.loc[0, "idle_cost_share"] == pytest.approx(0.4)
    _, out, _ = _run(capsys, "history", "idle-cost", "--store", str(store), "--format", "json")
    assert json.loads(out)[0]["idle_cost"] == pytest.approx(2.0)


def test_the_table_formats_each_kind_of_value() -> None:
    frame = pd.DataFrame(
        {
            "name": pd.array(["a", None], dtype="string"),
            "rank": pd.array([3, None], dtype="Int64"),
            "cost": pd.array([1234.5, 0.0], dtype="Float64"),
            "gpu_util_mean": pd.array([87.25, None], dtype="Float64"),
            "observed_at": pd.to_datetime(["2026-04-01 10:05", "2026-04-01 11:00"], utc=True),
            "locked": pd.array([True, False], dtype="boolean"),
        }
    )
    lines = format_table(frame).splitlines()
    assert lines[0].split() == list(frame.columns)
    assert lines[1].split() == ["USD/h", "%", "UTC"]
    assert lines[2].split() == ["a", "3", "1,234.50", "87.2", "2026-04-01", "10:05", "yes"]
    assert lines[3].split() == ["-", "-", "0.00", "-", "2026-04-01", "11:00", "no"]
    assert format_table(frame.iloc[:0]) == "no rows\n"


def test_a_name_cannot_move_the_terminal() -> None:
    frame = pd.DataFrame({"name": ["evil\x1b[2Jname\u202e"]})
    text = format_table(frame)
    assert "\x1b" not in text and "\u202e" not in text
    assert "\\x1b[2Jname\\u202e" in text

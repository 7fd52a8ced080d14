"""``ccanalytics export showback`` and ``export_showback``: the files, the refusals, the exit codes.

The store: cl-a/p1 at 2.00 USD/h and cl-b/q1 at 0.50 USD/h, a snapshot every 30 minutes
from 00:00 to 02:00 (the last stands for no time): two hours each, so 4.00 + 1.00 USD,
in two hourly rows per pod.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, write_store

from ccanalytics.cli import main
from ccanalytics.errors import ExportOutputError
from ccanalytics.history import (
    FOCUS_COLUMNS,
    SHOWBACK_COLUMNS,
    History,
    export_showback,
    write_showback,
)
from ccanalytics.measures import THRESHOLDS, Threshold

TIMES = [f"2026-11-02T{h:02d}:{m:02d}" for h in range(3) for m in (0, 30)][:5]
TEAMS = '[[team]]\nname = "alpha"\nclusters = "cl-a"\n'


@pytest.fixture
def store(tmp_path: Path) -> Path:
    rows = [pod_row("cl-a", t, "p1", cost=2.0) for t in TIMES]
    rows += [pod_row("cl-b", t, "q1", cost=0.5, gpu_count=0) for t in TIMES]
    write_store(tmp_path / "store", rows)
    return tmp_path / "store"


def _export(store: Path, output: Path, *extra: str) -> int:
    return main(["export", "showback", "--store", str(store), "--window", "7d",
                 "--output", str(output), *extra])  # fmt: skip


def test_focus_csv_has_the_columns_and_hand_computed_costs(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    teams = tmp_path / "teams.toml"
    teams.write_text(TEAMS, encoding="utf-8")
    out = tmp_path / "focus.csv"
    assert _export(store, out, "--teams", str(teams), "--format", "focus") == 0
    printed = capsys.readouterr().out
    assert "Wrote 4 showback rows (5.00 USD" in printed and "FOCUS 1.2 CSV" in printed
    text = out.read_text(encoding="utf-8")
    assert text.splitlines()[0] == ",".join(FOCUS_COLUMNS)
    frame = pd.read_csv(out, keep_default_na=False)
    assert frame["BilledCost"].sum() == frame["EffectiveCost"].sum() == 5.0
    assert sorted(frame["BilledCost"]) == [0.5, 0.5, 2.0, 2.0]
    assert set(frame["ChargePeriodStart"]) == {"2026-11-02T00:00:00Z", "2026-11-02T01:00:00Z"}
    assert set(frame["BillingPeriodStart"]) == {"2026-11-01T00:00:00Z"}
    assert set(frame["BillingPeriodEnd"]) == {"2026-12-01T00:00:00Z"}
    assert set(frame["InvoiceId"]) == {""}  # empty: an estimate has no invoice
    assert set(frame["ChargeClass"]) == {""}
    assert dict(zip(frame["SubAccountId"], frame["x_Team"], strict=True)) == {
        "cl-a": "alpha",
        "cl-b": "unallocated",
    }
    assert set(frame["ResourceType"]) == {"GPU Pod", "Pod"}
    assert frame["ChargeDescription"].str.contains("estimated from snapshots").all()
    assert set(frame["x_CostSource"]) == {"estimated from snapshots"}
    assert set(frame["PricingQuantity"]) == {1.0}
    customs = [c for c in frame.columns if c.startswith("x_")]
    assert list(frame.columns[-len(customs) :]) == customs  # FOCUS columns first...
    focus = list(frame.columns[: -len(customs)])
    assert focus == sorted(focus)  # ...in alphabetical order


def test_focus_parquet_and_plain_formats(store: Path, tmp_path: Path) -> None:
    assert _export(store, tmp_path / "f.parquet", "--format", "focus") == 0
    focus = pd.read_parquet(tmp_path / "f.parquet")
    assert list(focus.columns) == list(FOCUS_COLUMNS)
    assert str(focus["ChargePeriodStart"].dt.tz) == "UTC"
    assert _export(store, tmp_path / "s.parquet", "--format", "parquet", "--by", "day") == 0
    plain = pd.read_parquet(tmp_path / "s.parquet")
    assert list(plain.columns) == list(SHOWBACK_COLUMNS)
    assert sorted(plain["cost"]) == [1.0, 4.0]
    assert _export(store, tmp_path / "s.csv", "--format", "csv") == 0
    assert (tmp_path / "s.csv").read_text().splitlines()[0] == ",".join(SHOWBACK_COLUMNS)


def test_an_existing_output_is_never_replaced_without_force(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "focus.csv"
    out.write_text("keep me", encoding="utf-8")
    assert _export(store, out) == 2
    err = capsys.readouterr().err
    assert f"{out} exists" in err and "--force" in err
    assert out.read_text(encoding="utf-8") == "keep me"
    assert _export(store, out, "--force") == 0
    assert out.read_text(encoding="utf-8").startswith("BilledCost,")
    assert not list(tmp_path.glob(".focus.csv.*"))  # no temporary file left behind


def test_a_file_that_appears_while_writing_is_not_replaced(store: Path, tmp_path: Path) -> None:
    """The check before reading the store passed; the publish itself refuses too."""
    out = tmp_path / "late.csv"
    with History(store) as h:
        rows = h.showback()
    out.write_text("someone else's", encoding="utf-8")
    with pytest.raises(ExportOutputError, match="exists"):
        write_showback(rows, out, fmt="focus")
    assert out.read_text(encoding="utf-8") == "someone else's"
    assert not list(tmp_path.glob(".late.csv.*"))


def test_an_empty_store_is_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _export(tmp_path / "none", tmp_path / "x.csv") == 1
    assert "holds no snapshot" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_a_bad_teams_file_is_exit_2_naming_file_line_and_key(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    teams = tmp_path / "teams.toml"
    teams.write_text('[[team]]\nname = "a"\nclusterz = "cl-a"\n', encoding="utf-8")
    assert _export(store, tmp_path / "x.csv", "--teams", str(teams)) == 2
    err = capsys.readouterr().err
    assert f"{teams}, line 3" in err and "clusterz" in err
    assert not (tmp_path / "x.csv").exists()


def test_a_missing_folder_is_exit_2(store: Path, tmp_path: Path) -> None:
    assert _export(store, tmp_path / "nowhere" / "x.csv") == 2


def test_a_typo_in_an_option_of_the_subcommand_names_the_closest(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["export", "showback", "--store", str(store), "--outptu", "x.csv"])
    assert info.value.code == 2
    assert "did you mean --output?" in capsys.readouterr().err


def test_the_library_call_returns_what_it_wrote(store: Path, tmp_path: Path) -> None:
    result = export_showback(store, tmp_path / "a.csv", fmt="csv", by="day")
    assert (result.rows, result.cost, result.format) == (2, 5.0, "CSV")
    assert str(result.start) == "2026-11-02 00:00:00+00:00"
    assert str(result.end) == "2026-11-02 02:00:00+00:00"


def test_a_window_without_rows_writes_the_header_only(store: Path, tmp_path: Path) -> None:
    result = export_showback(store, tmp_path / "e.csv", since="2026-10-01", until="2026-10-02")
    assert (result.rows, result.cost) == (0, 0.0)
    assert (tmp_path / "e.csv").read_text(encoding="utf-8") == ",".join(FOCUS_COLUMNS) + "\n"
    export_showback(store, tmp_path / "e.parquet", since="2026-10-01", until="2026-10-02")
    assert list(pd.read_parquet(tmp_path / "e.parquet").columns) == list(FOCUS_COLUMNS)


@pytest.mark.parametrize("entry", THRESHOLDS, ids=lambda t: t.name)
def test_every_threshold_of_the_registry_is_a_flag_of_showback(
    store: Path, tmp_path: Path, entry: Threshold
) -> None:
    """Showback judges by every threshold (its waste classes read them all), so each
    entry's flag is the subcommand's, at the entry's default or any value it allows."""
    out = tmp_path / "s.parquet"
    assert _export(store, out, "--format", "parquet", entry.flag, f"{entry.default:g}") == 0
    assert pd.read_parquet(out)["cost"].sum() == 5.0


def test_the_flags_judge_the_rows(store: Path, tmp_path: Path) -> None:
    # cl-a/p1 runs at 80 % mean, 85 % busiest: idle below 90 %, low compute below 90 %.
    out = tmp_path / "s.parquet"
    assert _export(store, out, "--format", "parquet", "--idle-threshold", "90") == 0
    rows = pd.read_parquet(out).set_index("pod_id")
    assert rows.loc["p1", "idle_cost"].tolist() == [2.0, 2.0]
    assert _export(store, out, "--format", "parquet", "--force",
                   "--low-compute-threshold", "90") == 0  # fmt: skip
    rows = pd.read_parquet(out).set_index("pod_id")
    # Low compute: the unused capacity, 2.00 USD/h x (1 - 80/100) for each hour.
    assert rows.loc["p1", "low_compute_cost"].round(6).tolist() == [0.4, 0.4]

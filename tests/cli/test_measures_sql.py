"""``ccanalytics measures sql``: every measure's SQL in every dialect parses back.

Each statement printed for each dialect is parsed again by sqlglot in that dialect
(one statement, reading the store's tables by name), and DuckDB's, its parameters
bound, runs over a store and gives History.measures' own sums.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot
from budget_store import write_budget_store
from sqlglot import exp

from ccanalytics import History
from ccanalytics.cli import _measures as command, main
from ccanalytics.history import DIALECTS
from ccanalytics.measures import MEASURES, Params
from ccanalytics.measures._dimensions import DIMENSIONS
from ccanalytics.measures._sql import sql_parameters

NAMES = [m.name for m in MEASURES if m.kind in ("sum", "waste", "share")]


def _printed(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["measures", "sql", *argv]) == 0
    return capsys.readouterr().out


def test_the_cli_spells_the_library_s_dialects_and_dimensions() -> None:
    assert command.DIALECTS == DIALECTS
    assert tuple(d.name for d in DIMENSIONS) == command.DIMENSIONS


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "by", [["cluster"], ["pod", "day"], ["gpu_type", "hour"], ["rank"]], ids=str
)
def test_every_printed_statement_parses_back(
    capsys: pytest.CaptureFixture[str], dialect: str, by: list[str]
) -> None:
    flags = [word for dim in by for word in ("--by", dim)]
    text = _printed(capsys, *NAMES, "--dialect", dialect, *flags)
    assert text.startswith("-- parameters: end_us, ") and "idle_threshold=10.0" in text
    (tree,) = sqlglot.parse(text, read=dialect)
    assert tree is not None
    read = {t.name for t in tree.find_all(exp.Table)}
    assert {"pods", "gpus", "snapshots"} <= read
    columns = {s.alias_or_name for s in tree.selects}
    assert set(NAMES) - {m.name for m in MEASURES if m.kind == "share"} <= columns


def test_duckdb_s_statement_runs_and_gives_history_s_sums(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = _printed(capsys, "total_cost", "idle_cost", "--dialect", "duckdb")
    with History(write_budget_store(tmp_path)) as h:
        lo, hi = h.sql("SELECT lo_us, hi_us FROM _bounds").iloc[0]
        params = {"start_us": int(lo), "end_us": int(hi), "max_gap_us": None, **Params().sql()}
        got = h.sql(text, {k: v for k, v in params.items() if k in sql_parameters(text)})
        answer = h.measures(["total_cost", "idle_cost"], by="cluster")
    got = got.sort_values("cluster_id").reset_index(drop=True)
    assert list(got["cluster_id"]) == list(answer["cluster_id"])
    for name in ("total_cost", "idle_cost"):
        assert got[name].round(6).tolist() == answer[name].astype(float).round(6).tolist()
    assert answer["total_cost"].sum() > 0


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["stragglers"], "'stragglers' is a count measure"),
        (["nope"], "no measure 'nope'"),
    ],
)
def test_a_name_it_cannot_print_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    assert main(["measures", "sql", *argv, "--dialect", "spark"]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1

"""The benchmarks' published table: the worse of repeated runs, and the README's five rows.

Nothing is timed here (CI times nothing): these check what ``benchmarks/run.py``
publishes from rows it was given.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

# Loaded by path, not through sys.path: the benchmarks' module names (history, report,
# loader, ...) would shadow others for every later test of this worker.
_SPEC = importlib.util.spec_from_file_location(
    "_harness", Path(__file__).resolve().parents[1] / "benchmarks" / "_harness.py"
)
assert _SPEC is not None and _SPEC.loader is not None
_harness = importlib.util.module_from_spec(_SPEC)
sys.modules["_harness"] = _harness  # NamedTuple looks its module up while being built
_SPEC.loader.exec_module(_harness)
Row, headline_table, worst_of = _harness.Row, _harness.headline_table, _harness.worst_of


def _rows(loader: float, report: float) -> list[Row]:
    return [
        Row("loader", "0.8s", "0.7s", f"{loader:.2f}x", loader, "loader vs orjson"),
        Row("429 responses", "0", "2", "ok"),
        Row("report", "6 s", "4 s", f"{report:.2f}x", report, "report vs load"),
    ]


def test_each_row_is_taken_from_the_run_where_its_ratio_was_worst() -> None:
    first, second = _rows(1.10, 1.60), _rows(1.25, 1.40)
    worst = worst_of([first, second])
    assert [row.ratio for row in worst] == ["1.25x", "ok", "1.60x"]
    assert worst[0] is second[0] and worst[2] is first[2]
    assert worst[1] is first[1]  # no ratio: the first run's row


def test_a_run_that_gave_other_figures_is_left_out() -> None:
    short = _rows(9.0, 9.0)[:2]  # a figure skipped itself in this run
    assert [row.ratio for row in worst_of([_rows(1.1, 1.2), short])] == ["1.10x", "ok", "1.20x"]


def test_the_readme_table_has_at_most_five_headline_rows() -> None:
    rows = [Row(f"f{i}", "1", "1", f"{i}x", float(i), f"figure {i}") for i in range(8)]
    rows.insert(3, Row("no headline", "1", "1", "0.5x", 0.5))
    lines = headline_table(rows, "2026-12-02").splitlines()
    assert lines[2:4] == ["| figure | ratio to its baseline |", "| --- | --- |"]
    assert lines[4:] == [f"| figure {i} | {i}x |" for i in range(5)]
    assert _harness.README_ROWS == 5


def test_the_readme_says_when_each_row_is_the_worst_of_repeated_runs() -> None:
    rows = [Row("f", "1", "1", "1x", 1.0, "figure")]
    assert headline_table(rows, "2026-12-04").startswith("From one run of `benchmarks/run.py` on")
    assert headline_table(rows, "2026-12-04", runs=2).splitlines()[0] == (
        "From one run of `benchmarks/run.py --runs 2` on 2026-12-04, each row the worst of 2"
        " (every figure: docs/performance.md):"
    )


def test_a_pipe_in_a_cell_does_not_split_the_row() -> None:
    text = "a | b"
    table = headline_table([Row("x", "1", "1", text, 1.0, text)], "2026-12-02")
    assert table.splitlines()[-1] == r"| a \| b | a \| b |"


def test_the_results_table_has_a_line_per_row_and_its_four_cells() -> None:
    lines = _harness.results_table(_rows(1.10, 1.60))
    assert lines[:2] == [
        "| figure | ours | baseline | ratio and verdict |",
        "| --- | --- | --- | --- |",
    ]
    assert lines[2:] == [
        "| loader | 0.8s | 0.7s | 1.10x |",
        "| 429 responses | 0 | 2 | ok |",
        "| report | 6 s | 4 s | 1.60x |",
    ]

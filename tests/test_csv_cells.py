"""``ccanalytics._csv``: the one rule making CSV cells safe to open in a spreadsheet.

Only text is neutralised: a number stays a number (``-3.5`` in a float column is written
``-3.5``), and text that is a plain number is no formula either. Everything else that a
spreadsheet would read as a formula gets a single quote in front.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest
from csv_cells import HOSTILE, assert_inert, rows

from ccanalytics._csv import csv_row, frame_csv, safe_cell


@pytest.mark.parametrize("value", HOSTILE)
def test_a_cell_a_spreadsheet_would_run_gets_a_quote_in_front(value: str) -> None:
    assert safe_cell(value) == "'" + value


@pytest.mark.parametrize(
    "value",
    ["infer-prod-vllm-004", "", " =1", "a=b", "'=1", "-3.5", "+1", "-1e-05", "1.5E+3", "x@y"],
)
def test_other_text_and_plain_numbers_are_kept(value: str) -> None:
    assert safe_cell(value) == value


def test_a_frame_keeps_its_numbers_and_neutralises_its_text() -> None:
    names = [*HOSTILE, "plain", None]
    frame = pd.DataFrame(
        {
            "name": pd.array(names, dtype="string"),
            "label": pd.Series(names, dtype=object),
            "refund": [-3.5] * len(HOSTILE) + [-0.25, None],
            "count": pd.array([-1] * len(HOSTILE) + [2, None], dtype="Int64"),
            "kind": pd.Categorical(["-x"] * (len(names) - 1) + [None]),
            "arrow": pd.Series(names, dtype=pd.ArrowDtype(pa.string())),
        }
    )
    written = rows(frame_csv(frame))
    assert_inert([row["name"] for row in written], [*HOSTILE, "plain", ""])
    assert_inert([row["label"] for row in written], [*HOSTILE, "plain", ""])
    assert [row["refund"] for row in written] == ["-3.5"] * len(HOSTILE) + ["-0.25", ""]
    assert [row["count"] for row in written] == ["-1"] * len(HOSTILE) + ["2", ""]
    assert [row["kind"] for row in written] == ["'-x"] * (len(names) - 1) + [""]
    assert_inert([row["arrow"] for row in written], [*HOSTILE, "plain", ""])
    assert frame["name"].iloc[0] == HOSTILE[0]  # the caller's frame is left as it was


def test_the_quote_is_the_only_change_and_a_carriage_return_is_quoted() -> None:
    frame = pd.DataFrame({"name": ["=1+1", "\r=1", "a\rb", "a,b", "plain"], "n": [-1.5] * 5})
    # csv before Python 3.13 leaves a bare "\r" unquoted when rows end in "\n": a new row.
    assert frame_csv(frame, lineterminator="\n") == (
        'name,n\n\'=1+1,-1.5\n"\'\r=1",-1.5\n"a\rb",-1.5\n"a,b",-1.5\nplain,-1.5\n'
    )
    assert frame_csv(frame[3:], lineterminator="\r\n") == 'name,n\r\n"a,b",-1.5\r\nplain,-1.5\r\n'


def test_a_row_is_written_with_its_carriage_returns_quoted() -> None:
    assert csv_row(["'\r=1", "x", 3]) == '"\'\r=1",x,3\n'

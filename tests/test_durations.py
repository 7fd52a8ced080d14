"""Durations: one parser (``ccanalytics._durations``) for the library and the command line.

The same strings work in ``History``'s ``since=`` and in ``--window``, and a string that
is not one gets the same sentence, naming every unit, from both.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest

from ccanalytics import History
from ccanalytics._durations import DURATION_FORMS, parse_duration
from ccanalytics.cli import main
from tests.history_helpers import pod_row, ts, write_store

WEEK = 7 * 86400


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1w", WEEK),
        ("2w", 2 * WEEK),
        ("7d", WEEK),
        ("7 days", WEEK),
        ("1 week", WEEK),
        ("2 weeks", 2 * WEEK),
        ("1 day", 86400),
        ("90 minutes", 5400),
        ("90min", 5400),
        ("1h 30m", 5400),
        ("1 hour 30 minutes", 5400),
        ("2 hours", 7200),
        ("45 seconds", 45),
        ("45 sec", 45),
        ("1w2d", WEEK + 2 * 86400),
        (" 24H ", 86400),
    ],
)
def test_every_unit_and_its_word_is_read(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5", "w", "5x", "7 dayz", "1 month", "1y", "7d-1h", "d7"])
def test_what_is_not_a_duration_names_every_unit(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_duration(text)
    message = str(caught.value)
    assert DURATION_FORMS in message
    for unit in ("s", "m", "min", "h", "d", "w"):
        assert f" {unit}," in message or f" {unit} " in message or f" {unit})" in message


def test_the_forms_sentence_lists_every_unit() -> None:
    assert DURATION_FORMS == (
        "a number and a unit: s, m (or min), h, d or w (seconds, minutes, hours, days, weeks), "
        "or a sum such as 1h30m; e.g. 30s, 90min, 24h, 7d, 1w"
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten days of one pod at 1 USD/h, one snapshot an hour, from 2026-04-01 00:00 to
    2026-04-10 23:00 (240 snapshots)."""
    rows = [
        pod_row("cl-a", str(ts("2026-04-01") + pd.Timedelta(hours=i)), "p0") for i in range(240)
    ]
    folder = tmp_path_factory.mktemp("durations") / "store"
    write_store(folder, rows)
    return folder


@pytest.fixture
def store(written: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(written, tmp_path / "store"))


def test_history_reads_a_week_in_every_spelling(store: Path) -> None:
    with History(store) as h:
        answers = [
            h.idle_cost(since, by=None)
            for since in (timedelta(days=7), "7d", "1w", "7 days", "1 week")
        ]
    # The last snapshot is 2026-04-10 23:00; a week back is 2026-04-03 23:00: 168 hours of
    # one pod at 1 USD/h.
    assert answers[0]["total_cost"].iloc[0] == pytest.approx(168.0)
    for other in answers[1:]:
        pd.testing.assert_frame_equal(other, answers[0])


def test_history_and_the_command_line_say_the_same_about_a_bad_duration(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with History(store) as h, pytest.raises(ValueError) as caught:
        h.idle_cost("7 dayz")
    assert DURATION_FORMS in str(caught.value)
    with pytest.raises(SystemExit) as exited:
        main(["history", "idle-cost", "--store", str(store), "--window", "7 dayz"])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert DURATION_FORMS in " ".join(err.split())


@pytest.mark.parametrize("text", ["99999999999d", "5300w", "36600.5d", "1" + "0" * 400 + "s"])
def test_a_duration_past_a_century_is_refused_in_words(text: str) -> None:
    """Past pandas' times it overflowed inside the parser: a traceback on the command line."""
    with pytest.raises(ValueError, match="longer than a century"):
        parse_duration(text)


def test_the_cli_refuses_a_window_past_a_century_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ccanalytics", "history", "idle-cost", "--store", str(tmp_path),
         "--window", "99999999999d"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "longer than a century" in done.stderr and "Traceback" not in done.stderr

"""The report over a window: History's figures, to the cent, in plain sentences first."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, ts, write_store

from ccanalytics.cli import main
from ccanalytics.history import History
from ccanalytics.report import write_report
from ccanalytics.report._window import bucket_width, window_findings, window_sentences
from ccanalytics.sandbox import Sandbox


def _day(start: str, count: int) -> list[dict[str, object]]:
    """Half-hourly snapshots: 6 training ranks (rank 3 always slow, rank 1 slow for the
    4th to 6th snapshot) and 2 inference pods idle for the first half of the time."""
    rows = []
    for i in range(count):
        when = str(ts(start) + pd.Timedelta(minutes=30 * i))
        for rank in range(6):
            slow = rank == 3 or (rank == 1 and 3 <= i <= 5)
            util = 20.0 if slow else 90.0
            rows.append(
                pod_row(
                    "cl-train",
                    when,
                    f"train-{rank}",
                    rank=rank,
                    cost=12.0,
                    gpu_util_mean=util,
                    gpu_util_max=util + 3,
                )
            )
        for pod in range(2):
            util = 1.0 if i < count // 2 else 70.0
            rows.append(
                pod_row(
                    "cl-infer",
                    when,
                    f"infer-{pod}",
                    cost=4.5,
                    gpu_count=1,
                    gpu_util_mean=util,
                    gpu_util_max=util + 1,
                )
            )
    return rows


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store")
    write_store(path, _day("2026-06-01 00:00", 49))  # 00:00 .. 24:00
    return path


@pytest.fixture(scope="module")
def live() -> object:
    with Sandbox() as sb:
        yield sb


def _plain(document: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", document))


def test_the_window_sentences_carry_historys_figures(store: Path) -> None:
    with History(store) as history:
        totals = history.idle_cost(timedelta(hours=24), by=None).iloc[0]
    # Hand check: 6 x 12 + 2 x 4.5 = 81 USD/h for 24 h; inference idle 12 h: 2 x 4.5 x 12.
    assert round(totals["total_cost"], 2) == 81 * 24
    assert round(totals["idle_cost"], 2) == 108.00
    text = " ".join(window_sentences(window_findings(store, timedelta(hours=24))))
    assert text.startswith(
        "Over the last 24 h (2026-06-01 00:00 to 2026-06-02 00:00 UTC) the fleet spent "
        f"{totals['total_cost']:,.2f} USD: {totals['idle_cost']:,.2f} USD (5.6%) on idle GPU pods"
    )
    assert (
        "Chronic stragglers, flagged in at least half of their snapshots: cl-train rank 3" in text
    )
    # Rank 1 is slow in the 4th to 6th half-hourly snapshots (01:30, 02:00, 02:30): one
    # run, from 01:30 to the next snapshot at 03:00.
    assert (
        "Straggled for a stretch only: cl-train rank 1: flagged in 3 of 49 snapshots, "
        "01:30 to 03:00 UTC (90 min)" in text
    )
    assert (
        "Pods idle most of the time they were watched: cl-infer infer-0 (idle 50% of 24.0 h" in text
    )
    assert "Not observed" not in text


def test_unobserved_time_is_said(tmp_path: Path) -> None:
    rows = _day("2026-06-01 00:00", 10) + _day("2026-06-01 12:00", 10)  # silent 04:30-12:00
    write_store(tmp_path, rows)
    with History(tmp_path) as history:
        unobserved = history.idle_cost(timedelta(hours=24), by=None)["unobserved_hours"].iloc[0]
    text = " ".join(window_sentences(window_findings(tmp_path, timedelta(hours=24))))
    assert f"Not observed: {unobserved:.1f} cluster-hours" in text


def test_write_report_opens_with_the_window(store: Path, live: Sandbox, tmp_path: Path) -> None:
    with live.client() as client:
        summary = write_report(
            ["cl-infer-prod"], tmp_path / "r.html", client=client, store=store, window="24h"
        )
    document = (tmp_path / "r.html").read_text()
    text = _plain(document)
    assert text.index("Over the last 24 h") < text.index("Now: the latest listing")
    assert summary.startswith("Over the last 24 h (2026-06-01 00:00 to 2026-06-02 00:00 UTC)")
    assert document.count("<img") >= 3 + 1  # the three time plots (one heatmap) and today's
    with live.client() as client:
        write_report(["cl-infer-prod"], tmp_path / "plain.html", client=client)
    assert "Over the last" not in (tmp_path / "plain.html").read_text()


@pytest.mark.slow
def test_the_cli_report_with_a_store(
    store: Path, live: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    code = main(
        [
            "report",
            "cl-infer-prod",
            "--sandbox",
            "-o",
            str(out),
            "--store",
            str(store),
            "--window",
            "12h",
        ]
    )
    stdout = capsys.readouterr().out
    assert code == 0 and stdout.startswith("Over the last 12 h (2026-06-01 12:00 to")
    with History(store) as history:
        idle = history.idle_cost(timedelta(hours=12), by=None)["idle_cost"].iloc[0]
    assert f"{idle:,.2f} USD" in stdout
    assert main(["report", "cl-infer-prod", "--sandbox", "-o", str(out), "--window", "1h"]) == 2
    empty = tmp_path / "empty"
    assert (
        main(["report", "cl-infer-prod", "--sandbox", "-o", str(out), "--store", str(empty)]) == 1
    )
    assert "holds no snapshot" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("window", "width"),
    [(timedelta(hours=1), "5min"), (timedelta(hours=24), "15min"), (timedelta(days=30), "6h")],
)
def test_bucket_width_keeps_plots_readable(window: timedelta, width: str) -> None:
    assert bucket_width(window) == width

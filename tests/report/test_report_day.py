"""The report after a simulated day: the action list's savings are History's figures to
the cent, and the transient straggler's run is the day's story (cl-llama70b-train rank 5
at half speed from 10:00 to 14:00).

The day is tests/simulated_day.py's (the sandbox on a simulated clock, a snapshot every
5 minutes), whose clusters include cl-research-dev for its notebooks idle all day; the
report is written at the day's end for the clusters below.
"""

from __future__ import annotations

import html
import re
from datetime import timedelta
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from simulated_day import SimulatedDay

from ccanalytics import History
from ccanalytics.measures import by_name
from ccanalytics.report import write_report
from ccanalytics.sandbox import Sandbox

DAY = timedelta(hours=24)
CLUSTERS = ["cl-llama70b-train", "cl-research-dev", "cl-infer-prod"]


@pytest.fixture(scope="module")
def day(
    simulated_day: SimulatedDay, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, str, str]:
    """The store after the simulated day, and the report written from it (HTML, summary).

    The report only reads the store: the day's own (a copy would be vetted and merged
    into its day cache again, seconds of work)."""
    store = simulated_day.store
    output = tmp_path_factory.mktemp("report-day") / "report.html"
    with simulated_day.client() as client:
        summary = write_report(CLUSTERS, output, client=client, store=store, window="24h")
    return store, output.read_text(encoding="utf-8"), str(summary)


def _actions(document: str) -> list[str]:
    block = re.search(r'<ol class="actions">(.*?)</ol>', document, re.S)
    assert block, "no action list"
    return [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", block.group(1))]


@pytest.mark.slow
def test_each_stop_action_saves_historys_idle_cost_to_the_cent(day: tuple[Path, str, str]) -> None:
    store, document, _ = day
    with History(store) as h:
        by_pod = h.idle_cost(DAY, by="pod").set_index("name")["idle_cost"]
    actions = _actions(document)
    assert 1 <= len(actions) <= 5
    stops = [
        re.match(r"Stop (\S+) .*, ([\d,.]+) USD/day$", a) for a in actions if a.startswith("Stop")
    ]
    assert len(stops) == 3  # research-dev-notebook-000, -002 and -003: idle all day
    for found in stops:
        assert found is not None
        name, saving = found.group(1), float(found.group(2).replace(",", ""))
        assert name.startswith("research-dev-notebook-")
        assert saving == round(float(by_pod[name]), 2)  # a 24 h window: one day's idle cost
    # Ranked by the saving, the unpriced straggler after the priced actions.
    savings = [float(m.group(2).replace(",", "")) for m in stops if m]
    assert savings == sorted(savings, reverse=True)
    assert actions[-1].startswith("Look at rank 13 of cl-llama70b-train: flagged in 288 of 288")


@pytest.mark.slow
def test_the_transient_stragglers_run_is_10_to_14(day: tuple[Path, str, str]) -> None:
    store, document, summary = day
    with History(store) as h:
        rank5 = h.stragglers(DAY, min_share=0.0).set_index(["cluster_id", "rank"])
        flagged = int(rank5.loc[("cl-llama70b-train", 5), "flagged"])
    # Rank 5 is slow 10:00-14:00: the snapshots 10:00 .. 13:55, 4 h x 12 = 48 of them.
    assert flagged == 48
    expected = "cl-llama70b-train rank 5: flagged in 48 of 288 snapshots, 10:00 to 14:00 UTC (4 h)"
    assert expected in summary
    assert expected in html.unescape(document)


@pytest.mark.slow
def test_the_first_screen_is_the_windows_figures_then_what_to_do(
    day: tuple[Path, str, str],
) -> None:
    store, document, _ = day
    with History(store) as h:
        totals = h.idle_cost(DAY, by=None).iloc[0]
    start = document.index('<section id="first-screen">')
    screen = document[start : document.index("</section>", start)]
    assert document.index("<h1>") < document.index('<section id="first-screen">')
    assert document.index("</section>") < document.index('id="window"')
    for label, column in (
        (by_name(name).label, name) for name in ("total_cost", "idle_cost", "unused_cost")
    ):
        card = re.search(
            rf'<div class="label">{label}</div><div class="value">([\d,.]+) USD</div>', screen
        )
        assert card, label
        assert _to_the_cent(card.group(1), float(totals[column])), (label, totals[column])
    assert "What to do" in screen
    assert pd.notna(totals["total_cost"])


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_the_window_report_fits_the_screen(day: tuple[Path, str, str], width: int) -> None:
    browser = pytest.importorskip("browser")
    if browser.CHROMIUM is None:
        pytest.skip("no Chromium (apt-get install chromium) for the layout check")
    _, document, _ = day
    layout = browser.measure(document, width)
    assert layout["wide"] == [] and layout["page"] <= width
    if width == 1280:
        assert layout["scrolling"] == []


@pytest.mark.slow
def test_the_window_section_prints_historys_figures(
    simulated_day: SimulatedDay, tmp_path: Path
) -> None:
    """Whatever clusters the report lists live, its window section is the store's."""
    store = simulated_day.store  # read only
    with History(store) as h:
        totals = h.idle_cost(DAY, by=None).iloc[0]
    with Sandbox() as sb, sb.client() as client:
        summary = write_report(
            ["cl-infer-prod"], tmp_path / "r.html", client=client, store=store, window="24h"
        )
    spent = re.search(r"the fleet spent ([\d,.]+) USD: ([\d,.]+) USD", summary)
    assert spent, summary
    assert _to_the_cent(spent.group(1), totals["total_cost"])
    assert _to_the_cent(spent.group(2), totals["idle_cost"])
    assert "Chronic stragglers, flagged in at least half of their snapshots: " in summary
    assert "cl-llama70b-train rank 13 (100% of 288 snapshots)" in summary
    # The real run of flagged snapshots (10:00 to 13:55, each standing until the next).
    assert (
        "Straggled for a stretch only: cl-llama70b-train rank 5: flagged in 48 of 288 "
        "snapshots, 10:00 to 14:00 UTC (4 h)" in summary
    )


def _to_the_cent(printed: str, exact: float) -> bool:
    """``printed`` is ``exact`` rounded to the cent; within a millionth of a half cent,
    either neighbour is: the day's spend is 19,876.595 USD, a half cent, and the report
    and History add it up in different orders, so the last bit picks the cent."""
    value = float(printed.replace(",", ""))
    if abs(abs(exact * 100 - int(exact * 100)) - 0.5) < 1e-4:
        return abs(value - exact) <= 0.005 + 1e-6
    return value == round(exact, 2)

"""The first screen of a single reading: headline figures, then at most five actions
ranked by USD saved per day, each saving the analysis' own figure."""

from __future__ import annotations

import html
import re

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from ccanalytics.analysis import cluster_summary, idle_pods, stragglers
from ccanalytics.measures import by_name, waste_classes
from ccanalytics.report import render_report


@pytest.fixture(scope="module")
def document(frames: tuple[pd.DataFrame, pd.DataFrame]) -> str:
    return render_report(*frames, max_rank_plots=0)


def _actions(document: str) -> list[str]:
    block = re.search(r'<ol class="actions">(.*?)</ol>', document, re.S)
    assert block, "no action list"
    return [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", block.group(1))]


def _saving(action: str) -> float:
    found = re.search(r"([\d,]+\.\d\d) USD/day", action)
    assert found, action
    return float(found.group(1).replace(",", ""))


def test_the_page_opens_with_one_waste_figure_then_what_to_do(document: str) -> None:
    first = document.index('<section id="first-screen">')
    assert document.index("<h1>") < first
    screen = document[first : document.index("</section>")]
    labels = re.findall(r'<div class="label">([^<]*)</div>', screen)
    assert labels[0] == "wasted per day"
    # The other figures, the reading's paragraph among them, are folded under the actions.
    folded = screen.index('<details class="figures">')
    assert screen.index('<div class="waste">') < screen.index('id="what-to-do"') < folded
    # The registry's cards, by its labels: spend, idle and unused spend.
    assert labels[1:4] == [by_name(n).label for n in ("total_cost", "idle_cost", "unused_cost")]
    assert screen.index('class="headline"') > folded
    # The reading's figures are not repeated further down.
    assert document.count(f'<div class="label">{by_name("idle_cost").label}</div>') == 1
    assert document.count('class="headline"') == 1


def test_the_waste_figure_is_the_classes_per_day_with_each_part(
    frames: tuple[pd.DataFrame, pd.DataFrame], document: str
) -> None:
    pods, gpus = frames
    summary = cluster_summary(pods, gpus=gpus)
    per_day = {
        m.label: round(float(summary[str(m.live)].sum()) * 24, 2)
        for m in waste_classes()
        if float(summary[str(m.live)].sum()) > 0
    }
    # The sandbox: idle and empty 5.99, idle with a model 1.96, stragglers 11.08 USD/h.
    assert set(per_day) == {
        "idle, empty GPUs",
        "idle GPUs with a model loaded",
        "stragglers' shortfall",
    }
    block = document[document.index('<div class="waste">') :]
    value = re.search(r'<div class="value">([\d,.]+) USD/day</div>', block)
    assert value and float(value.group(1).replace(",", "")) == pytest.approx(
        sum(per_day.values()), abs=0.01
    )
    parts = re.findall(r"<li>([^<]*) ([\d,.]+) USD/day</li>", block.split("</ul>")[0])
    assert {html.unescape(k): float(v.replace(",", "")) for k, v in parts} == pytest.approx(per_day)
    spent = float(pods["cost"].sum()) * 24
    assert f"of the {spent:,.2f} USD/day spent, at this reading&#x27;s rate" in block


def test_no_card_and_no_section_shows_nothing(document: str) -> None:
    values = re.findall(
        r'<div class="card[^"]*"><div class="label">([^<]*)</div><div class="value">([^<]*)</div>',
        document,
    )
    assert values and all(v.split()[0] not in ("0", "0.00") for _, v in values), values
    assert "running, no metrics" not in {label for label, _ in values}  # every pod reports
    # The sandbox's running pods all report: no section, and no link to one.
    assert 'id="no-metrics"' not in document and 'href="#no-metrics"' not in document


def test_at_most_five_actions_ranked_by_saving(document: str) -> None:
    actions = _actions(document)
    assert 1 <= len(actions) <= 5
    savings = [_saving(a) for a in actions]
    assert savings == sorted(savings, reverse=True)


def test_each_saving_is_the_analysis_figure_times_24(
    frames: tuple[pd.DataFrame, pd.DataFrame], document: str
) -> None:
    pods, _ = frames
    idle = idle_pods(pods).set_index("name")["wasted_cost_per_hour"]
    slow = stragglers(pods).merge(pods[["pod_id", "cost"]], on="pod_id")
    expected = {f"Stop {n} ": round(float(c) * 24, 2) for n, c in idle.items()}
    expected |= {
        f"Look at rank {r.rank} of {r.cluster_id} ": round(float(r.cost) * r.deficit / 100 * 24, 2)
        for r in slow.itertuples()
    }
    # The five largest of them, in order, are the list.
    top = sorted(expected.items(), key=lambda kv: -kv[1])[:5]
    actions = _actions(document)
    assert len(actions) == len(top)
    for action, (start, saving) in zip(actions, top, strict=True):
        assert action.startswith(start), (action, start)
        assert _saving(action) == saving


def test_an_idle_action_names_the_pod_the_evidence_and_the_saving(document: str) -> None:
    stop = next(a for a in _actions(document) if a.startswith("Stop research-dev-notebook-000"))
    assert re.fullmatch(
        r"Stop research-dev-notebook-000 \(cl-research-dev\): idle now, its busiest GPU at "
        r"\d+ % \(under 10 %\), [\d.]+ USD/day",
        stop,
    ), stop


def test_so_far_is_named_since_it_started(document: str) -> None:
    assert "so far" not in html.unescape(document)
    assert "USD since it started" in document

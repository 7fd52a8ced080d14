"""Escaping is a type: hostile text through every field the report shows comes out inert.

The page is rendered from Jinja2 templates with autoescaping on (``report/templates``);
text from the API, the store or the caller reaches HTML only through them, so a name
holding markup, quotes, ampersands or bidirectional controls is shown as text, never
read as markup or reordered. Each field is fed its own hostile value (so a miss names
the field), through the live page, the window section, the first screen and the budget.
"""

from __future__ import annotations

import html
import re
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from budget_store import write_budget_store
from history_helpers import pod_row, ts, write_store

from ccanalytics.report import render_report
from ccanalytics.report._actions import (
    ranked,
    render_first_screen,
    window_actions,
    window_headline,
)
from ccanalytics.report._budget import budget_section
from ccanalytics.report._window import (
    render_window_section,
    window_cards,
    window_findings,
)

BIDI = "\u202e\u2066\u200f"  # right-to-left override, isolate, mark


def hostile(field: str) -> str:
    """A value for ``field`` holding markup, both quotes, an ampersand and bidi controls."""
    return f'<script>alert("{field}")</script>\'&amp;{BIDI}{field}'


def assert_inert(document: str, *fields: str) -> None:
    """Every field's value is shown escaped, and nothing of it is left raw."""
    assert "<script" not in document
    for char in BIDI:
        assert char not in document, f"U+{ord(char):04X} left raw"
    for field in fields:
        shown = html.escape(hostile(field), quote=True)
        for char in BIDI:
            shown = shown.replace(char, f"\\u{ord(char):04x}")
        assert shown in document, f"{field} not shown escaped"
    assert not re.search(r"<(?!/?[a-z0-9]+[ >]|!DOCTYPE)", document)


@pytest.fixture(scope="module")
def live(frames: tuple[pd.DataFrame, pd.DataFrame]) -> str:
    """The live page with a hostile value in each field: rendered once (seconds: every
    figure), read by the tests below. The frames are copied, never changed in place."""
    pods, gpus = (f.copy() for f in frames)
    names = {"cl-infer-prod": hostile("cluster"), "cl-llama70b-train": hostile("train")}
    for frame in (pods, gpus):
        frame["cluster_id"] = frame["cluster_id"].replace(names)
        frame["gpu_type"] = frame["gpu_type"].replace({"NVIDIA L40S": hostile("gputype")})
    pods["name"] = pods["name"].where(pods["name"] != "infer-prod-vllm-004", hostile("podname"))
    pods["pod_id"] = pods["pod_id"].where(pods["name"] != hostile("podname"), hostile("podid"))
    not_running = pods["status"] != "RUNNING"
    pods.loc[not_running, "status"] = hostile("status")
    return render_report(
        pods,
        gpus,
        title=hostile("title"),
        failed={hostile("failedid"): hostile("reason")},
        cluster_ids=[*names.values(), hostile("emptycluster")],
    )


def test_every_live_field_is_escaped(live: str) -> None:
    assert_inert(
        live,
        "cluster",
        "train",  # its straggling rank: the rank label, the action, the figure captions
        "gputype",
        "podname",
        "podid",
        "status",
        "title",
        "failedid",
        "reason",
        "emptycluster",
    )


@pytest.mark.slow
def test_the_findings_sentences_and_rank_labels_are_escaped(live: str) -> None:
    shown = html.escape(hostile("train"), quote=True).replace(BIDI, "\\u202e\\u2066\\u200f")
    assert f"Look at rank 13 of {shown}" in live  # the action names the rank
    assert f"{shown} rank 13" in live  # the card names it too
    assert f"<h3>{shown}</h3>" in live  # its plots' heading


def _window_store(folder: Path) -> Path:
    rows = []
    for i in range(13):
        when = str(ts("2026-06-01 10:00") + pd.Timedelta(minutes=5 * i))
        for rank in range(4):
            util = 10.0 if rank == 2 else 90.0
            rows.append(
                pod_row(
                    hostile("storecluster"),
                    when,
                    f"p{rank}",
                    name=hostile(f"storepod{rank}"),
                    rank=rank,
                    gpu_util_mean=util,
                    gpu_util_max=util + 2,
                )
            )
        rows.append(
            pod_row(
                hostile("storecluster"),
                when,
                "idle",
                name=hostile("idlepod"),
                gpu_util_mean=0.5,
                gpu_util_max=1.0,
            )
        )
    write_store(folder, rows)
    return folder


def test_the_window_section_and_its_first_screen_are_escaped(tmp_path: Path) -> None:
    store = _window_store(tmp_path / "store")
    found = window_findings(store, timedelta(hours=1))
    section = str(render_window_section(found))
    first = str(
        render_first_screen(
            window_headline(found), ranked(window_actions(found)), window_cards(found)
        )
    )
    assert_inert(section + first, "storecluster", "idlepod")


def test_the_budget_lines_are_escaped(tmp_path: Path) -> None:
    store = write_budget_store(tmp_path / "store")
    policy = tmp_path / "p.toml"
    rule = hostile("rule").replace("/", "")  # a rule's name may not hold a slash
    name = rule.replace("\\", "\\\\").replace('"', '\\"')
    policy.write_text(
        f'[[rule]]\nname = "{name}"\nclusters = "cl-*"\nmax_projected_spend = {{ month = 1 }}\n'
    )
    section, _ = budget_section(store, policy)
    assert "<script" not in section and "\u202e" not in section
    # The line quotes the name as Python's repr does (bidi controls as \u escapes already).
    assert "&lt;script&gt;alert(&quot;rule&quot;)&lt;script&gt;\\&#x27;&amp;amp;" in section

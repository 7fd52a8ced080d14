"""The report at fleet scale: charts that do not grow with the fleet, findings drawn first."""

from __future__ import annotations

import pandas as pd
import pytest

from ccanalytics.frames import gpus_frame, pods_frame
from ccanalytics.report import render_report
from ccanalytics.report._draw import DPI
from ccanalytics.report._figures import MAX_COST_BARS, MAX_NAMED_UNDRAWN
from ccanalytics.sandbox import make_cluster_pods

CLUSTERS = 60


@pytest.fixture(scope="module")
def fleet() -> tuple[pd.DataFrame, pd.DataFrame]:
    """60 small clusters; the cheapest (1-GPU pods) is the only one with a straggler."""
    listing = []
    for i in range(CLUSTERS):
        cheap = i == CLUSTERS - 1
        listing += make_cluster_pods(
            f"cl-{i:03d}",
            8,
            seed=i,
            gpu_count=1 if cheap else 8,
            straggler_ranks=(3,) if cheap else (),
        )
    return pods_frame(listing), gpus_frame(listing)


@pytest.fixture(scope="module")
def document(fleet: tuple[pd.DataFrame, pd.DataFrame]) -> str:
    return render_report(*fleet, max_rank_plots=2)


@pytest.mark.slow
def test_the_cost_chart_keeps_its_size_and_sums_the_rest(document: str) -> None:
    figure = document[document.index('alt="Cost per hour by cluster"') - 200 :]
    height = round((1.4 + 0.45 * MAX_COST_BARS) * DPI)
    assert f'height="{height}"' in figure.split("</figure>")[0]
    assert f"The {MAX_COST_BARS - 1} most expensive of {CLUSTERS} clusters" in figure


def test_clusters_with_findings_are_drawn_first(document: str) -> None:
    drawn = [part.split("</h3>")[0] for part in document.split("<h3>")[1:]]
    assert drawn[0] == f"cl-{CLUSTERS - 1:03d}"  # the straggler's cluster, though cheapest
    assert len(drawn) == 2


def test_the_note_on_undrawn_clusters_stays_short(document: str) -> None:
    note = document[document.index("Not drawn (see the tables)") :].split("</p>")[0]
    assert note.count("cl-") == MAX_NAMED_UNDRAWN
    assert f"and {CLUSTERS - 2 - MAX_NAMED_UNDRAWN} more" in note


def test_figures_are_embedded_at_twice_their_page_size(document: str) -> None:
    import base64
    import struct

    start = document.index("data:image/png;base64,") + len("data:image/png;base64,")
    png = base64.b64decode(document[start : document.index('"', start)])
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    tag = document[document.rindex("<img", 0, start) : start]
    shown_width = int(document[start:].split('width="', 1)[1].split('"', 1)[0])
    assert "<img" in tag and width == 2 * shown_width and height > 0

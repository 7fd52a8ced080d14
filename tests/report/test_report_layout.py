"""The report in a real browser (27.1, 25.5): nothing overflows sideways at 1,280 px or
at a 390 px phone width, and the key tables show every column without scrolling."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from browser import CHROMIUM, measure

from ccanalytics.report import render_report

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium (apt-get install chromium) for the layout check"
)


@pytest.fixture(scope="module")
def document(frames: tuple[pd.DataFrame, pd.DataFrame]) -> str:
    return render_report(*frames, max_rank_plots=1)


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_nothing_overflows_the_viewport(document: str, width: int) -> None:
    layout = measure(document, width)
    assert layout["viewport"] == width
    assert layout["wide"] == []
    assert layout["page"] <= width


@pytest.mark.slow
def test_key_tables_show_every_column_at_1280_px(document: str) -> None:
    layout = measure(document, 1280)
    # Only tables folded under "more columns" may scroll sideways.
    assert layout["scrolling"] == []


@pytest.mark.slow
def test_the_first_screen_is_the_figures_then_what_to_do(document: str) -> None:
    layout = measure(document, 1280)
    assert layout["first"][:2] == ["H1", "DIV"]
    assert layout["first"][2] == "SECTION#first-screen"

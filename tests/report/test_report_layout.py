"""The report in a real browser (27.1, 25.5): nothing overflows sideways at 1,280 px or
at a 390 px phone width, and the key tables show every column without scrolling."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

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


@pytest.fixture(scope="module")
def layout_at(document: str) -> Callable[[int], dict[str, Any]]:
    """The page's layout at a width, measured once per width (a Chromium run each) and
    read by every test at that width. Each test gets its own copy of the result."""
    measured: dict[int, dict[str, Any]] = {}

    def at(width: int) -> dict[str, Any]:
        if width not in measured:
            measured[width] = measure(document, width)
        return copy.deepcopy(measured[width])

    return at


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_nothing_overflows_the_viewport(
    layout_at: Callable[[int], dict[str, Any]], width: int
) -> None:
    layout = layout_at(width)
    assert layout["viewport"] == width
    assert layout["wide"] == []
    assert layout["page"] <= width


@pytest.mark.slow
def test_key_tables_show_every_column_at_1280_px(
    layout_at: Callable[[int], dict[str, Any]],
) -> None:
    layout = layout_at(1280)
    # Only tables folded under "more columns" may scroll sideways.
    assert layout["scrolling"] == []


@pytest.mark.slow
def test_the_first_screen_is_the_figures_then_what_to_do(
    layout_at: Callable[[int], dict[str, Any]],
) -> None:
    layout = layout_at(1280)
    assert layout["first"][:2] == ["H1", "DIV"]
    assert layout["first"][2] == "SECTION#first-screen"

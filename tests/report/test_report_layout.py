"""The report in a real browser: nothing overflows sideways at 1,280 px or at a 390 px
phone width, the key tables show every column without scrolling, no figure wraps at
1,280 px, a table that scrolls on a phone shows it, plots keep a readable size there,
and the waste figure is on the first screen (screenshots read back as pixels)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from browser import CHROMIUM, measure, screenshot
from PIL import Image

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


@pytest.mark.slow
def test_no_figure_wraps_at_1280_px(layout_at: Callable[[int], dict[str, Any]]) -> None:
    layout = layout_at(1280)
    assert layout["wrapped"] == []


@pytest.mark.slow
def test_plots_keep_two_thirds_of_their_size_on_a_phone(
    layout_at: Callable[[int], dict[str, Any]],
) -> None:
    scales = layout_at(390)["scales"]
    assert scales and min(scales) >= 0.66  # 10-point labels at 9 px or more
    assert max(layout_at(1280)["scales"]) <= 1.0


@pytest.mark.slow
def test_tables_that_scroll_on_a_phone_show_a_shadow(
    layout_at: Callable[[int], dict[str, Any]],
) -> None:
    cues = layout_at(390)["cues"]
    assert cues  # the clusters table, at least, is wider than a phone
    assert all(c["shadow"] and c["seeThrough"] for c in cues), cues


def _luminance(shot: np.ndarray, x0: int, x1: int, y0: int, y1: int) -> float:
    return float(shot[y0:y1, x0:x1, :3].mean())


@pytest.mark.slow
def test_a_screenshot_on_a_phone_shows_the_edge_that_scrolls(
    document: str, layout_at: Callable[[int], dict[str, Any]], tmp_path: Path
) -> None:
    box = layout_at(390)["cues"][0]
    shot = np.asarray(
        Image.open(screenshot(document, 390, tmp_path / "390.png", height=box["bottom"] + 40))
    )
    assert shot.shape[1] == 390
    # The right edge of the box, where columns are hidden, is shaded; its left edge
    # (nothing hidden there yet) is not.
    right = _luminance(shot, box["right"] - 8, box["right"] - 1, box["top"], box["bottom"])
    left = _luminance(shot, 15, 22, box["top"], box["bottom"])
    assert left - right > 8, (left, right)


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_a_screenshot_shows_the_waste_figure_on_the_first_screen(
    document: str, width: int, tmp_path: Path
) -> None:
    shot = np.asarray(Image.open(screenshot(document, width, tmp_path / "shot.png", 800)))
    # The waste block's background (#fdf3ec) fills a band near the top of the screen.
    band = np.all(np.abs(shot[:, :, :3].astype(int) - (0xFD, 0xF3, 0xEC)) <= 2, axis=2)
    rows = np.flatnonzero(band.sum(axis=1) > width // 2)
    assert rows.size > 40 and rows.max() < 600, rows

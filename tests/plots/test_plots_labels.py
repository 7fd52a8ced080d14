"""Strings from the API are drawn literally: a `$` never starts matplotlib's mathtext.

Each test draws with API strings holding `$`, renders the figure (where mathtext would
raise or draw something else), then reads back the Text objects: the string shown is
the API's, and it is as wide as the same string drawn with math parsing off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from ccanalytics import plots
from ccanalytics.frames import gpus_frame, pods_frame

DOLLARS = ["L4 $$", "a$b$c", "$x$", "$\\alpha$"]  # the sandbox has four GPU types
CLUSTER = "cl-$train$"


@pytest.fixture(scope="module")
def pods(raw: dict[str, list[dict[str, Any]]]) -> pd.DataFrame:
    """The sandbox fleet, its GPU types renamed to `$` strings and one cluster to CLUSTER."""
    frame = pd.concat([pods_frame(p, cluster_id=c) for c, p in raw.items()], ignore_index=True)
    types = sorted(frame["gpu_type"].dropna().unique())
    frame["gpu_type"] = frame["gpu_type"].replace(dict(zip(types, DOLLARS, strict=True)))
    frame["cluster_id"] = frame["cluster_id"].replace({"cl-llama70b-train": CLUSTER})
    return frame


@pytest.fixture(scope="module")
def gpus(raw: dict[str, list[dict[str, Any]]]) -> pd.DataFrame:
    frame = gpus_frame(raw["cl-infer-prod"])
    frame["cluster_id"] = pd.array([CLUSTER] * len(frame), dtype="string")
    frame["status"] = pd.array(["RUN$NING $x$"] * len(frame), dtype="string")
    frame.loc[frame.index[-1], "util"] = pd.NA
    return frame


def render(draw: Callable[[Axes], object]) -> Figure:
    """Draw on a fresh figure and render it: mathtext errors surface only here."""
    figure = Figure(figsize=(8, 5), layout="constrained")
    FigureCanvasAgg(figure)  # a real canvas: the base one does not render
    draw(figure.add_subplot())
    figure.canvas.draw()
    return figure


def shown(text: Text) -> str:
    """The string a Text shows when no mathtext is involved (`\\$` is drawn as `$`)."""
    return text.get_text().replace("\\$", "$")


def literal_width(figure: Figure, like: Text) -> float:
    """The width of ``like``'s string drawn with math parsing off, in ``like``'s font."""
    probe = figure.text(
        0, 0, shown(like), fontproperties=like.get_fontproperties(), parse_math=False
    )
    width = probe.get_window_extent().width
    probe.remove()
    return float(width)


def texts_showing(figure: Figure, needle: str) -> list[Text]:
    return [t for t in figure.findobj(Text) if needle in shown(t) and t.get_visible()]


def assert_literal(figure: Figure, needle: str) -> None:
    """Some Text shows ``needle``, and every such Text is drawn as plain text."""
    found = texts_showing(figure, needle)
    assert found, f"{needle!r} is not drawn"
    for text in found:
        width = text.get_window_extent().width
        assert width == pytest.approx(literal_width(figure, text), abs=0.5), shown(text)


@pytest.mark.parametrize("gpu_type", DOLLARS)
def test_gpu_types_with_dollars_draw_literally_in_the_breakdown(
    pods: pd.DataFrame, gpu_type: str
) -> None:
    figure = render(lambda ax: plots.cost_breakdown(pods, by="gpu_type", ax=ax))
    assert_literal(figure, gpu_type)


def test_cluster_ids_with_dollars_draw_literally_in_the_breakdown(pods: pd.DataFrame) -> None:
    figure = render(lambda ax: plots.cost_breakdown(pods, by="cluster", ax=ax))
    assert_literal(figure, CLUSTER)


def test_cluster_id_with_dollars_draws_literally_in_the_rank_title(pods: pd.DataFrame) -> None:
    figure = render(lambda ax: plots.utilization_by_rank(pods, cluster_id=CLUSTER, ax=ax))
    assert_literal(figure, CLUSTER)


def test_heatmap_title_and_status_legend_draw_literally(gpus: pd.DataFrame) -> None:
    figure = render(lambda ax: plots.gpu_heatmap(gpus, ax=ax))
    assert_literal(figure, CLUSTER)
    assert_literal(figure, "run$ning $x$")  # statuses are named, lower case


def test_the_probe_tells_mathtext_from_literal_text() -> None:
    """The check above can fail: an unescaped `$x$` is narrower than its literal form."""
    figure = Figure()
    FigureCanvasAgg(figure)
    math = figure.text(0, 0, "a$b$c")
    figure.canvas.draw()
    assert math.get_window_extent().width < literal_width(figure, math) - 1

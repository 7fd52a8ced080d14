"""The report's own PNGs (one draw, "Up"-filtered rows) hold the pixels savefig would."""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from PIL import Image

from ccanalytics.report import _draw


def _chart(ax: Axes) -> None:
    """Text, hatches, a legend, an image and a colorbar: the report's kinds of artist."""
    ax.bar(["a", "b", "c"], [3.0, 1.5, 2.2], hatch="//", label="cost")
    ax.set_title("Cost per hour\nby cluster")
    ax.legend()
    image = ax.inset_axes((0.6, 0.6, 0.3, 0.3)).imshow(np.arange(12.0).reshape(3, 4))
    ax.figure.colorbar(image, ax=ax)


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def test_a_figure_has_the_pixels_savefig_draws() -> None:
    size = (6.0, 3.5)
    drawn = _draw._png(_chart, size)
    assert drawn is not None
    data, width, height = drawn
    figure = Figure(figsize=size, layout="constrained")
    _chart(figure.add_subplot())
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_draw.DPI * _draw.PIXEL_RATIO)
    ours, theirs = _pixels(base64.b64decode(data)), _pixels(buffer.getvalue())
    assert ours.shape == theirs.shape == (height * 2, width * 2, 4)
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("opaque", [True, False])
def test_the_encoding_is_lossless_rgb_only_when_opaque(opaque: bool) -> None:
    rng = np.random.default_rng(7)
    rgba = rng.integers(0, 256, size=(37, 53, 4), dtype=np.uint8)
    rgba[..., 3] = 255 if opaque else rng.integers(0, 256, size=(37, 53), dtype=np.uint8)
    png = _draw._encode_png(rgba)
    assert Image.open(io.BytesIO(png)).mode == ("RGB" if opaque else "RGBA")
    assert np.array_equal(_pixels(png), rgba)

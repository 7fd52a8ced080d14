"""Fixtures shared by the plots tests: the sandbox fleet as served and as frames, and a
small Agg axes. A module that needs them otherwise defines its own, which wins."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ccanalytics.frames import gpus_frame, pods_frame
from ccanalytics.sandbox import SandboxApp


@pytest.fixture(scope="module")
def raw() -> dict[str, list[dict[str, Any]]]:
    """The sandbox fleet as the API serves it: cluster id -> pods (JSON dicts)."""
    return SandboxApp().data.clusters


@pytest.fixture(scope="module")
def pods(raw: dict[str, list[dict[str, Any]]]) -> pd.DataFrame:
    return pd.concat([pods_frame(p, cluster_id=c) for c, p in raw.items()], ignore_index=True)


@pytest.fixture(scope="module")
def gpus(raw: dict[str, list[dict[str, Any]]]) -> pd.DataFrame:
    return pd.concat([gpus_frame(p, cluster_id=c) for c, p in raw.items()], ignore_index=True)


@pytest.fixture
def ax() -> Axes:
    """An 8 x 4 in constrained-layout axes on an Agg canvas (no pyplot figure to close)."""
    figure = Figure(figsize=(8, 4), layout="constrained")
    FigureCanvasAgg(figure)
    return figure.add_subplot()

"""Every plot of the report is drawn at the report's thresholds, and its figures agree.

On the sandbox's timeline day, rank 13 of cl-llama70b-train runs at about half speed
with its busiest GPU at 49 %: a straggler at the default idle line (10 %), an idle pod
at 50 %. The report at 50 % lists it as idle; its rank plot must draw it idle too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.axes import Axes
from sandbox_fleet import fleet_frames

from ccanalytics import plots
from ccanalytics.analysis import idle_pods
from ccanalytics.frames import gpus_frame, pods_frame
from ccanalytics.measures import Params
from ccanalytics.report import _draw, render_report
from ccanalytics.sandbox._timeline import Timeline

CLUSTER = "cl-llama70b-train"
NOON = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
#: The rank plot's size in the report (inches): the direct draw must match it.
RANK_PLOT_SIZE = (10.0, 4.4)


@pytest.fixture(scope="module")
def frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    listing = Timeline(0, NOON).pods(CLUSTER, NOON)
    assert listing is not None
    return pods_frame(listing, cluster_id=CLUSTER), gpus_frame(listing, cluster_id=CLUSTER)


def _rank_plot(document: str) -> str:
    found = re.search(
        r'<img src="data:image/png;base64,([^"]+)"[^>]*alt="'
        + re.escape(f"{CLUSTER}: utilization by rank")
        + '"',
        document,
    )
    assert found, "no rank plot in the report"
    return found.group(1)


def _drawn_directly(pods: pd.DataFrame, params: Params) -> str:
    def draw(ax: Axes) -> None:
        plots.utilization_by_rank(pods, cluster_id=CLUSTER, params=params, ax=ax)

    drawn = _draw._png(draw, RANK_PLOT_SIZE)
    assert drawn is not None
    return drawn[0]


def test_rank_13_is_idle_at_50_and_not_at_the_default(
    frames: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    pods, _ = frames
    assert 13 in set(idle_pods(pods, idle_threshold=50)["rank"])
    assert 13 not in set(idle_pods(pods)["rank"])


@pytest.mark.parametrize(
    "params", [Params(idle_threshold=50), Params(min_gap=60.0)], ids=["idle", "straggler"]
)
def test_the_rank_plot_is_drawn_at_the_reports_thresholds(
    frames: tuple[pd.DataFrame, pd.DataFrame], params: Params
) -> None:
    pods, gpus = frames
    document = render_report(pods, gpus, params=params, max_rank_plots=1)
    at_params, at_defaults = _drawn_directly(pods, params), _drawn_directly(pods, Params())
    assert at_params != at_defaults  # the thresholds change what this plot shows
    assert _rank_plot(document) == at_params


def _titles(document_of: Callable[[], str], patch: pytest.MonkeyPatch) -> dict[str, str]:
    """Each figure's alt text -> the title drawn on it, figures drawn in this process."""
    drawn: list[str] = []
    png = _draw._png

    def recording(draw: Callable[[Axes], object], size: tuple[float, float]) -> Any:
        def and_note(ax: Axes) -> object:
            out = draw(ax)
            drawn.append(ax.get_title())
            return out

        return png(and_note, size)

    patch.setattr(_draw, "MIN_FIGURES_FOR_POOL", 10**6)
    patch.setattr(_draw, "_png", recording)
    document = document_of()
    alts = re.findall(r'<img [^>]*alt="([^"]*)"', document)
    assert len(alts) == len(drawn)
    return dict(zip(alts, drawn, strict=True))


def test_the_rank_plot_and_the_heatmap_count_the_same_ranks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # cl-bringup: ranks 0 and 1 running, 2 starting (GPUs listed, silent), 5 exited (no
    # GPU listed), two provisioning pods without a rank yet: four ranks.
    pods, gpus = fleet_frames()
    titles = _titles(lambda: render_report(pods, gpus, max_rank_plots=6), monkeypatch)
    by_rank = titles["cl-bringup: utilization by rank"].splitlines()[-1]
    per_gpu = titles["cl-bringup: utilization per GPU"].splitlines()[-1]
    assert by_rank.startswith("4 ranks")
    assert per_gpu == "4 ranks x 8 GPUs"

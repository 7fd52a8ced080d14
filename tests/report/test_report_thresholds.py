"""Every plot of the report is drawn at the report's thresholds, not at the defaults.

On the sandbox's timeline day, rank 13 of cl-llama70b-train runs at about half speed
with its busiest GPU at 49 %: a straggler at the default idle line (10 %), an idle pod
at 50 %. The report at 50 % lists it as idle; its rank plot must draw it idle too.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib.axes import Axes

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

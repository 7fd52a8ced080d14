"""Fixtures shared by the report tests."""

from __future__ import annotations

import pandas as pd
import pytest

from ccanalytics.frames import gpus_frame, pods_frame
from ccanalytics.sandbox import SandboxApp


@pytest.fixture(scope="module")
def frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sandbox fleet's pods and GPU frames, every cluster."""
    clusters = SandboxApp().data.clusters
    pods = pd.concat([pods_frame(p, cluster_id=c) for c, p in clusters.items()], ignore_index=True)
    gpus = pd.concat([gpus_frame(p, cluster_id=c) for c, p in clusters.items()], ignore_index=True)
    return pods, gpus

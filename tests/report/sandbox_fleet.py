"""The sandbox's own fleet as the report tests render it: its frames and the report's time."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from ccanalytics.frames import gpus_frame, pods_frame
from ccanalytics.sandbox import SandboxApp

#: When the tests' reports say they were generated.
NOW = datetime(2026, 11, 20, 12, 5, tzinfo=UTC)


def fleet_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sandbox fleet's pods and GPU frames, every cluster."""
    clusters = SandboxApp().data.clusters
    pods = pd.concat([pods_frame(p, cluster_id=c) for c, p in clusters.items()], ignore_index=True)
    gpus = pd.concat([gpus_frame(p, cluster_id=c) for c, p in clusters.items()], ignore_index=True)
    return pods, gpus

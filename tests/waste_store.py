"""A small store built by hand for the waste classes and right-sizing.

Two clusters, snapshots at 10:00, 11:00 and 12:00 UTC (the last covers no time, so each
of the first two stands for one hour). Pods as the service sends them, per GPU:

cl-a (pod: GPUs x util % / memory %, USD/h) and its class, per hour:

- ``empty``: 1 x L40S, util 3 / mem 5, 2.00: idle, empty -> 2.00
- ``loaded``: 2 x A100, util 5, 4 / mem 60, 55, 4.00: idle, model loaded -> 4.00
- ``half``: 4 x H100, util 50, 5, 5, 0 / mem 30, 1, 1, 1, 6.00: busy (mean 15, below
  the low-compute line too) with 3 idle GPUs -> 6 x 3/4 = 4.50
- ``low``: 1 x A100, util 20 / mem 12, 3.00: low compute at 10:00 -> 3 x 0.8 = 2.40;
  util 60 at 11:00 -> nothing
- ``busy``: 1 x H100, util 95 / mem 90, 5.00: nothing
- ``silent``: running, 1 GPU, no metrics, 1.00: nothing (unknown, never waste)
- ``gone``: EXITED, 0.00: nothing

cl-b: ranks 0-4 of 8 x H100 at 8.00 USD/h; ranks 0-3 at 90, 91, 89, 90 %, rank 4 at
50 %: the median is 90 and the MAD 1, so rank 4 straggles with a deficit of 40 points
-> 8 x 40/100 = 3.20 per hour.

Over the two hours: cl-a idle, empty 4.00; idle, loaded 8.00; idle GPUs 9.00; low
compute 2.40; spend 2 x 21.00 = 42.00. cl-b stragglers 6.40; spend 2 x 40.00 = 80.00.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ccanalytics import gpus_frame, pods_frame
from ccanalytics.history.store._write import append_frame

TIMES = ("2026-11-20T10:00Z", "2026-11-20T11:00Z", "2026-11-20T12:00Z")
L40S, A100, H100 = "NVIDIA L40S", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"


def pod(
    cluster: str,
    name: str,
    gpu_type: str | None,
    cost: float,
    gpus: list[tuple[int, int]] | None,
    *,
    count: int | None = None,
    rank: int | None = None,
    status: str = "RUNNING",
) -> dict[str, Any]:
    """A pod as the API sends it; ``gpus`` is (util, memoryUtil) per GPU, None: no metrics."""
    out: dict[str, Any] = {
        "id": f"{cluster}-{name}",
        "name": name,
        "status": status,
        "cost": cost,
        "cluster": {"id": cluster, "rank": rank},
        "runtime": None
        if gpus is None
        else {"gpus": [{"util": u, "memoryUtil": m} for u, m in gpus]},
    }
    if gpu_type is not None:
        out["gpu"] = {"id": gpu_type, "count": count if count is not None else len(gpus or [])}
    return out


def listing(when: str) -> list[dict[str, Any]]:
    """Both clusters' pods at ``when`` (see the module docstring)."""
    low = 20 if when == TIMES[0] else 60
    ranks = [90, 91, 89, 90, 50]
    return [
        pod("cl-a", "empty", L40S, 2.0, [(3, 5)]),
        pod("cl-a", "loaded", A100, 4.0, [(5, 60), (4, 55)]),
        pod("cl-a", "half", H100, 6.0, [(50, 30), (5, 1), (5, 1), (0, 1)]),
        pod("cl-a", "low", A100, 3.0, [(low, 12)]),
        pod("cl-a", "busy", H100, 5.0, [(95, 90)]),
        pod("cl-a", "silent", L40S, 1.0, None, count=1),
        pod("cl-a", "gone", L40S, 0.0, None, count=1, status="EXITED"),
        *(pod("cl-b", f"rank{r}", H100, 8.0, [(u, 40)] * 8, rank=r) for r, u in enumerate(ranks)),
    ]


def frames(
    when: str, pods_listed: list[dict[str, Any]] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pods and GPU frames of ``pods_listed`` (default: the listing at ``when``),
    stamped with ``when``."""
    listed = listing(when) if pods_listed is None else pods_listed
    pods, gpus = pods_frame(listed), gpus_frame(listed)
    for frame in (pods, gpus):
        frame["observed_at"] = pd.Series(
            pd.Timestamp(when), index=frame.index, dtype="datetime64[ns, UTC]"
        )
    return pods, gpus


def write_waste_store(store: Path) -> Path:
    """The three snapshots in ``store``."""
    return write_listings(store, {when: listing(when) for when in TIMES})


def write_listings(store: Path, listings: dict[str, list[dict[str, Any]]]) -> Path:
    """Each listing (pods as the API sends them) as the snapshot at its time, in ``store``."""
    for when, pods_listed in listings.items():
        pods, gpus = frames(when, pods_listed)
        append_frame(store, "pods", pods)
        append_frame(store, "gpus", gpus)
    return store

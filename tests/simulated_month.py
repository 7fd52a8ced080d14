"""A simulated month of the sandbox, listed in process and written a day at a time.

The listings are the sandbox's (its timeline, through the client and
:class:`~ccanalytics.sandbox.SandboxTransport`, with ``Date`` = the simulated clock) and
the pods frame the library's (``pods_frame`` of a cluster's day of listings, each row
with its listing's ``observed_at``, as a load adds it); the store is written by the
collector's own writer (``append_frame``; the snapshots table's rows as ``snapshot_rows``
writes them, one per cluster and instant), one file per table and UTC day instead of three per
snapshot: a month in seconds, not minutes of fsync. The pod and snapshot rows are what
``collect`` would have written at each instant; the GPU rows, which no figure of the
budgets and anomalies reads, are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from ccanalytics import Client, pods_frame
from ccanalytics.history.store._schema import OK, SNAPSHOT_COLUMNS
from ccanalytics.history.store._write import append_frame
from ccanalytics.sandbox import EXEMPT_KEY, IN_PROCESS_URL, SandboxApp, SandboxTransport

__all__ = ["write_month"]


def write_month(
    store: Path,
    app: SandboxApp,
    clusters: Sequence[str],
    until: datetime,
    step: timedelta = timedelta(minutes=30),
) -> Path:
    """A snapshot of ``clusters`` every ``step`` from the app's clock to before ``until``."""
    clock = app.clock
    assert clock is not None and hasattr(clock, "advance")
    listings: dict[str, list[tuple[pd.Timestamp, list[Any]]]] = {c: [] for c in clusters}
    current = clock.now().date()
    with Client(EXEMPT_KEY, IN_PROCESS_URL, transport=SandboxTransport(app)) as client:
        while clock.now() < until:
            if clock.now().date() != current:
                _write_day(store, clusters, listings)
                current = clock.now().date()
            now = pd.Timestamp(clock.now())
            for cluster in clusters:
                listings[cluster].append((now, client.list_cluster_pods(cluster)))
            clock.advance(step)
    _write_day(store, clusters, listings)
    return store


def _write_day(
    store: Path, clusters: Sequence[str], listings: dict[str, list[tuple[pd.Timestamp, list[Any]]]]
) -> None:
    """One cluster's day of listings is one ``pods_frame``; its rows timed by listing."""
    frames, snapshots = [], []
    for cluster in clusters:
        day = listings[cluster]
        frame = pods_frame([pod for _, pods in day for pod in pods], cluster_id=cluster)
        frame["observed_at"] = pd.to_datetime([now for now, pods in day for _ in pods], utc=True)
        frames.append(frame)
        # What snapshot_rows writes for a listing that answered: its instant and pods.
        snapshots.append(
            pd.DataFrame(
                {
                    "cluster_id": cluster,
                    "observed_at": pd.to_datetime([now for now, _ in day], utc=True),
                    "pods": [len(pods) for _, pods in day],
                    "outcome": OK,
                    "http_status": None,
                },
                columns=list(SNAPSHOT_COLUMNS),
            ).astype(SNAPSHOT_COLUMNS)
        )
        day.clear()
    for table, parts in (("pods", frames), ("snapshots", snapshots)):
        rows = pd.concat(parts, ignore_index=True).sort_values("observed_at", kind="stable")
        append_frame(store, table, rows.reset_index(drop=True))

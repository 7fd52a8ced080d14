"""A simulated month of the sandbox, listed in process and written a day at a time.

The listings are the sandbox's (its timeline, through the client and
:class:`~ccanalytics.sandbox.SandboxTransport`, with ``Date`` = the simulated clock),
taken undecoded as ``collect``'s load takes them (``list_cluster_pods_raw``), and the
pods frame is the one that load builds from them (``FleetFrames``: each listing's body
decoded, its rows stamped with the listing's ``observed_at``), a day of listings at a
time rather than one frame per listing. The store is written by the collector's own
writer (``append_frame``; the snapshots table's rows as ``snapshot_rows`` writes them,
one per cluster and instant), one file per table and UTC day instead of three per
snapshot: a month in seconds, not minutes of fsync. The pod and snapshot rows are what
``collect`` would have written at each instant; the GPU rows, which no figure of the
budgets and anomalies reads, are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd

from ccanalytics import Client
from ccanalytics.frames._build import FleetFrames  # the loader's decoding, as collect's
from ccanalytics.history.store._schema import OK, SNAPSHOT_COLUMNS
from ccanalytics.history.store._write import append_frame
from ccanalytics.sandbox import EXEMPT_KEY, IN_PROCESS_URL, SandboxApp, SandboxTransport

__all__ = ["write_month"]

#: One day's listings, in the order taken: (instant, cluster, the listing's body).
Listings = list[tuple[datetime, str, bytes]]


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
    listings: Listings = []
    current = clock.now().date()
    # Undecoded bodies (what collect's load reads), not models: a Pod model per pod
    # made most of the month's cost (2,270 listings: 2.9 ms each against 1.3).
    # Trusting the service's clock, as collect does with a simulated one: the simulated
    # Date is no clock skew to warn of (each listing's instant is the clock's anyway).
    transport = SandboxTransport(app)
    with Client(
        EXEMPT_KEY, IN_PROCESS_URL, transport=transport, trust_service_clock=True
    ) as client:
        while clock.now() < until:
            if clock.now().date() != current:
                _write_day(store, listings)
                current = clock.now().date()
            now = clock.now()
            for cluster in clusters:
                listings.append((now, cluster, client.list_cluster_pods_raw(cluster).content))
            clock.advance(step)
    _write_day(store, listings)
    return store


def _write_day(store: Path, listings: Listings) -> None:
    """A day of listings is one pods frame, each row timed by its listing, as a load
    of each listing would have stamped it; the snapshots rows, one per listing."""
    # The loader frames listings in the order asked: here each instant's clusters in turn.
    fleet = FleetFrames([cluster for _, cluster, _ in listings], with_gpus=False)
    for now, cluster, content in listings:
        refused = fleet.add(content, cluster, now)
        assert refused is None, refused
    pods, _ = fleet.frames()
    # What snapshot_rows writes for a listing that answered: its instant and pods, counted
    # in the frame (a listing is one cluster at one instant), not by decoding it again.
    instants = pd.to_datetime([now for now, _, _ in listings], utc=True)
    ids = [cluster for _, cluster, _ in listings]
    counts = pods.groupby(["cluster_id", "observed_at"]).size()
    snapshots = pd.DataFrame(
        {
            "cluster_id": ids,
            "observed_at": instants,
            "pods": counts.reindex(pd.MultiIndex.from_arrays([ids, instants]), fill_value=0).array,
            "outcome": OK,
            "http_status": None,
        },
        columns=list(SNAPSHOT_COLUMNS),
    ).astype(SNAPSHOT_COLUMNS)
    listings.clear()
    for table, rows in (("pods", pods), ("snapshots", snapshots)):
        rows = rows.sort_values("observed_at", kind="stable")
        append_frame(store, table, rows.reset_index(drop=True))

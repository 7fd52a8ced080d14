"""One simulated day of the sandbox's timeline fleet, collected into a store once per run.

288 five-minute snapshots, 2026-11-02 00:00 to 23:55 UTC, of every cluster whose day has
a story (ccanalytics.sandbox's docstring): cl-llama70b-train's ranks 13 (slow all day)
and 5 (10:00-14:00), cl-infer-prod's ranks 4, 9 and 10 (idle 22:00-07:00), cl-bringup
(08:00-18:25), cl-eval-afternoon (from 14:00; 404 before) and cl-research-dev's
notebooks (idle all day).

The day is collected by :func:`ccanalytics.collect` through the sandbox in process
(:class:`~ccanalytics.sandbox.SandboxTransport`): the same client, frames and store
writes as over loopback HTTP, without a socket and a server thread per request. The
session fixture ``simulated_day`` (tests/conftest.py) builds it once per run
(:func:`build_once`, under a lock the xdist workers share). ``tests/history/collector/test_collect_simulated_day.py`` checks that a
stretch of it collected over real loopback HTTP gives the same rows.
"""

from __future__ import annotations

import os
import pickle
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import ccanalytics
from ccanalytics import CollectResult, collect
from ccanalytics.sandbox import (
    EXEMPT_KEY,
    IN_PROCESS_URL,
    SandboxApp,
    SandboxTransport,
    SimulatedClock,
)

START = datetime(2026, 11, 2, tzinfo=UTC)
STEP = timedelta(minutes=5)
SNAPSHOTS = 288
END = START + SNAPSHOTS * STEP  # the clock after the last snapshot
CLUSTERS = (
    "cl-bringup",
    "cl-eval-afternoon",
    "cl-infer-prod",
    "cl-llama70b-train",
    "cl-research-dev",
)

__all__ = [
    "CLUSTERS",
    "END",
    "SNAPSHOTS",
    "START",
    "STEP",
    "SimulatedDay",
    "build",
    "build_once",
    "collect_at",
]


@dataclass(frozen=True)
class SimulatedDay:
    """The day's store (read it, never write it: use :meth:`copy`) and each collect's result."""

    store: Path
    results: tuple[CollectResult, ...]

    def copy(self, folder: Path) -> Path:
        """A copy of the store in ``folder``, for a test that writes (compact, state, cache)."""
        shutil.copytree(self.store, folder)
        return folder

    def client(self) -> ccanalytics.Client:
        """A client of the sandbox as it is after the last snapshot (the day's end)."""
        return _client(SandboxApp(clock=SimulatedClock(END)))


def collect_at(
    store: Path, client: ccanalytics.Client, clock: SimulatedClock, snapshots: int
) -> list[CollectResult]:
    """``snapshots`` collects of :data:`CLUSTERS` into ``store``, ``clock`` advanced a
    :data:`STEP` after each.

    The exempt key is the client's: its pacer counts rate-limit windows in real seconds,
    and the simulated windows (60 a minute) would make it wait for real minutes.
    """
    results = []
    for _ in range(snapshots):
        results.append(
            collect(CLUSTERS, store, client=client, errors="collect", trust_service_clock=True)
        )
        clock.advance(STEP)
    return results


def build(folder: Path) -> SimulatedDay:
    """The whole day collected into ``folder`` through the in-process sandbox.

    Each file's modification time is then the simulated instant it was written at, as
    in a store collected on that day. The day, collected in seconds just now, would
    otherwise read as a day still being written (its newest file under 10 minutes old)
    for the whole run: read from a copy per block of 32 files rather than from one copy
    of the finished day it is (tests/history/store/test_daycache.py has days still being
    written).
    """
    clock = SimulatedClock(START)
    with _client(SandboxApp(clock=clock)) as client:
        results = collect_at(folder, client, clock, SNAPSHOTS)
    for number, result in enumerate(results):
        written = int((START + number * STEP).timestamp()) * 1_000_000_000
        for path in result.files:
            os.utime(path, ns=(written, written))
    return SimulatedDay(folder, tuple(results))


def build_once(folder: Path) -> SimulatedDay:
    """The day in ``folder``: built there by the first caller, read back by the next
    ones (the caller holds a lock across processes). ``day.pickle`` is written last, so
    a build cut short is started again rather than read half-made."""
    done = folder / "day.pickle"
    if done.exists():
        day: SimulatedDay = pickle.loads(done.read_bytes())
        return day
    shutil.rmtree(folder, ignore_errors=True)
    day = build(folder / "store")
    done.write_bytes(pickle.dumps(day))
    return day


def _client(app: SandboxApp) -> ccanalytics.Client:
    """An in-process client of ``app`` that trusts its simulated clock, as
    :meth:`Sandbox.client <ccanalytics.sandbox.Sandbox.client>` does."""
    transport = SandboxTransport(app)
    return ccanalytics.Client(
        EXEMPT_KEY, IN_PROCESS_URL, transport=transport, trust_service_clock=True
    )

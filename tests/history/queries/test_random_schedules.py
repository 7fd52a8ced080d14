"""Random snapshot schedules, duplicates and gaps included: observed time never exceeds
wall time, and cost is the hand computation (one instant held by two files was once
counted twice)."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings, strategies as st

from ccanalytics.frames import POD_COLUMNS
from ccanalytics.history import History
from ccanalytics.history.store._write import append_frame  # the store's append, on purpose

T0 = pd.Timestamp("2026-11-20T00:00:00Z")
US_PER_HOUR = 3_600_000_000


def _snapshot(instant: pd.Timestamp, cost: float) -> pd.DataFrame:
    row = {
        "cluster_id": "cl-a",
        "pod_id": "p1",
        "name": "p1",
        "status": "RUNNING",
        "gpu_count": 8,
        "gpu_util_mean": 80.0,
        "gpu_util_max": 85.0,
        "cost": cost,
    }
    frame = pd.DataFrame([row])
    for name, spec in POD_COLUMNS.items():
        if name not in frame:
            frame[name] = pd.NA
        frame[name] = frame[name].astype(spec.dtype)
    return frame[list(POD_COLUMNS)].assign(observed_at=instant)


def _cost_at(minute: int) -> float:
    return 0.25 * (1 + minute % 7)  # a price that changes with the instant, the same per copy


@pytest.mark.slow  # about 0.5 s an example: a store written and read per example
@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    # Up to two days, so that intervals cross midnight; gaps of any length.
    minutes=st.lists(st.integers(min_value=0, max_value=2880), min_size=1, max_size=12),
    copies=st.lists(st.integers(min_value=1, max_value=3), min_size=12, max_size=12),
)
def test_each_instant_counts_once(minutes: list[int], copies: list[int]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for minute, n in zip(minutes, copies, strict=False):
            instant = T0 + pd.Timedelta(minutes=minute)
            for _ in range(n):  # the same instant written by n collects (n files)
                append_frame(Path(folder), "pods", _snapshot(instant, _cost_at(minute)))
        with History(folder) as h:
            total = h.idle_cost(by=None).sum()
            pod = h.idle_cost(by="pod").sum(numeric_only=True)  # no row with one instant
            lifetimes = h.pod_lifetimes().sum(numeric_only=True)
            per_day = h.idle_cost(by="day").sum(numeric_only=True)  # split at midnight
            per_cluster = h.idle_cost(by="cluster").sum(numeric_only=True)
            util = h.utilization(freq="1h")["observed_hours"].sum()
            util_pod = h.utilization(freq="1h", by="pod")["observed_hours"].sum()

    # By hand: distinct instants, each standing for the time to the next, capped at
    # twice the median spacing; the last stands for none.
    instants = sorted(set(minutes))
    gaps = [60_000_000 * (b - a) for a, b in itertools.pairwise(instants)]
    cap = int(2 * np.median(gaps)) if gaps else 0
    covered = [min(g, cap) for g in gaps]
    wall_us = 60_000_000 * (instants[-1] - instants[0])
    hand_hours = sum(covered) / US_PER_HOUR
    hand_cost = sum(_cost_at(m) * c for m, c in zip(instants, covered, strict=False)) / US_PER_HOUR

    sums = (total, pod, lifetimes, per_day, per_cluster)
    for observed in (*(frame["observed_hours"] for frame in sums), util, util_pod):
        assert observed <= wall_us / US_PER_HOUR + 1e-9
        assert round(observed, 9) == round(hand_hours, 9)
    for cost in (frame["total_cost"] for frame in sums):
        assert abs(cost - hand_cost) < 0.005  # to the cent (rounding both can split a half)

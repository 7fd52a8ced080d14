"""A finite cost gives finite sums: no intermediate of the time accounting overflows.

A cost of 1e300 USD/h is finite and the frame keeps it; Σ cost·Δt over an hour is
1e300 USD. Multiplying by Δt in microseconds before dividing by the microseconds of an
hour made cost·Δt (1e300 x 3e8 µs) overflow to inf, and every sum over it with it.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, ts, write_store

from ccanalytics import History
from tests.waste_store import H100

HUGE = 1e300


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One running pod at 1e300 USD/h, its GPUs 80 % busy on average, 13 snapshots five
    minutes apart from 10:00 (one hour accounted), and an idle pod at 2 USD/h."""
    rows = []
    for i in range(13):
        when = str(ts("2026-04-01 10:00") + pd.Timedelta(minutes=5 * i))
        rows.append(pod_row("cl-a", when, "huge", cost=HUGE, gpu_util_mean=80.0))
        rows.append(pod_row("cl-a", when, "idle", cost=2.0, gpu_util_mean=1.0, gpu_util_max=2.0))
    folder = tmp_path_factory.mktemp("huge") / "store"
    write_store(folder, rows)
    return folder


@pytest.mark.parametrize("by", ["cluster", None, "day", "pod"])
def test_idle_cost_of_a_huge_finite_cost_is_finite_and_right(store: Path, by: str | None) -> None:
    with History(store) as h:
        frame = h.idle_cost(by=by)
        gpu = h.measures("gpu_cost", by=by)
    totals = frame.select_dtypes("number").sum()
    # By hand, over the one hour: 1e300 + 2 USD spent (the 2 is lost in the rounding),
    # all of it on GPU pods; the huge pod's GPUs were 20 % unused: 2e299 (+ 1.98 idle).
    assert totals["total_cost"] == pytest.approx(HUGE, rel=1e-12)
    assert gpu["gpu_cost"].sum() == pytest.approx(HUGE, rel=1e-12)
    assert totals["unused_cost"] == pytest.approx(0.2 * HUGE, rel=1e-12)
    assert totals["idle_cost"] == pytest.approx(2.0, rel=1e-12)  # 2 USD/h x 1 h
    assert all(math.isfinite(v) for v in totals)


def test_waste_and_showback_of_a_huge_finite_cost_are_finite(store: Path) -> None:
    with History(store) as h:
        waste = h.waste(by=None).iloc[0]
        showback = h.showback(by="day")
    assert waste["total_cost"] == pytest.approx(HUGE, rel=1e-12)
    assert waste["idle_empty_cost"] + waste["idle_loaded_cost"] == pytest.approx(2.0, rel=1e-12)
    costs = showback.select_dtypes("number").sum()
    assert all(math.isfinite(v) for v in costs), costs[~costs.map(math.isfinite)]


def test_spend_anomalies_of_a_huge_finite_cost_are_finite(store: Path) -> None:
    """The hour of spend is Σ cost·Δt / Σ Δt over the hour's pieces: 1e300 + 2 USD/h."""
    with History(store) as h:
        hours = h.spend_anomalies(at="2026-04-01 11:00")
    assert len(hours) == 1
    assert hours.iloc[0]["spend"] == pytest.approx(HUGE, rel=1e-12)


def test_rightsizing_prices_of_a_huge_finite_cost_are_finite(tmp_path: Path) -> None:
    """A GPU type's price is Σ cost·Δt / Σ gpu_count·Δt; an 8-GPU pod at 8e300 USD/h whose
    GPUs are all below the idle line in every snapshot fits on fewer GPUs: 8 -> 1 saves
    7/8 of its cost, 7e300 USD/h, over a month of 30 days."""
    rows = []
    for i in range(13):
        when = str(ts("2026-04-01 10:00") + pd.Timedelta(minutes=5 * i))
        rows.append(
            pod_row("cl-a", when, "big", cost=8 * HUGE, gpu_count=8, gpu_type=H100,
                    gpu_util_mean=1.0, gpu_util_max=2.0, gpu_mem_util_max=10.0)
        )  # fmt: skip
    write_store(tmp_path / "store", rows)
    with History(tmp_path / "store") as h:
        hints = h.rightsizing()
    assert len(hints) == 1
    assert hints.iloc[0]["monthly_saving"] == pytest.approx(7 * HUGE * 24 * 30, rel=1e-9)


def test_spend_and_its_forecast_of_a_huge_finite_cost_are_finite(store: Path) -> None:
    """The forecast reads the store's hourly spend (Σ cost·Δt per hour): 1e300 USD/h
    over one hour of history is the burn-rate line, every figure finite."""
    with History(store) as h:
        spend = h.spend(by=None)
    figures = spend.select_dtypes("number").astype("float64").to_numpy().ravel()
    assert len(spend) == 3 and all(math.isfinite(v) for v in figures if v == v)
    assert spend.set_index("period").loc["day", "spent"] == pytest.approx(HUGE, rel=1e-12)

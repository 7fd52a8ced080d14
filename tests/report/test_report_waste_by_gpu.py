"""The live report's waste by GPU type: the registry's sums per GPU type, by the engine.

Checked against a hand computation on a small frame with a pod whose GPU type the
service does not name ("unknown GPU") and a CPU pod, which no GPU type's row counts.
"""

from __future__ import annotations

import pandas as pd
import pytest
from history_helpers import pod_row, pods_table

from ccanalytics.measures import live_by_sql
from ccanalytics.report._findings import _findings

AT = "2026-11-20 10:00"


def _pods(*, unknown: bool = True) -> pd.DataFrame:
    rows = [
        # Busy: unused 4 x (1 - 50/100) = 2.00.
        pod_row("c", AT, "a1", gpu_type="A100", gpu_count=2, cost=4.0, gpu_util_mean=50.0),
        # Idle (every GPU below 10 %): its whole 2.00 idle, unused 2 x 0.95 = 1.90.
        pod_row(
            "c",
            AT,
            "a2",
            gpu_type="A100",
            gpu_count=1,
            cost=2.0,
            gpu_util_mean=5.0,
            gpu_util_max=5.0,
        ),
        # Exited at no cost: an A100 pod, but it adds nothing.
        pod_row("c", AT, "a3", gpu_type="A100", status="EXITED", cost=0.0, gpu_util_mean=None),
        # Idle and uncosted: a row of zeros.
        pod_row("c", AT, "h1", gpu_count=8, cost=None, gpu_util_mean=0.0, gpu_util_max=0.0),
        # A CPU pod: no GPU type and no GPUs, in no row of the table.
        pod_row(
            "c",
            AT,
            "cpu",
            gpu_type=None,
            gpu_count=0,
            cost=1.5,
            gpu_util_mean=None,
            gpu_util_max=None,
            cpu_util=20.0,
        ),
    ]
    if unknown:  # busy: unused 3 x (1 - 25/100) = 2.25
        rows.append(
            pod_row(
                "c",
                AT,
                "u1",
                gpu_type=None,
                gpu_count=4,
                cost=3.0,
                gpu_util_mean=25.0,
                gpu_util_max=30.0,
            )
        )
    return pods_table(rows)


def _table(pods: pd.DataFrame) -> dict[str, tuple[float, ...]]:
    found = _findings(pods, 10.0).waste_by_gpu
    assert list(found.columns) == [
        "gpu_type",
        "gpu_cost_per_hour",
        "idle_cost_per_hour",
        "unused_cost_per_hour",
        "busy_unused_cost_per_hour",
        "idle_and_unused_cost_per_hour",
        "idle_and_unused_cost_share",
    ]
    return {row[0]: tuple(row[1:]) for row in found.itertuples(index=False)}


def test_waste_by_gpu_type_is_the_hand_computation() -> None:
    table = _table(_pods())
    assert list(table) == ["A100", "H100", "unknown GPU"]  # by name, as before
    # A100: the busy pod's 2.00 unused; the idle pod's 2.00 idle (its 1.90 unused is in
    # the idle part only): 4.00 of the type's 6.00 wasted.
    assert table["A100"][:5] == pytest.approx((6.0, 2.0, 3.9, 2.0, 4.0))
    assert table["A100"][5] == pytest.approx(4.0 / 6.0)
    assert table["H100"][:5] == pytest.approx((0.0, 0.0, 0.0, 0.0, 0.0))
    assert pd.isna(table["H100"][5])  # no spend: no share
    assert table["unknown GPU"] == pytest.approx((3.0, 0.0, 2.25, 2.25, 2.25, 0.75))
    # The CPU pod's 1.50 USD/h is the fleet's, not a GPU type's.
    totals = _findings(_pods(), 10.0).totals
    assert totals["cost_per_hour"] == pytest.approx(10.5)
    assert sum(row[0] for row in table.values()) == pytest.approx(9.0)


def test_a_cpu_pod_makes_no_unknown_gpu_row() -> None:
    assert list(_table(_pods(unknown=False))) == ["A100", "H100"]


def test_only_a_listing_s_dimensions_and_live_sums_split_live() -> None:
    with pytest.raises(ValueError, match="not split by 'day'"):
        live_by_sql(["gpu_cost"], "day")
    with pytest.raises(TypeError, match="stragglers is not a live sum"):
        live_by_sql(["stragglers"], "gpu_type")

"""The live report's GPU-type table: the registry's measures per GPU type, by the engine.

Checked against a hand computation on a small fleet: an A100 pod with 6 of its 8 GPUs
reporting (the registry's GPUs' worth of work weighs its mean by the GPUs reporting, as
the fleet's GPU utilization does), one whose count of GPUs reporting is unknown (all of
them), an exited and a silent A100 pod (in no row: their utilization is unknown), and
an H100 pod.
"""

from __future__ import annotations

import pandas as pd
import pytest
from history_helpers import pod_row, pods_table

from ccanalytics.analysis import cost_per_gpu_hour
from ccanalytics.measures import by_name, live_by_sql
from ccanalytics.report._findings import _findings
from ccanalytics.report._sections import _gpu_types, _Report

AT = "2026-11-20 10:00"


def _pods() -> pd.DataFrame:
    return pods_table(
        [
            # 8 GPUs, 6 reporting at 50 %: 3 GPUs' worth of work for 16 USD/h.
            pod_row(
                "c", AT, "a1", gpu_type="A100", cost=16.0, gpu_util_mean=50.0, gpus_reporting=6
            ),
            # 2 GPUs, the count reporting unknown (both): 0.5 GPUs' worth for 4 USD/h.
            pod_row(
                "c",
                AT,
                "a2",
                gpu_type="A100",
                gpu_count=2,
                cost=4.0,
                gpu_util_mean=25.0,
                gpu_util_max=30.0,
            ),
            pod_row("c", AT, "a3", gpu_type="A100", status="EXITED", cost=0.0, gpu_util_mean=None),
            pod_row(
                "c", AT, "a4", gpu_type="A100", cost=3.0, gpu_util_mean=None, gpu_util_max=None
            ),
            # 8 GPUs all busy: 8 GPUs' worth for 10 USD/h.
            pod_row("c", AT, "h1", cost=10.0, gpu_util_mean=100.0, gpu_util_max=100.0),
        ]
    )


def test_each_gpu_type_s_row_is_the_hand_computation() -> None:
    found = _findings(_pods(), 10.0)
    rows = {row.gpu_type: row for row in found.by_gpu.itertuples()}
    assert list(rows) == ["A100", "H100"]  # most costly first
    a100 = rows["A100"]
    assert (a100.judged_pods, a100.reporting_pods_gpus) == (2, 10)
    assert a100.reporting_cost_per_hour == pytest.approx(20.0)
    assert a100.list_cost_per_gpu_hour == pytest.approx(20.0 / 10)
    assert a100.used_gpus == pytest.approx(3.5)  # 6 x 0.50 + 2 x 0.25
    assert a100.gpu_utilization == pytest.approx(3.5 / 8)  # over the 8 GPUs reporting
    assert a100.cost_per_utilized_gpu_hour == pytest.approx(20.0 / 3.5)
    h100 = rows["H100"]
    assert (h100.list_cost_per_gpu_hour, h100.cost_per_utilized_gpu_hour) == (1.25, 1.25)
    # Over the fleet, the same quotients of the fleet's sums (the silent pod's 3 USD/h
    # and the exited one are in no quotient).
    assert found.total("list_cost_per_gpu_hour") == pytest.approx(30.0 / 18)
    assert found.total("cost_per_utilized_gpu_hour") == pytest.approx(30.0 / 11.5)


def test_the_public_frame_keeps_its_columns_and_units() -> None:
    table = cost_per_gpu_hour(_pods())
    assert list(table.columns) == [
        "gpu_type",
        "pods",
        "gpus",
        "cost_per_hour",
        "list_cost_per_gpu_hour",
        "gpu_util_mean",
        "utilized_gpus",
        "cost_per_utilized_gpu_hour",
    ]
    a100 = table.iloc[0]
    assert a100["gpu_util_mean"] == pytest.approx(43.75)  # percent
    assert a100["utilized_gpus"] == pytest.approx(3.5)


def test_the_table_s_headers_are_the_registry_s_labels() -> None:
    pods = _pods()
    found = _findings(pods, 10.0)
    page = str(_gpu_types(_Report(pods, pods.iloc[:0], found, "t", None, None, 0)))
    for name in ("list_cost_per_gpu_hour", "cost_per_utilized_gpu_hour", "gpu_utilization"):
        assert by_name(name).label in page, name
    assert "list price (USD per GPU-hour)" in page
    assert "5.71" in page and "43.8%" in page  # 20 / 3.5 USD; 3.5 / 8 of the GPUs


def test_a_share_splits_live_as_the_quotient_of_its_sums_per_group() -> None:
    sql, dtypes = live_by_sql(["idle_cost_share"], "gpu_type")
    assert list(dtypes) == ["gpu_type", "idle_cost_share"]
    assert "idle_cost_per_hour / nullif(cost_per_hour, 0)" in sql
    with pytest.raises(TypeError, match="stragglers is not a live sum"):
        live_by_sql(["stragglers"], "gpu_type")

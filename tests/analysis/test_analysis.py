"""Analysis helpers on the sandbox fleet: summary, idle pods, stragglers, cost per GPU-hour."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccanalytics import analysis
from ccanalytics.frames import pods_frame
from ccanalytics.sandbox import make_cluster_pods, make_data


@pytest.fixture(scope="module")
def fleet() -> pd.DataFrame:
    data = make_data()
    return pd.concat([pods_frame(p) for p in data.clusters.values()], ignore_index=True)


def test_the_straggling_rank_is_found(fleet) -> None:
    slow = analysis.stragglers(fleet)
    assert list(zip(slow["cluster_id"], slow["rank"], strict=True)) == [("cl-llama70b-train", 13)]
    row = slow.iloc[0]
    train = fleet[fleet["cluster_id"] == "cl-llama70b-train"]
    assert row["cluster_median"] == pytest.approx(train["gpu_util_mean"].astype(float).median())
    assert row["deficit"] == pytest.approx(row["cluster_median"] - row["gpu_util_mean"])
    assert row["robust_z"] < -analysis.DEFAULT_STRAGGLER_Z


def test_a_healthy_cluster_has_no_stragglers(fleet) -> None:
    finetune = fleet[fleet["cluster_id"] == "cl-finetune-7b"]
    assert analysis.stragglers(finetune).empty


def test_stragglers_use_a_robust_statistic_not_a_fixed_number() -> None:
    # Same shape at a different level: 40% everywhere, one rank at 15%.
    pods = make_cluster_pods("cl-x", 16, util=40.0, straggler_ranks=(5,))
    slow = analysis.stragglers(pods_frame(pods))
    assert slow["rank"].tolist() == [5]
    # Noisy but healthy: no rank flagged.
    assert analysis.stragglers(pods_frame(make_cluster_pods("cl-y", 64, util=70.0))).empty


def test_stragglers_need_enough_ranks() -> None:
    pods = make_cluster_pods("cl-z", 3, util=90.0, straggler_ranks=(1,))
    assert analysis.stragglers(pods_frame(pods)).empty


def test_idle_pods_are_paid_gpus_below_the_threshold(fleet) -> None:
    idle = analysis.idle_pods(fleet)
    assert set(idle["cluster_id"]) == {"cl-infer-prod", "cl-research-dev"}
    assert len(idle) == 6
    assert (idle["gpu_util_max"] < analysis.DEFAULT_IDLE_THRESHOLD).all()
    assert idle["wasted_cost_per_hour"].tolist() == idle["cost"].tolist()
    assert idle["wasted_cost_per_hour"].is_monotonic_decreasing


def test_idle_never_flags_cpu_pods_or_pods_without_metrics(fleet) -> None:
    idle = analysis.idle_pods(fleet, idle_threshold=100.0)
    assert "cl-etl-cpu" not in set(idle["cluster_id"])
    pending = fleet[fleet["gpu_util_mean"].isna()]["pod_id"]
    assert not set(pending) & set(idle["pod_id"])


def test_idle_threshold_must_be_a_percentage(fleet) -> None:
    with pytest.raises(ValueError, match="percent"):
        analysis.idle_pods(fleet, idle_threshold=150)


def test_cluster_summary_adds_up(fleet) -> None:
    summary = analysis.cluster_summary(fleet).set_index("cluster_id")
    for cid, group in fleet.groupby("cluster_id"):
        row = summary.loc[cid]
        assert row["pods"] == len(group)
        assert row["gpus"] == group["gpu_count"].fillna(0).sum()
        assert row["cost_per_hour"] == pytest.approx(group["cost"].sum())
    infer = summary.loc["cl-infer-prod"]
    idle_cost = analysis.idle_pods(fleet).query("cluster_id == 'cl-infer-prod'")["cost"].sum()
    assert infer["idle_cost_per_hour"] == pytest.approx(idle_cost)
    assert infer["idle_gpu_cost_share"] == pytest.approx(idle_cost / infer["gpu_cost_per_hour"])
    assert summary.loc["cl-llama70b-train", "stragglers"] == 1
    assert pd.isna(summary.loc["cl-etl-cpu", "gpu_util_mean"])
    bringup = summary.loc["cl-bringup"]
    assert bringup["pods"] == 6 and bringup["pods_reporting"] == 2


def test_cluster_summary_weights(fleet) -> None:
    infer = fleet[fleet["cluster_id"] == "cl-infer-prod"]
    row = analysis.cluster_summary(infer).iloc[0]
    util = infer["gpu_util_mean"].astype(float)
    assert row["gpu_util_mean"] == pytest.approx(
        np.average(util, weights=infer["gpus_reporting"].astype(float))
    )
    assert row["gpu_util_cost_weighted"] == pytest.approx(
        np.average(util, weights=infer["cost"].astype(float))
    )


def test_the_summary_s_gpu_utilization_is_the_registry_s_weight_unknown_counts_all(
    fleet,
) -> None:
    # A row whose GPUs reporting are unknown (a hand-made frame, a row stored before the
    # count was kept) weighs all its GPUs, in the live mean as in the registry's share.
    infer = fleet[fleet["cluster_id"] == "cl-infer-prod"].copy()
    first = infer.index[infer["gpu_util_mean"].notna()][0]
    infer.loc[first, "gpus_reporting"] = pd.NA
    row = analysis.cluster_summary(infer).iloc[0]
    weights = infer["gpus_reporting"].fillna(infer["gpu_count"]).astype(float)
    reporting = infer["gpu_util_mean"].notna()
    expected = np.average(
        infer["gpu_util_mean"][reporting].astype(float), weights=weights[reporting]
    )
    assert row["gpu_util_mean"] == pytest.approx(expected)
    assert row["gpu_util_mean"] == pytest.approx(100 * row["gpu_utilization"])


def test_cost_per_utilized_gpu_hour(fleet) -> None:
    table = analysis.cost_per_gpu_hour(fleet).set_index("gpu_type")
    l40s = fleet[(fleet["gpu_type"] == "NVIDIA L40S") & fleet["gpu_util_mean"].notna()]
    utilized = (l40s["gpu_count"] * l40s["gpu_util_mean"] / 100).sum()
    row = table.loc["NVIDIA L40S"]
    assert row["utilized_gpus"] == pytest.approx(utilized)
    assert row["cost_per_utilized_gpu_hour"] == pytest.approx(l40s["cost"].sum() / utilized)
    # Idle GPUs make a utilized GPU-hour dearer than the list price.
    assert (table["cost_per_utilized_gpu_hour"] > table["list_cost_per_gpu_hour"]).all()


def test_accessor_is_a_thin_shortcut(fleet) -> None:
    pd.testing.assert_frame_equal(fleet.cc.summary(), analysis.cluster_summary(fleet))
    pd.testing.assert_frame_equal(
        fleet.cc.idle(idle_threshold=5.0), analysis.idle_pods(fleet, idle_threshold=5.0)
    )
    pd.testing.assert_frame_equal(fleet.cc.stragglers(), analysis.stragglers(fleet))
    pd.testing.assert_frame_equal(fleet.cc.cost_by_gpu_type(), analysis.cost_per_gpu_hour(fleet))


def test_helpers_reject_frames_that_are_not_pods_frames() -> None:
    with pytest.raises(ValueError, match="missing columns"):
        analysis.cluster_summary(pd.DataFrame({"a": [1]}))


def test_helpers_on_an_empty_frame_give_empty_results() -> None:
    empty = pods_frame([])
    assert analysis.cluster_summary(empty).empty
    assert analysis.idle_pods(empty).empty
    assert analysis.stragglers(empty).empty
    assert analysis.cost_per_gpu_hour(empty).empty

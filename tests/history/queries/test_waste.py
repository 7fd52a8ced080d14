"""Waste classes: one measure each, the same numbers on every path.

The store is :mod:`waste_store`'s; every number below is its docstring's hand
computation, to the cent.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, ts, write_empty_listing, write_store
from waste_store import TIMES, frames, write_waste_store

from ccanalytics import analysis
from ccanalytics.history import History, check, parse_policy, render_textfile
from ccanalytics.measures import Params, policy_keys, waste_classes

CLASSES = (
    "idle_empty_cost",
    "idle_loaded_cost",
    "straggler_cost",
    "idle_gpus_cost",
    "low_compute_cost",
)
#: Per cluster over 10:00-12:00, by hand (waste_store's docstring).
HAND = {
    "cl-a": {
        "idle_empty_cost": 4.00,
        "idle_loaded_cost": 8.00,
        "straggler_cost": 0.00,
        "idle_gpus_cost": 9.00,
        "low_compute_cost": 2.40,
        "total_cost": 42.00,
    },
    "cl-b": {
        "idle_empty_cost": 0.00,
        "idle_loaded_cost": 0.00,
        "straggler_cost": 6.40,
        "idle_gpus_cost": 0.00,
        "low_compute_cost": 0.00,
        "total_cost": 80.00,
    },
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_waste_store(tmp_path_factory.mktemp("waste"))


def test_the_registry_declares_the_five_classes_once() -> None:
    assert tuple(m.name for m in waste_classes()) == CLASSES
    for name in CLASSES:
        assert f"max_{name}" in policy_keys()


def test_history_waste_per_cluster_matches_the_hand_computation(store: Path) -> None:
    with History(store) as h:
        got = h.waste(by="cluster").set_index("cluster_id")
    for cluster, hand in HAND.items():
        for column, value in hand.items():
            assert round(float(got.loc[cluster, column]), 2) == value, (cluster, column)
        # The classes sum to the waste, to the cent.
        assert round(float(got.loc[cluster, "waste_cost"]), 2) == round(
            sum(hand[c] for c in CLASSES), 2
        )


def test_the_classes_partition_idle_cost_and_stay_within_the_spend(store: Path) -> None:
    with History(store) as h:
        waste = h.waste(by=None).iloc[0]
        idle = h.idle_cost(by=None).iloc[0]
    assert round(float(waste["idle_empty_cost"] + waste["idle_loaded_cost"]), 2) == round(
        float(idle["idle_cost"]), 2
    )
    assert round(float(waste["total_cost"]), 2) == round(float(idle["total_cost"]), 2) == 122.00
    assert round(float(waste["waste_cost"]), 2) == round(4.00 + 8.00 + 6.40 + 9.00 + 2.40, 2)
    assert float(waste["waste_cost"]) <= float(waste["total_cost"])


def test_per_pod_each_pod_is_in_its_one_class(store: Path) -> None:
    with History(store) as h:
        pods = h.waste(by="pod").set_index("name")
    expected = {
        "empty": ("idle_empty_cost", 4.00),
        "loaded": ("idle_loaded_cost", 8.00),
        "half": ("idle_gpus_cost", 9.00),  # mean 15 % < 30, but class 4 comes first
        "low": ("low_compute_cost", 2.40),
        "rank4": ("straggler_cost", 6.40),
    }
    for name, (column, value) in expected.items():
        row = pods.loc[name]
        assert round(float(row[column]), 2) == value, name
        others = [c for c in CLASSES if c != column]
        assert float(row[others].sum()) == 0.0, name
    for name in ("busy", "silent", "gone", "rank0", "rank3"):
        assert float(pods.loc[name, "waste_cost"]) == 0.0, name


def test_the_thresholds_move_pods_between_classes(store: Path) -> None:
    # Memory line at 70 %: "loaded" (60 %) is empty now; low-compute line at 10 %: no pod.
    params = Params(idle_memory_threshold=70, low_compute_threshold=10)
    with History(store) as h:
        got = h.waste(by="cluster", params=params).set_index("cluster_id").loc["cl-a"]
    assert round(float(got["idle_empty_cost"]), 2) == 12.00
    assert float(got["idle_loaded_cost"]) == 0.0
    assert float(got["low_compute_cost"]) == 0.0


def test_the_live_summary_gives_the_classes_per_hour() -> None:
    pods, gpus = frames(TIMES[0])
    summary = analysis.cluster_summary(pods, gpus=gpus).set_index("cluster_id")
    per_hour = {
        "cl-a": (2.00, 4.00, 0.00, 4.50, 2.40),
        "cl-b": (0.00, 0.00, 3.20, 0.00, 0.00),
    }
    for cluster, values in per_hour.items():
        got = tuple(round(float(summary.loc[cluster, f"{c}_per_hour"]), 2) for c in CLASSES)
        assert got == values, cluster
    # The accessor passes the GPU frame too.
    assert pods.cc.cluster_summary(gpus=gpus).equals(analysis.cluster_summary(pods, gpus=gpus))


def test_live_without_the_gpu_frame_the_idle_gpus_are_unknown() -> None:
    pods, _ = frames(TIMES[0])
    row = analysis.cluster_summary(pods).set_index("cluster_id").loc["cl-a"]
    assert float(row["idle_gpus_cost_per_hour"]) == 0.0
    # "half" is then judged on its mean alone: low compute, 6 x (1 - 0.15).
    assert round(float(row["low_compute_cost_per_hour"]), 2) == round(2.40 + 6 * 0.85, 2)


def test_check_and_the_textfile_carry_each_class(store: Path) -> None:
    policy = parse_policy(
        '[[rule]]\nclusters = "cl-a"\nwindow = "2h"\n'
        "max_idle_gpus_cost = 5\nmax_low_compute_cost = 5\n"
    )
    run = check(store, policy=policy)
    assert run.policy is not None
    judged = {j.threshold.figure: j for j in run.policy.judgements}
    assert round(judged["max_idle_gpus_cost"].value, 2) == 9.00
    assert judged["max_idle_gpus_cost"].breached
    assert not judged["max_low_compute_cost"].breached
    assert "idle GPUs in busy pods cost 9.00 USD" in judged["max_idle_gpus_cost"].sentence
    text = render_textfile(run.policy).decode()
    assert 'ccanalytics_idle_gpus_cost_usd{cluster="cl-a",window="2h"} 9.0' in text


def test_an_empty_store_has_no_waste(tmp_path: Path) -> None:
    with History(write_empty_listing(tmp_path)) as h:
        one = h.waste(by=None)
        per = h.waste(by="pod")
    assert len(one) == 1 and float(one.iloc[0]["waste_cost"]) == 0.0
    assert per.empty and "idle_gpus_cost" in per.columns
    assert isinstance(one, pd.DataFrame)


def test_pod_hours_and_observed_hours_are_two_names_for_two_quantities(tmp_path: Path) -> None:
    # Two pods seen for the same hour of one cluster (13 snapshots, 5 minutes apart):
    # one cluster-hour observed, two pod-hours.
    rows = [
        pod_row("cl-a", str(ts("2026-11-20T10:00") + pd.Timedelta(minutes=5 * i)), pod)
        for i in range(13)
        for pod in ("p1", "p2")
    ]
    write_store(tmp_path, rows)
    with History(tmp_path) as h:
        waste = h.waste(by="cluster").set_index("cluster_id")
        idle = h.idle_cost(by="cluster").set_index("cluster_id")
    assert idle.loc["cl-a", "observed_hours"] == pytest.approx(1.0)  # cluster-hours
    assert waste.loc["cl-a", "pod_hours"] == pytest.approx(2.0)  # pod-hours
    assert "observed_hours" not in waste.columns

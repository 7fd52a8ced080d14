"""Analysis and report by pod status: only RUNNING pods are judged; the rest count by state.

The listings are built by hand from the sandbox's generator, shaped as the published
document says the live service sends them (``status``, ``runtime`` null unless
RUNNING, ``cost`` 0.0 once EXITED or TERMINATED), so the expected figures are
computed here from the pods themselves.
"""

from __future__ import annotations

import inspect
import random
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ccanalytics import analysis
from ccanalytics.frames import gpus_frame, pods_frame
from ccanalytics.report import render_report
from ccanalytics.report._findings import _findings, _sentences
from ccanalytics.sandbox import make_cluster_pods


def _as_service_sends(pod: dict[str, Any], status: str, **changes: Any) -> dict[str, Any]:
    pod = {k: v for k, v in pod.items() if k != "desiredStatus"}
    pod["status"] = status
    if status != "RUNNING":
        pod["runtime"] = None
    if status in ("EXITED", "TERMINATED"):
        pod["cost"] = 0.0
    pod.update(changes)
    return pod


def _idle_runtime(pod: dict[str, Any], util: float = 1.0) -> dict[str, Any]:
    runtime = dict(pod["runtime"])
    runtime["gpus"] = [{"util": util, "memoryUtil": 3.0} for _ in runtime["gpus"]]
    return runtime


@pytest.fixture(scope="module")
def listing() -> list[dict[str, Any]]:
    """8 ranks: 0-3 busy, 4 idle, 5-6 provisioning, 7 exited; plus a running pod without metrics."""
    pods = make_cluster_pods("cl-mixed", 9, util=90.0)
    out = [_as_service_sends(p, "RUNNING") for p in pods[:4]]
    out.append(_as_service_sends(pods[4], "RUNNING", runtime=_idle_runtime(pods[4])))
    out += [_as_service_sends(p, "PROVISIONING", cluster={"id": "cl-mixed"}) for p in pods[5:7]]
    out.append(_as_service_sends(pods[7], "EXITED"))
    out.append(_as_service_sends(pods[8], "RUNNING", runtime=None))
    return out


@pytest.fixture(scope="module")
def frame(listing: list[dict[str, Any]]) -> pd.DataFrame:
    return pods_frame(listing)


def test_only_running_pods_are_idle(listing: list[dict[str, Any]]) -> None:
    # A payload that breaks the document: an EXITED pod that still carries low metrics.
    exited = _as_service_sends(listing[0], "EXITED", runtime=_idle_runtime(listing[0]))
    frame = pods_frame([*listing, exited])
    idle = analysis.idle_pods(frame)
    assert idle["name"].tolist() == [listing[4]["name"]]


def test_only_running_pods_straggle() -> None:
    pods = [_as_service_sends(p, "RUNNING") for p in make_cluster_pods("cl-s", 8, util=90.0)]
    slow = dict(pods[3])
    slow["runtime"] = _idle_runtime(pods[3], util=40.0)
    running = analysis.stragglers(pods_frame([*pods[:3], slow, *pods[4:]]))
    assert running["rank"].tolist() == [3]
    stopped = {**slow, "status": "ERROR"}
    assert analysis.stragglers(pods_frame([*pods[:3], stopped, *pods[4:]])).empty


def test_summary_counts_pods_by_state(frame: pd.DataFrame, listing: list[dict[str, Any]]) -> None:
    row = analysis.cluster_summary(frame).iloc[0]
    assert row["pods"] == 9
    assert row["pods_running"] == 6 and row["pods_provisioning"] == 2 and row["pods_exited"] == 1
    assert row["pods_starting"] == 0 and row["pods_other_status"] == 0
    assert row["running_without_metrics"] == 1
    assert row["idle_pods"] == 1
    # The exited pod costs 0.0 and adds nothing; the others add their whole cost.
    assert row["cost_per_hour"] == pytest.approx(sum(p["cost"] for p in listing))
    assert listing[7]["cost"] == 0.0


def test_unused_capacity_cost_by_hand(frame: pd.DataFrame, listing: list[dict[str, Any]]) -> None:
    expected = 0.0
    for pod in listing:
        gpus = (pod.get("runtime") or {}).get("gpus")
        if pod["status"] == "RUNNING" and gpus:
            util = sum(g["util"] for g in gpus) / len(gpus)
            expected += pod["cost"] * (1 - util / 100)
    row = analysis.cluster_summary(frame).iloc[0]
    assert row["unused_cost_per_hour"] == pytest.approx(expected)
    assert _findings(frame, 10.0).unused_cost == pytest.approx(expected)


def test_idle_pods_carry_uptime_and_cost_so_far(listing: list[dict[str, Any]]) -> None:
    idle = analysis.idle_pods(pods_frame(listing)).iloc[0]
    pod = listing[4]
    assert idle["uptime_s"] == pod["runtime"]["uptime"]
    assert idle["cost_so_far"] == pytest.approx(pod["cost"] * pod["runtime"]["uptime"] / 3600)


def test_every_cost_by_gpu_type_column_describes_the_same_pods(
    frame: pd.DataFrame, listing: list[dict[str, Any]]
) -> None:
    row = analysis.cost_per_gpu_hour(frame).iloc[0]
    reporting = [p for p in listing if p["status"] == "RUNNING" and p["runtime"]]
    assert row["pods"] == len(reporting) == 5
    assert row["gpus"] == sum(p["gpu"]["count"] for p in reporting)
    assert row["cost_per_hour"] == pytest.approx(sum(p["cost"] for p in reporting))
    assert row["list_cost_per_gpu_hour"] == pytest.approx(row["cost_per_hour"] / row["gpus"])
    assert row["cost_per_utilized_gpu_hour"] == pytest.approx(
        row["cost_per_hour"] / row["utilized_gpus"]
    )


def test_headline_counts_states_and_running_pods_without_metrics(
    frame: pd.DataFrame, listing: list[dict[str, Any]]
) -> None:
    text = " ".join(_sentences(_findings(frame, 10.0)))
    provisioning = sum(p["cost"] for p in listing[5:7])
    assert (
        f"3 pods are not running (2 provisioning, 1 exited), costing {provisioning:,.2f} USD/h"
        in text
    )
    assert f"1 running pod ({listing[8]['cost']:,.2f} USD/h) reports no metrics" in text
    assert "1 idle GPU pod" in text


@pytest.mark.slow
def test_the_report_shows_states_and_the_reading_time(
    frame: pd.DataFrame, listing: list[dict[str, Any]]
) -> None:
    observed = frame.assign(observed_at=pd.Timestamp(datetime(2026, 11, 20, 3, 0, tzinfo=UTC)))
    document = render_report(observed, gpus_frame(listing))
    assert "a single reading taken at 2026-11-20 03:00 UTC" in document
    assert "2 provisioning, 1 exited" in document
    assert 'id="not-running"' in document and 'id="no-metrics"' in document
    total = sum(p["cost"] for p in listing)
    assert f"{total * 24:,.0f} USD per day and {total * 24 * 30:,.0f} USD per 30 days" in document


# ---------------------------------------------------------------------------------
# Vectorised helpers give what a plain loop over each cluster gives


def _stragglers_by_loop(frame: pd.DataFrame) -> set[tuple[str, int]]:
    flagged = set()
    usable = frame[
        frame["gpu_count"].fillna(0).gt(0)
        & frame["gpu_util_mean"].notna()
        & frame["rank"].notna()
        & frame["gpu_util_max"].ge(analysis.DEFAULT_IDLE_THRESHOLD).fillna(False)
    ]
    for cid, group in usable.groupby("cluster_id"):
        if len(group) < analysis.MIN_RANKS_FOR_STRAGGLERS:
            continue
        util = group["gpu_util_mean"].astype(float).to_numpy()
        median = np.median(util)
        mad = np.median(np.abs(util - median))
        for rank, value in zip(group["rank"], util, strict=True):
            z = 0.6745 * (value - median) / mad if mad > 0 else (-np.inf if value < median else 0)
            if median - value >= analysis.DEFAULT_STRAGGLER_MIN_GAP and z < -3.5:
                flagged.add((str(cid), int(rank)))
    return flagged


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_stragglers_match_a_loop(seed: int) -> None:
    rng = random.Random(seed)
    listing = []
    for c in range(12):
        n = rng.randint(2, 20)
        slow = tuple(rng.sample(range(n), k=rng.randint(0, 2)))
        listing += make_cluster_pods(
            f"cl-{c}", n, seed=seed, util=rng.uniform(30, 95), straggler_ranks=slow
        )
    frame = pods_frame(listing)
    found = analysis.stragglers(frame)
    assert set(zip(found["cluster_id"], found["rank"].astype(int), strict=True)) == (
        _stragglers_by_loop(frame)
    )
    assert found["deficit"].is_monotonic_decreasing


# ---------------------------------------------------------------------------------
# The accessor and the module, for people exploring in Jupyter


@pytest.mark.parametrize(
    ("method", "function"),
    [
        ("cluster_summary", analysis.cluster_summary),
        ("idle_pods", analysis.idle_pods),
        ("stragglers", analysis.stragglers),
        ("cost_per_gpu_hour", analysis.cost_per_gpu_hour),
        ("summary", analysis.cluster_summary),
        ("idle", analysis.idle_pods),
        ("cost_by_gpu_type", analysis.cost_per_gpu_hour),
    ],
)
def test_accessor_methods_have_their_functions_signature_and_docstring(
    frame: pd.DataFrame, method: str, function: Any
) -> None:
    bound = getattr(frame.cc, method)
    params = list(inspect.signature(function).parameters.values())[1:]  # without the frame
    assert list(inspect.signature(bound).parameters.values()) == params
    assert bound.__doc__ == function.__doc__ and function.__doc__
    pd.testing.assert_frame_equal(bound(), function(frame))


def test_accessor_repr_says_what_it_holds_and_offers(frame: pd.DataFrame) -> None:
    text = repr(frame.cc)
    assert "9 pods in 1 cluster:" in text and ".cc.idle_pods()" in text


def test_dir_of_analysis_shows_only_its_public_names() -> None:
    names = dir(analysis)
    assert {"cluster_summary", "idle_pods", "stragglers", "cost_per_gpu_hour"} <= set(names)
    assert not {"np", "pd", "Final", "annotations"} & set(names)
    assert names == sorted(analysis.__all__)

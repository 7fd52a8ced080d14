"""A simulated day: 288 five-minute snapshots of the timeline fleet, collected into a store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from ccanalytics import History, collect
from ccanalytics.history import compact, verify
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

START = datetime(2026, 11, 2, tzinfo=UTC)
STEP = timedelta(minutes=5)
SNAPSHOTS = 288


@pytest.fixture(scope="module")
def day_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[object]]:
    """One simulated day collected over loopback HTTP, a snapshot every 5 minutes."""
    store = tmp_path_factory.mktemp("day")
    clock = SimulatedClock(START)
    results: list[object] = []
    # The exempt key: the client's pacer counts windows in real seconds, and the
    # simulated windows (60 a minute) would make it wait for real minutes here.
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        # The clusters whose day has a story (the steady ones would only add time).
        clusters = ["cl-bringup", "cl-eval-afternoon", "cl-infer-prod", "cl-llama70b-train"]
        for _ in range(SNAPSHOTS):
            results.append(
                collect(clusters, store, client=client, errors="collect", trust_service_clock=True)
            )
            clock.advance(STEP)
    return store, results


def expected_times(first: str = "00:00", last: str = "23:55") -> list[pd.Timestamp]:
    lo, hi = pd.Timestamp(f"2026-11-02T{first}Z"), pd.Timestamp(f"2026-11-02T{last}Z")
    return list(pd.date_range(lo, hi, freq="5min"))


@pytest.mark.slow
@pytest.mark.timeout(600)  # includes the fixture: 288 fleet loads, ~0.2 s each on 2 cores
def test_observed_at_is_the_simulated_clock_and_every_snapshot_is_there(
    day_store: tuple[Path, list[object]],
) -> None:
    store, results = day_store
    with History(store) as h:
        per_cluster = h.sql(
            "SELECT cluster_id, count(DISTINCT observed_at) AS snapshots, "
            "min(observed_at) AS first, max(observed_at) AS last FROM pods GROUP BY 1"
        ).set_index("cluster_id")
        times = h.sql("SELECT DISTINCT observed_at FROM pods ORDER BY 1")["observed_at"]
    assert list(times) == expected_times()  # 288 instants, exactly the clock's
    assert per_cluster.loc["cl-llama70b-train", "snapshots"] == SNAPSHOTS
    assert per_cluster.loc["cl-infer-prod", "snapshots"] == SNAPSHOTS
    # Created at 14:00: snapshots 14:00 .. 23:55 are 10 hours x 12 = 120.
    assert per_cluster.loc["cl-eval-afternoon", "snapshots"] == 120
    assert per_cluster.loc["cl-eval-afternoon", "first"] == pd.Timestamp("2026-11-02T14:00Z")
    # Bring-up pods exist 08:00 .. 18:25 (gone from 18:30): 10.5 hours x 12 = 126.
    assert per_cluster.loc["cl-bringup", "snapshots"] == 126
    # Each result says when the service answered: the clock at that snapshot.
    for k, result in enumerate(results):
        assert set(result.observed_at.values()) == {START + k * STEP}  # type: ignore[attr-defined]


@pytest.mark.slow
def test_failures_are_recorded_only_while_a_cluster_does_not_exist(
    day_store: tuple[Path, list[object]],
) -> None:
    _, results = day_store
    failed = [k for k, r in enumerate(results) if r.errors]  # type: ignore[attr-defined]
    assert failed == list(range(14 * 12))  # cl-eval-afternoon is 404 before 14:00
    assert all(set(results[k].errors) == {"cl-eval-afternoon"} for k in failed)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_the_fleets_story_reads_back_by_hand(day_store: tuple[Path, list[object]]) -> None:
    store, _ = day_store
    with History(store) as h:
        rank5 = h.sql(
            "SELECT observed_at FROM pods WHERE cluster_id = 'cl-llama70b-train' "
            "AND rank = 5 AND gpu_util_mean < 60 ORDER BY 1"
        )["observed_at"]
        idle = h.sql(
            "SELECT observed_at, count(*) AS pods FROM pods WHERE cluster_id = 'cl-infer-prod' "
            "AND gpu_util_max < 5 GROUP BY 1 ORDER BY 1"
        )
    # Rank 5 straggles 10:00-14:00 only: 4 hours x 12 snapshots.
    assert list(rank5) == expected_times("10:00", "13:55")
    # Three inference pods are idle 22:00-07:00: 00:00-06:55 (84) and 22:00-23:55 (24).
    assert list(idle["observed_at"]) == expected_times("00:00", "06:55") + expected_times(
        "22:00", "23:55"
    )
    assert set(idle["pods"]) == {3}


@pytest.mark.slow
def test_the_day_compacts_into_one_file_per_table_with_every_row(
    day_store: tuple[Path, list[object]], tmp_path: Path
) -> None:
    import shutil

    store = tmp_path / "copy"
    shutil.copytree(day_store[0], store)
    assert sorted(p.name for p in (store / "pods").iterdir()) == ["date=2026-11-02"]
    with History(store) as h:
        before = (len(h.pods()), len(h.gpus()))
    result = compact(store, "2026-11-02")
    assert dict(result.files_before) == {
        "pods": SNAPSHOTS,
        "gpus": SNAPSHOTS,
        "snapshots": SNAPSHOTS,
    }
    assert dict(result.files_after) == {"pods": 1, "gpus": 1, "snapshots": 1}
    with History(store) as h:
        assert (len(h.pods()), len(h.gpus())) == before
    assert verify(store).ok

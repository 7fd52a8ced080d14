"""A simulated day: 288 five-minute snapshots of the timeline fleet, collected into a store.

The day is collected through the sandbox in process (tests/simulated_day.py); the last
test collects a stretch of it over real loopback HTTP and finds the same rows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from simulated_day import CLUSTERS, SNAPSHOTS, START, STEP, SimulatedDay, collect_at

from ccanalytics import History
from ccanalytics.history import compact, verify
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock


@pytest.fixture(scope="module")
def day_store(simulated_day: SimulatedDay) -> tuple[Path, tuple[object, ...]]:
    """The simulated day (tests/simulated_day.py): its store and each collect's result."""
    return simulated_day.store, simulated_day.results


def expected_times(first: str = "00:00", last: str = "23:55") -> list[pd.Timestamp]:
    lo, hi = pd.Timestamp(f"2026-11-02T{first}Z"), pd.Timestamp(f"2026-11-02T{last}Z")
    return list(pd.date_range(lo, hi, freq="5min"))


@pytest.mark.slow
def test_observed_at_is_the_simulated_clock_and_every_snapshot_is_there(
    day_store: tuple[Path, tuple[object, ...]],
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
    day_store: tuple[Path, tuple[object, ...]],
) -> None:
    _, results = day_store
    failed = [k for k, r in enumerate(results) if r.errors]  # type: ignore[attr-defined]
    assert failed == list(range(14 * 12))  # cl-eval-afternoon is 404 before 14:00
    assert all(set(results[k].errors) == {"cl-eval-afternoon"} for k in failed)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_the_fleets_story_reads_back_by_hand(day_store: tuple[Path, tuple[object, ...]]) -> None:
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
    day_store: tuple[Path, tuple[object, ...]], tmp_path: Path
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


@pytest.mark.slow
def test_a_stretch_collected_over_loopback_http_gives_the_days_rows(
    simulated_day: SimulatedDay, tmp_path: Path
) -> None:
    """End to end over a real socket: 13:30 to 14:25 (cl-eval-afternoon appears at 14:00)
    collected from a sandbox served on 127.0.0.1 gives, row for row, what the day
    collected in process holds for those instants, and the same failures."""
    first, count = 13 * 12 + 6, 12  # snapshot 162 is 13:30
    clock = SimulatedClock(START + first * STEP)
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        results = collect_at(tmp_path, client, clock, count)
    assert [sorted(r.errors) for r in results] == [["cl-eval-afternoon"]] * 6 + [[]] * 6
    stretch = simulated_day.results[first : first + count]
    assert [r.observed_at for r in results] == [r.observed_at for r in stretch]
    lo, hi = START + first * STEP, START + (first + count - 1) * STEP
    for table, order in (
        ("pods", "cluster_id, observed_at, pod_id"),
        ("gpus", "cluster_id, observed_at, pod_id, gpu_index"),
        ("snapshots", "cluster_id, observed_at"),
    ):
        query = f"SELECT * FROM {table} WHERE observed_at BETWEEN $lo AND $hi ORDER BY {order}"
        over_http, in_process = (
            _rows(store, query, lo, hi) for store in (tmp_path, simulated_day.store)
        )
        assert len(over_http) > 0, table
        pd.testing.assert_frame_equal(over_http, in_process, obj=table)
    assert sorted({c for r in results for c in r.clusters}) == sorted(CLUSTERS)


def _rows(store: Path, query: str, lo: object, hi: object) -> pd.DataFrame:
    """``query``'s rows, without the position of their file among the store's files."""
    with History(store) as h:
        rows = h.sql(query, params={"lo": lo, "hi": hi})
    return rows.drop(columns=["file_index"], errors="ignore")

"""Empty is not unobserved: the store's snapshots table.

Each collect writes one row per cluster to ``STORE/snapshots``: when, how many pods,
and ``ok`` or the error's class and HTTP status. A listing with no pods is observed
time at zero cost; a failed listing is unobserved time, and ``History.coverage()``
says which snapshots were taken, failed or missing. Stores without the table read as
before (their instants come from the pod rows).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from history_helpers import pod_row, ts, write_store

from ccanalytics.history import History, collect, compact, verify


def write_snapshot_rows(store: Path, rows: list[tuple[str, str, int, str, int | None]]) -> None:
    """``(cluster_id, observed_at, pods, outcome, http_status)`` rows, one file per row."""
    for cluster_id, when, pods, outcome, status in rows:
        stamp = ts(when)
        folder = store / "snapshots" / f"date={stamp:%Y-%m-%d}"
        folder.mkdir(parents=True, exist_ok=True)
        table = pa.table(
            {
                "cluster_id": pa.array([cluster_id], pa.string()),
                "observed_at": pa.array([stamp], pa.timestamp("us", tz="UTC")),
                "pods": pa.array([pods], pa.int64()),
                "outcome": pa.array([outcome], pa.string()),
                "http_status": pa.array([status], pa.int64()),
                "schema_version": pa.array([1], pa.int32()),
            }
        )
        pq.write_table(table, folder / f"{uuid.uuid4().hex}.parquet")


def test_collect_writes_one_row_per_cluster_empty_and_failed_included(
    make_sandbox: Any, tmp_path: Path
) -> None:
    sb = make_sandbox()
    sb.app.data.clusters["cl-empty"] = []
    with sb.client() as client:
        result = collect(
            ["cl-infer-prod", "cl-empty", "cl-nope"], tmp_path, client=client, errors="collect"
        )
    assert set(result.errors) == {"cl-nope"}
    with History(tmp_path) as h:
        rows = h.sql(
            "SELECT cluster_id, pods, outcome, http_status, observed_at FROM snapshots "
            "ORDER BY cluster_id"
        )
    assert rows["cluster_id"].tolist() == ["cl-empty", "cl-infer-prod", "cl-nope"]
    assert rows["pods"].tolist() == [0, len(sb.app.data.clusters["cl-infer-prod"]), 0]
    assert rows["outcome"].tolist() == ["ok", "ok", "NotFoundError"]
    assert rows["http_status"][:2].isna().all()
    assert rows["http_status"][2] == 404
    assert rows["observed_at"].notna().all()


def _three_hours(store: Path, middle: tuple[str, str, int, str, int | None]) -> None:
    """Cluster a: one 1 USD/h pod at 00:00 and 02:00; ``middle`` is its 01:00 snapshot."""
    rows = [pod_row("a", "2026-11-20T00:00Z", "p1"), pod_row("a", "2026-11-20T02:00Z", "p1")]
    write_store(store, rows)
    write_snapshot_rows(
        store,
        [
            ("a", "2026-11-20T00:00Z", 1, "ok", None),
            middle,
            ("a", "2026-11-20T02:00Z", 1, "ok", None),
        ],
    )


def test_an_empty_listing_is_observed_time_at_zero_cost(tmp_path: Path) -> None:
    _three_hours(tmp_path, ("a", "2026-11-20T01:00Z", 0, "ok", None))
    with History(tmp_path) as h:
        got = h.idle_cost(by=None).iloc[0]
    assert got["observed_hours"] == pytest.approx(2.0)
    assert got["unobserved_hours"] == pytest.approx(0.0)
    assert got["total_cost"] == pytest.approx(1.0)  # the empty hour cost nothing


def test_a_failed_listing_is_unobserved_time(tmp_path: Path) -> None:
    _three_hours(tmp_path, ("a", "2026-11-20T01:00Z", 0, "ApiTimeoutError", None))
    with History(tmp_path) as h:
        got = h.idle_cost(by=None).iloc[0]
        util = h.utilization(freq="1h")
    assert got["observed_hours"] == pytest.approx(1.0)
    assert got["unobserved_hours"] == pytest.approx(1.0)
    assert got["total_cost"] == pytest.approx(1.0)
    assert util["observed_hours"].tolist() == pytest.approx([1.0, 0.0])


def test_coverage_counts_taken_failed_and_missing_and_says_why(tmp_path: Path) -> None:
    # Hourly: 00, 01 (failed, 503), 02, [03 and 04 missing], 05.
    times = ["00", "02", "05"]
    write_store(tmp_path, [pod_row("a", f"2026-11-20T{t}:00Z", "p1") for t in times])
    write_snapshot_rows(
        tmp_path,
        [("a", f"2026-11-20T{t}:00Z", 1, "ok", None) for t in times]
        + [("a", "2026-11-20T01:00Z", 0, "ServiceUnavailableError", 503)],
    )
    with History(tmp_path) as h:
        cov = h.coverage()
    row = cov.set_index("cluster_id").loc["a"]
    assert (row["taken"], row["failed"], row["missing"]) == (3, 1, 2)
    assert row["interval"] == pd.Timedelta(hours=1)
    assert row["last_error"] == "ServiceUnavailableError (HTTP 503)"
    assert row["first_snapshot"] == ts("2026-11-20T00:00Z")
    assert row["last_snapshot"] == ts("2026-11-20T05:00Z")


def test_a_store_without_the_table_still_reads_from_its_pod_rows(tmp_path: Path) -> None:
    times = ["00", "01", "02", "05"]
    write_store(tmp_path, [pod_row("a", f"2026-11-20T{t}:00Z", "p1") for t in times])
    with History(tmp_path) as h:
        cov = h.coverage().set_index("cluster_id").loc["a"]
        got = h.idle_cost(by=None).iloc[0]
    assert (cov["taken"], cov["failed"], cov["missing"]) == (4, 0, 2)
    assert pd.isna(cov["last_error"])
    assert got["total_cost"] == pytest.approx(4.0)  # 00-01, 01-02, 02-04 (capped at 2h)


def test_compact_merges_the_table_and_verify_reads_it(make_sandbox: Any, tmp_path: Path) -> None:
    sb = make_sandbox()
    with sb.client() as client:
        first = collect(["cl-bringup"], tmp_path, client=client)
        collect(["cl-bringup"], tmp_path, client=client)
    day = first.snapshot_time
    assert day is not None
    assert len(list((tmp_path / "snapshots").rglob("*.parquet"))) == 2
    compact(tmp_path, day)
    assert len(list((tmp_path / "snapshots").rglob("*.parquet"))) == 1
    assert verify(tmp_path).ok
    with History(tmp_path) as h:
        assert len(h.snapshots()) == 2

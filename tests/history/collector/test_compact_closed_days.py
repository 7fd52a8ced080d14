"""Many small files: the collector compacts closed days, and files are zstd.

``collect_every`` compacts each UTC day once a snapshot of a later day is written
(``compact_closed_days=False`` opts out); every file the store writes, appended or
compacted, is zstd-compressed Parquet.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ccanalytics import CCAnalyticsError
from ccanalytics.history import CompactResult, History, collect, collect_every, compact
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock


def _codecs(path: Path) -> set[str]:
    meta = pq.ParquetFile(path).metadata
    return {
        meta.row_group(g).column(c).compression
        for g in range(meta.num_row_groups)
        for c in range(meta.num_columns)
    }


def test_appended_and_compacted_files_are_zstd(make_sandbox: Any, tmp_path: Path) -> None:
    sb = make_sandbox()
    with sb.client() as client:
        first = collect(["cl-infer-prod"], tmp_path, client=client)
        collect(["cl-infer-prod"], tmp_path, client=client)
    assert first.files and all(_codecs(p) == {"ZSTD"} for p in first.files)
    assert first.snapshot_time is not None
    compact(tmp_path, first.snapshot_time)
    merged = sorted(
        p for t in ("pods", "gpus", "snapshots") for p in (tmp_path / t).rglob("*.parquet")
    )
    assert len(merged) == 3 and all(_codecs(p) == {"ZSTD"} for p in merged)
    rollups = sorted((tmp_path / ".rollup").glob("*.parquet"))  # the day's rollup, too
    assert len(rollups) == 1 and _codecs(rollups[0]) == {"ZSTD"}


def _day_files(store: Path, day: str) -> int:
    return len(list((store / "pods" / f"date={day}").glob("*.parquet")))


@pytest.mark.parametrize("auto", [True, False])
def test_the_collector_compacts_a_day_once_it_is_closed(tmp_path: Path, auto: bool) -> None:
    # Snapshots 5 simulated minutes apart from 23:50: two on Nov 2, two on Nov 3.
    clock = SimulatedClock(datetime(2026, 11, 2, 23, 50, tzinfo=UTC))
    compactions: list[Any] = []
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        run = collect_every(
            ["cl-infer-prod"],
            tmp_path,
            every="0.1s",
            count=4,
            client=client,
            stop_on_signals=False,
            trust_service_clock=True,
            compact_closed_days=auto,
            on_compact=lambda outcome: compactions.append(outcome),
            on_snapshot=lambda i, outcome: clock.advance(timedelta(minutes=5)),
        )
    assert run.failed == 0
    assert _day_files(tmp_path, "2026-11-03") >= 1
    if auto:
        assert _day_files(tmp_path, "2026-11-02") == 1
        assert [c.day for c in compactions] == ["2026-11-02"]
        assert all(isinstance(c, CompactResult) for c in compactions)
        assert _day_files(tmp_path, "2026-11-03") >= 2  # the open day is left alone
    else:
        assert _day_files(tmp_path, "2026-11-02") >= 2 and not compactions
    with History(tmp_path) as h:
        assert h.pods()["observed_at"].nunique() == 4


def test_a_failed_compaction_is_reported_and_the_loop_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ccanalytics.errors import StoreError
    from ccanalytics.history.collector import _collector

    def broken(store: Any, day: Any) -> CompactResult:
        raise StoreError("disk full", Path(store))

    monkeypatch.setattr(_collector, "compact", broken)
    clock = SimulatedClock(datetime(2026, 11, 2, 23, 50, tzinfo=UTC))
    outcomes: list[Any] = []
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        run = collect_every(
            ["cl-infer-prod"],
            tmp_path,
            every="0.1s",
            count=4,
            client=client,
            stop_on_signals=False,
            trust_service_clock=True,
            on_compact=outcomes.append,
            on_snapshot=lambda i, outcome: clock.advance(timedelta(minutes=5)),
        )
    assert run.taken == 4
    assert outcomes and all(isinstance(o, CCAnalyticsError) for o in outcomes)

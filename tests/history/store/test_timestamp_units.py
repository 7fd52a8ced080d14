"""Every timestamp type the vetting accepts is read correctly, never a raw DuckDB error.

``DataFrame.to_parquet`` writes nanoseconds by default; other writers write seconds or
milliseconds, naive or in another zone. The schema module accepts any timestamp for a
time column (``_kind``: "time"), so History must answer for each such file as for the
store's own microseconds: the same numbers, and no ``duckdb`` exception leaving it.
"""

from __future__ import annotations

import functools
import tempfile
import uuid
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from history_helpers import pod_row, pods_table, ts

from ccanalytics.history import History

UNITS = ["s", "ms", "us", "ns"]
ZONES = [None, "UTC", "Europe/Paris"]
TIME_COLUMNS = ["observed_at", "created_at", "started_at"]


def _rows() -> list[dict[str, Any]]:
    """Cluster a, two pods, hourly for 4 h; p2 idle (5 %) at 2.5 USD/h."""
    rows = []
    for hour in range(4):
        when = f"2026-11-20T{hour:02d}:00Z"
        rows.append(pod_row("a", when, "p1", created_at=ts("2026-11-19T23:00Z")))
        rows.append(pod_row("a", when, "p2", cost=2.5, gpu_util_mean=5.0, gpu_util_max=6.0))
    return rows


def _write(store: Path, unit: str, zone: str | None) -> None:
    """The rows as one pods file whose time columns are ``timestamp[unit, tz=zone]``."""
    table = pa.Table.from_pandas(pods_table(_rows()), preserve_index=False)
    fields = [
        pa.field(f.name, pa.timestamp(unit, tz=zone)) if f.name in TIME_COLUMNS else f
        for f in table.schema
    ]
    table = table.cast(pa.schema(fields)).replace_schema_metadata(None)
    folder = store / "pods" / "date=2026-11-20"
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, folder / f"{uuid.uuid4().hex}.parquet")


def _answers(store: Path) -> dict[str, Any]:
    with History(store) as h:
        idle = h.idle_cost(by="cluster")
        spend = h.spend(by=None).set_index("period")
        pods = h.pods()
        return {
            "total_cost": round(float(idle["total_cost"].sum()), 6),
            "idle_cost": round(float(idle["idle_cost"].sum()), 6),
            "spent": round(float(spend.loc["month", "spent"]), 6),
            "burn": round(float(spend.loc["month", "burn_rate"]), 6),
            "now": spend.loc["month", "now"],
            "times": sorted(pods["observed_at"].unique().tolist()),
            "created": sorted(pods["created_at"].dropna().unique().tolist()),
            "coverage": h.coverage()["taken"].tolist(),
            "utilization": len(h.utilization(freq="1h")),
            "stragglers": len(h.stragglers()),
            "lifetimes": len(h.pod_lifetimes()),
        }


def test_the_baseline_is_the_hand_computation(tmp_path: Path) -> None:
    _write(tmp_path, "us", "UTC")
    got = _answers(tmp_path)
    # 4 snapshots 1 h apart: 3 h covered (the last stands for no time), 3.5 USD/h.
    assert got["total_cost"] == 10.5
    assert got["idle_cost"] == 7.5  # p2 idle: 3 h x 2.5
    assert got["burn"] == 3.5
    assert got["now"] == ts("2026-11-20T03:00Z")


@functools.cache
def _baseline() -> tuple[tuple[str, Any], ...]:
    """The answers of the store's own width (microseconds, UTC): the same for every case."""
    with tempfile.TemporaryDirectory() as base:
        _write(Path(base), "us", "UTC")
        return tuple(_answers(Path(base)).items())


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("unit", UNITS)
def test_every_time_width_reads_as_the_stores_own(
    unit: str, zone: str | None, tmp_path: Path
) -> None:
    """Each of the 12 widths and zones, every one (a property over a small finite set)."""
    _write(tmp_path, unit, zone)
    try:
        got = _answers(tmp_path)
    except duckdb.Error as err:  # the defect: a raw DuckDB exception left History
        raise AssertionError(f"timestamp[{unit}, tz={zone}]: {type(err).__name__}: {err}") from err
    assert got == dict(_baseline())


def test_a_store_mixing_widths_reads_each_file_right(tmp_path: Path) -> None:
    _write(tmp_path, "us", "UTC")
    _write(tmp_path, "ns", None)  # the same instants again, as pandas writes them
    got = _answers(tmp_path)
    assert got["total_cost"] == 10.5  # each instant counted once, whatever its width
    assert got["times"] == [pd.Timestamp(f"2026-11-20T0{h}:00Z") for h in range(4)]

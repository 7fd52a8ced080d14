"""Small history stores written by hand, and the History answers recomputed in plain pandas.

The store is the agreed layout (``STORE/pods/date=YYYY-MM-DD/<name>.parquet``, the
frames' columns plus ``observed_at`` and ``schema_version``), written with pyarrow so
these tests do not depend on ``collect``. The ``hand_*`` functions re-derive each
answer from the rows with pandas, one obvious step at a time, in integer microseconds.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ccanalytics.frames import GPU_COLUMNS, POD_COLUMNS

US_PER_HOUR = 3_600_000_000
US_PER_DAY = 24 * US_PER_HOUR


def ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz="UTC")


def us(stamp: pd.Timestamp) -> int:
    return int(stamp.value // 1000)


def pod_row(cluster_id: str, observed_at: str, pod_id: str, **values: Any) -> dict[str, Any]:
    """One stored pod row: a running 8-GPU pod at 1 USD/h, 80 % busy, unless told otherwise."""
    row: dict[str, Any] = {
        "cluster_id": cluster_id,
        "pod_id": pod_id,
        "name": pod_id,
        "rank": None,
        "cost": 1.0,
        "gpu_type": "H100",
        "gpu_count": 8,
        "gpu_util_mean": 80.0,
        "gpu_util_max": 85.0,
        "gpus_reporting": None,
        "status": "RUNNING",
        "observed_at": ts(observed_at),
    }
    row.update(values)
    return row


def pods_table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows as a frame with every pods-frame column, in its dtype, plus the store's columns."""
    frame = pd.DataFrame(list(rows))
    for name, spec in POD_COLUMNS.items():
        if name not in frame:
            frame[name] = pd.NA
        frame[name] = frame[name].astype(spec.dtype)
    frame["observed_at"] = pd.to_datetime(frame["observed_at"], utc=True)
    frame["schema_version"] = np.int32(1)
    return frame[[*POD_COLUMNS, "observed_at", "schema_version"]]


def write_store(store: Path, pod_rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Write ``pod_rows`` (and one GPU row per GPU) to ``store``, one file per UTC day."""
    pods = pods_table(pod_rows)
    days = pods["observed_at"].dt.strftime("%Y-%m-%d")
    for day, part in pods.groupby(days):
        folder = store / "pods" / f"date={day}"
        folder.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pandas(part.reset_index(drop=True), preserve_index=False)
        pq.write_table(table, folder / f"{uuid.uuid4().hex}.parquet")
        gpus = _gpu_rows(part)
        gfolder = store / "gpus" / f"date={day}"
        gfolder.mkdir(parents=True, exist_ok=True)
        gtable = pa.Table.from_pandas(gpus, preserve_index=False)
        pq.write_table(gtable, gfolder / f"{uuid.uuid4().hex}.parquet")
    return pods


def write_empty_listing(store: Path, cluster_id: str = "a", when: str = "2026-11-20") -> Path:
    """A store of one snapshot whose listing answered with no pods: the ``snapshots``
    table only. The smallest store there is (a folder without one is no store)."""
    folder = store / "snapshots" / f"date={ts(when):%Y-%m-%d}"
    folder.mkdir(parents=True)
    table = pa.table(
        {
            "cluster_id": pa.array([cluster_id], pa.string()),
            "observed_at": pa.array([ts(when)], pa.timestamp("us", tz="UTC")),
            "pods": pa.array([0], pa.int64()),
            "outcome": pa.array(["ok"], pa.string()),
            "http_status": pa.array([None], pa.int64()),
            "schema_version": pa.array([1], pa.int32()),
        }
    )
    pq.write_table(table, folder / f"{uuid.uuid4().hex}.parquet")
    return store


def write_crash_leftover(store: Path, when: str = "2026-11-20") -> Path:
    """A store whose first write crashed: one hidden ``.tmp`` file in ``pods/``, never
    read. A store all the same (a writer was there), holding no snapshot at all."""
    folder = store / "pods" / f"date={ts(when):%Y-%m-%d}"
    folder.mkdir(parents=True)
    (folder / f".{uuid.uuid4().hex}.parquet.tmp").write_bytes(b"PAR1 cut short")
    return store


def _gpu_rows(pods: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for pod in pods.itertuples(index=False):
        count = 0 if pd.isna(pod.gpu_count) else int(pod.gpu_count)
        for index in range(count):
            rows.append(
                {
                    "cluster_id": pod.cluster_id,
                    "pod_id": pod.pod_id,
                    "rank": pod.rank,
                    "gpu_index": index,
                    "util": pod.gpu_util_mean,
                    "memory_util": pd.NA,
                    "gpu_type": pod.gpu_type,
                    "status": pod.status,
                    "observed_at": pod.observed_at,
                }
            )
    frame = pd.DataFrame(rows)
    for name, spec in GPU_COLUMNS.items():
        frame[name] = frame[name].astype(spec.dtype) if name in frame else pd.NA
    frame["observed_at"] = pd.to_datetime(frame["observed_at"], utc=True)
    frame["schema_version"] = np.int32(1)
    return frame


# ---- files that are not snapshots of ours ---------------------------------------------

FOREIGN_DAY = "2026-11-20"
_STAMP = pa.array([0], pa.timestamp("us", tz="UTC"))

#: Parquet files a store may hold that no collect of ours wrote.
FOREIGN = {
    "unrelated columns": pa.table({"foo": [1, 2], "bar": ["a", "b"]}),
    "a column of the wrong type": pa.table(
        {
            "cluster_id": pa.array([7], pa.int64()),
            "pod_id": ["p9"],
            "observed_at": _STAMP,
            "schema_version": pa.array([1], pa.int32()),
        }
    ),
    "observed_at as text": pa.table(
        {
            "cluster_id": ["cl-a"],
            "observed_at": ["2026-11-20T05:00:00Z"],
            "schema_version": pa.array([1], pa.int32()),
        }
    ),
    "no columns": pa.table({}),
    "no schema_version": pa.table(
        {"cluster_id": ["cl-a"], "pod_id": ["p9"], "observed_at": _STAMP}
    ),
    "a column twice": pa.Table.from_arrays(
        [pa.array(["cl-a"]), _STAMP, pa.array([1], pa.int32()), pa.array([1], pa.int32())],
        names=["cluster_id", "observed_at", "schema_version", "schema_version"],
    ),
}


def write_foreign_store(store: Path, kind: str) -> tuple[Path, Path]:
    """A store of three snapshots on :data:`FOREIGN_DAY` plus the ``FOREIGN[kind]`` file
    in its pods day folder: the store and that file."""
    write_store(store, [pod_row("cl-a", f"{FOREIGN_DAY}T0{h}:00:00Z", "p1") for h in (0, 1, 2)])
    path = store / "pods" / f"date={FOREIGN_DAY}" / "foreign.parquet"
    pq.write_table(FOREIGN[kind], path)
    return store, path


# ---- the answers by hand -------------------------------------------------------------


def spans(pods: pd.DataFrame, start: int, end: int, max_gap: int | None) -> pd.DataFrame:
    """Per cluster snapshot: t, covered [lo, hi) in µs and the uncapped end, by hand."""
    out = []
    for cluster_id, group in pods.groupby("cluster_id"):
        times = sorted({us(t) for t in group["observed_at"]})
        gaps = [b - a for a, b in itertools.pairwise(times)]
        cap = max_gap if max_gap is not None else (int(2 * np.median(gaps)) if gaps else 0)
        for i, t in enumerate(times):
            nxt = times[i + 1] if i + 1 < len(times) else None
            lo = max(t, start)
            hi = min(t + min(nxt - t, cap), end) if nxt is not None else lo
            raw_hi = min(nxt, end) if nxt is not None else lo
            out.append(
                {
                    "cluster_id": cluster_id,
                    "t": t,
                    "lo": lo,
                    "hi": max(hi, lo),
                    "covered": max(hi - lo, 0),
                    "raw": max(raw_hi - lo, 0),
                    "in_window": max(hi - lo, 0) > 0 or start <= t < end,
                }
            )
    return pd.DataFrame(out)


def hand_pod_rows(
    pods: pd.DataFrame, start: int, end: int, max_gap: int | None, threshold: float = 10.0
) -> pd.DataFrame:
    """Every pod row with its snapshot's span and whether it is idle / judged, by hand."""
    frame = pods.copy()
    frame["t"] = [us(t) for t in frame["observed_at"]]
    frame = frame.merge(spans(pods, start, end, max_gap), on=["cluster_id", "t"])
    frame = frame[frame["in_window"]].copy()
    running = frame["status"].eq("RUNNING").fillna(False)
    gpus = frame["gpu_count"].fillna(0).gt(0)
    frame["idle"] = running & gpus & frame["gpu_util_max"].lt(threshold).fillna(False)
    frame["judged"] = running & gpus & frame["gpu_util_mean"].notna()
    frame["cost0"] = frame["cost"].fillna(0.0).astype(float)
    return frame


def hand_idle_cost(
    pods: pd.DataFrame,
    start: int,
    end: int,
    by: str | None,
    max_gap: int | None = None,
    threshold: float = 10.0,
) -> pd.DataFrame:
    """idle_cost by cluster, day or None from the rows, by hand (hours exact, USD floats)."""
    rows = hand_pod_rows(pods, start, end, max_gap, threshold)
    snaps = spans(pods, start, end, max_gap)
    snaps = snaps[snaps["in_window"]]
    clusters = sorted(snaps["cluster_id"].unique())
    pieces = []  # (key, piece µs, pod row or None)
    for _, row in rows.iterrows():
        for key, piece in _pieces(row["lo"], row["lo"] + row["covered"], by, row["cluster_id"]):
            pieces.append((key, piece, row))
    observed: dict[Any, int] = {}
    for _, snap in snaps.iterrows():
        for key, piece in _pieces(snap["lo"], snap["lo"] + snap["covered"], by, snap["cluster_id"]):
            observed[key] = observed.get(key, 0) + piece
    keys = _keys(by, clusters, start, end)
    out = []
    for key in keys:
        mine = [(p, r) for k, p, r in pieces if k == key]
        window = _window_part(key, by, start, end) * (len(clusters) if by != "cluster" else 1)
        out.append(
            {
                "key": key,
                "observed_hours": observed.get(key, 0) / US_PER_HOUR,
                "total_cost": sum(r["cost0"] * p / US_PER_HOUR for p, r in mine),
                "idle_gpu_hours": sum(int(r["gpu_count"]) * p for p, r in mine if r["idle"])
                / US_PER_HOUR,
                "idle_cost": sum(r["cost0"] * p / US_PER_HOUR for p, r in mine if r["idle"]),
                "unused_cost": sum(
                    r["cost0"] * (1 - r["gpu_util_mean"] / 100) * p / US_PER_HOUR
                    for p, r in mine
                    if r["judged"]
                ),
                "unobserved_hours": (window - observed.get(key, 0)) / US_PER_HOUR,
            }
        )
    return pd.DataFrame(out)


def _pieces(lo: int, hi: int, by: str | None, cluster_id: str) -> list[tuple[Any, int]]:
    if hi <= lo:
        return []
    if by == "cluster":
        return [(cluster_id, hi - lo)]
    if by is None:
        return [("all", hi - lo)]
    out = []
    day = lo // US_PER_DAY
    while day * US_PER_DAY < hi:
        a, b = max(lo, day * US_PER_DAY), min(hi, (day + 1) * US_PER_DAY)
        out.append((day, b - a))
        day += 1
    return out


def _keys(by: str | None, clusters: list[str], start: int, end: int) -> list[Any]:
    if by == "cluster":
        return clusters
    if by is None:
        return ["all"]
    return list(range(start // US_PER_DAY, (end - 1) // US_PER_DAY + 1))


def _window_part(key: Any, by: str | None, start: int, end: int) -> int:
    if by == "day":
        return min(end, (key + 1) * US_PER_DAY) - max(start, key * US_PER_DAY)
    return end - start

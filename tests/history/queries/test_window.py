"""History windows: since/until, [since, until) on observed_at, partitions by UTC date."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import write_crash_leftover

from ccanalytics import History, pods_frame
from ccanalytics.history import resolve_window
from ccanalytics.history.store._write import append_frame
from ccanalytics.sandbox import make_cluster_pods

#: Snapshot times of the store below: across a UTC midnight, ten minutes apart.
TIMES = pd.to_datetime(
    ["2026-11-20T23:40Z", "2026-11-20T23:50Z", "2026-11-21T00:00Z", "2026-11-21T00:10Z"]
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two clusters of 3 pods each, one snapshot per time in TIMES (each its own write),
    written once for the module: every test here only reads it."""
    folder = tmp_path_factory.mktemp("window")
    pods = [
        *make_cluster_pods("cl-a", 3, seed=1),
        *make_cluster_pods("cl-b", 3, seed=2),
    ]
    for when in TIMES:
        frame = pods_frame(pods)
        frame["observed_at"] = pd.Series(when, index=frame.index, dtype="datetime64[ns, UTC]")
        append_frame(folder, "pods", frame)
    return folder


def times_of(frame: pd.DataFrame) -> list[str]:
    return sorted({t.strftime("%H:%M") for t in frame["observed_at"]})


def test_rows_go_to_the_partition_of_their_utc_date(store: Path) -> None:
    folders = sorted(p.name for p in (store / "pods").iterdir())
    assert folders == ["date=2026-11-20", "date=2026-11-21"]
    assert len(list((store / "pods" / "date=2026-11-21").glob("*.parquet"))) == 2


def test_one_write_across_midnight_splits_into_two_files(tmp_path: Path) -> None:
    frame = pods_frame(make_cluster_pods("cl-a", 2, seed=1))
    frame["observed_at"] = pd.to_datetime(["2026-11-20T23:59:59Z", "2026-11-21T00:00:01Z"])
    written = append_frame(tmp_path, "pods", frame)
    assert sorted(p.parent.name for p in written) == ["date=2026-11-20", "date=2026-11-21"]


def test_the_window_includes_since_and_excludes_until(store: Path) -> None:
    with History(store) as h:
        rows = h.pods(since="2026-11-20T23:50Z", until="2026-11-21T00:10Z")
    assert times_of(rows) == ["00:00", "23:50"]
    assert len(rows) == 2 * 6


def test_a_naive_time_means_utc_and_other_zones_are_converted(store: Path) -> None:
    plus_one = timezone(timedelta(hours=1))
    with History(store) as h:
        naive = h.pods(since="2026-11-21 00:00")
        aware = h.pods(since=datetime(2026, 11, 21, 1, 0, tzinfo=plus_one))
        stamp = h.pods(until=pd.Timestamp("2026-11-20T23:50Z"))
    assert times_of(naive) == times_of(aware) == ["00:00", "00:10"]
    assert times_of(stamp) == ["23:40"]


def test_a_timedelta_counts_back_from_the_newest_snapshot(store: Path) -> None:
    with History(store) as h:
        last_20_minutes = h.pods(since=timedelta(minutes=20))
        all_but_newest = h.pods(until=timedelta(0))
    assert times_of(last_20_minutes) == ["00:00", "00:10", "23:50"]
    assert times_of(all_but_newest) == ["00:00", "23:40", "23:50"]


def test_cluster_ids_select_clusters(store: Path) -> None:
    with History(store) as h:
        one = h.pods(cluster_ids="cl-a")
        both = h.pods(cluster_ids=["cl-a", "cl-b"])
        none = h.pods(cluster_ids=[])
    assert set(one["cluster_id"]) == {"cl-a"} and len(one) == 4 * 3
    assert len(both) == 4 * 6 and none.empty


def test_rows_come_oldest_first(store: Path) -> None:
    with History(store) as h:
        rows = h.pods()
    assert rows["observed_at"].is_monotonic_increasing
    assert list(rows.index) == list(range(len(rows)))


@pytest.mark.parametrize(
    ("since", "until", "error"),
    [
        ("yesterday-ish", None, ValueError),
        (None, "2026-13-45", ValueError),
        ("2026-11-21", "2026-11-20", ValueError),
        (1700000000, None, TypeError),
        (True, None, TypeError),
        (timedelta(hours=-1), None, ValueError),
        (pd.NaT, None, ValueError),
    ],
)
def test_bad_windows_are_refused(store: Path, since: object, until: object, error: type) -> None:
    with History(store) as h, pytest.raises(error):
        h.pods(since=since, until=until)


def test_resolve_window_is_reusable_on_the_connection(store: Path, tmp_path: Path) -> None:
    with History(store) as h:
        start, end = resolve_window(h.connection, timedelta(minutes=10), None)
    assert start == pd.Timestamp("2026-11-21T00:00Z") and end is None
    with History(write_crash_leftover(tmp_path / "empty")) as h:
        assert resolve_window(h.connection, timedelta(hours=1), "2026-11-21") == (
            None,
            pd.Timestamp("2026-11-21T00:00Z"),
        )

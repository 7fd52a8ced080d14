"""Accounting: one instant counted once, zero covered time is zero, half a snapshot, and
the CLI's duration strings in Python."""

from __future__ import annotations

import itertools
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, pods_table, ts, write_store

from ccanalytics.history import History


def _duplicate_file(store: Path) -> None:
    """Copy every pods and gpus file once more: the same snapshots held by two files."""
    for path in list((store / "pods").rglob("*.parquet")) + list(
        (store / "gpus").rglob("*.parquet")
    ):
        path.with_name("copy-" + path.name).write_bytes(path.read_bytes())


def test_an_instant_held_by_two_files_counts_once(tmp_path: Path) -> None:
    # Three snapshots an hour apart of one 2.32 USD/h pod: two hours covered = 4.64 USD.
    rows = [pod_row("cl-a", f"2026-11-20T0{h}:00:00Z", "p1", cost=2.32) for h in (0, 1, 2)]
    write_store(tmp_path, rows)
    _duplicate_file(tmp_path)
    with History(tmp_path) as h:
        total = h.idle_cost(by=None)
        pod = h.idle_cost(by="pod")
        life = h.pod_lifetimes()
        rank_util = h.utilization(by="pod", freq="1h")
        stragglers = h.stragglers(min_share=0.0)
    assert total["total_cost"].iloc[0] == pytest.approx(4.64)
    assert total["observed_hours"].iloc[0] == pytest.approx(2.0)
    assert pod["total_cost"].iloc[0] == pytest.approx(4.64)
    assert pod["observed_hours"].iloc[0] == pytest.approx(2.0)
    assert life["observed_hours"].iloc[0] == pytest.approx(2.0)
    assert rank_util["observed_hours"].sum() == pytest.approx(2.0)
    assert stragglers.empty  # no ranks: nothing judged, duplicates or not


def test_duplicate_ranks_do_not_double_the_straggler_count(tmp_path: Path) -> None:
    utils = [90.0, 91.0, 89.0, 90.0, 20.0]
    rows = [
        pod_row(
            "cl-a", f"2026-11-20T0{h}:00:00Z", f"p{r}", rank=r, gpu_util_mean=u, gpu_util_max=u + 1
        )
        for h in (0, 1)
        for r, u in enumerate(utils)
    ]
    write_store(tmp_path, rows)
    _duplicate_file(tmp_path)
    with History(tmp_path) as h:
        out = h.stragglers(min_share=0.0)
    slow = out[out["rank"] == 4].iloc[0]
    assert slow["snapshots"] == 2 and slow["flagged"] == 2


@pytest.mark.parametrize("by", [None, "cluster", "day", "pod"])
def test_zero_covered_time_gives_zero_sums_not_na(tmp_path: Path, by: str | None) -> None:
    write_store(tmp_path, [pod_row("cl-a", "2026-11-20T00:00:00Z", "p1")])  # one snapshot
    with History(tmp_path) as h:
        out = h.idle_cost(since=timedelta(hours=24), by=by)
    measures = ["observed_hours", "total_cost", "idle_gpu_hours", "idle_cost", "unused_cost"]
    assert not out[measures].isna().any().any(), out
    if by is None:
        assert out[measures].iloc[0].tolist() == [0.0] * 5


def test_half_a_snapshot_does_not_end_the_window_before_it_starts(tmp_path: Path) -> None:
    rows = [pod_row("cl-a", f"2026-11-20T0{h}:00:00Z", "p1") for h in (0, 1)]
    write_store(tmp_path, rows)
    # The next snapshot's gpus file was written, its pods file was not (a crash between).
    late = write_store(tmp_path / "other", [pod_row("cl-a", "2026-11-20T02:00:00Z", "p1")])
    assert len(late) == 1
    for path in (tmp_path / "other" / "gpus").rglob("*.parquet"):
        dest = tmp_path / "gpus" / path.parent.name / ("late-" + path.name)
        dest.write_bytes(path.read_bytes())
    with History(tmp_path) as h:
        # From the newest snapshot (the gpus file's 02:00): 01:30, after the newest pods.
        since = timedelta(minutes=30)
        assert h.window_bounds(since)[0] == ts("2026-11-20T01:30:00Z")
        out = h.idle_cost(since, by=None)
        slow = h.stragglers(since)
    assert out["total_cost"].iloc[0] == 0.0  # nothing the pods say is covered after 01:30
    assert slow.empty


@pytest.fixture(scope="module")
def ten_days(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pod hourly for ten days, written once: each duration below only reads it."""
    store = tmp_path_factory.mktemp("ten-days")
    rows = [
        pod_row("cl-a", f"2026-11-{d:02d}T{h:02d}:00:00Z", "p1")
        for d, h in itertools.product(range(10, 20), range(24))
    ]
    write_store(store, rows)
    return store


@pytest.mark.parametrize(
    ("text", "hours"), [("24h", 24), ("7d", 168), ("1h30m", 1.5), ("90min", 1.5)]
)
def test_duration_strings_work_where_a_timedelta_does(
    ten_days: Path, text: str, hours: float
) -> None:
    with History(ten_days) as h:
        by_text = h.idle_cost(text, by=None)
        by_delta = h.idle_cost(timedelta(hours=hours), by=None)
        assert h.window_bounds(text) == h.window_bounds(timedelta(hours=hours))
        assert h.window_bounds(until=text)[1] == h.window_bounds(until=timedelta(hours=hours))[1]
        gap = h.idle_cost(by=None, max_gap=text)
        pd.testing.assert_frame_equal(gap, h.idle_cost(by=None, max_gap=timedelta(hours=hours)))
    pd.testing.assert_frame_equal(by_text, by_delta)


def test_a_timestamp_string_is_still_a_timestamp(tmp_path: Path) -> None:
    write_store(tmp_path, [pod_row("cl-a", f"2026-11-20T0{h}:00:00Z", "p1") for h in (0, 1)])
    with History(tmp_path) as h:
        assert h.window_bounds("2026-11-20T00:30")[0] == ts("2026-11-20T00:30:00Z")
        with pytest.raises(ValueError, match="since"):
            h.window_bounds("24 hours please")


def test_pods_table_helper_is_used() -> None:  # keeps the helper import honest
    assert len(pods_table([pod_row("cl-a", "2026-11-20T00:00:00Z", "p1")])) == 1


def test_half_a_snapshot_moves_spends_now_as_it_moves_the_window(tmp_path: Path) -> None:
    # The newest instant is one definition (both tables) for spend as for every window.
    write_store(tmp_path, [pod_row("cl-a", f"2026-11-20T0{h}:00:00Z", "p1") for h in (0, 1)])
    write_store(tmp_path / "other", [pod_row("cl-a", "2026-11-20T02:00:00Z", "p1")])
    for path in (tmp_path / "other" / "gpus").rglob("*.parquet"):
        (tmp_path / "gpus" / path.parent.name / ("late-" + path.name)).write_bytes(
            path.read_bytes()
        )
    with History(tmp_path) as h:
        newest = h.window_bounds(timedelta(0))[0]
        spent = h.spend()
    assert newest == ts("2026-11-20T02:00:00Z")
    assert set(spent["now"]) == {newest}


def test_an_instant_held_by_two_files_counts_once_after_compaction(tmp_path: Path) -> None:
    """Compaction merges a day's files into one, so the reader can no longer tell the
    copies of an instant apart by file: the merge keeps each instant's rows from the
    first file holding it (the file a reader counts), and the figures stay 4.64 USD."""
    from ccanalytics.history import compact

    rows = [pod_row("cl-a", f"2026-11-20T0{h}:00:00Z", "p1", cost=2.32) for h in (0, 1, 2)]
    write_store(tmp_path, rows)
    _duplicate_file(tmp_path)
    with History(tmp_path) as h:
        before = h.idle_cost(by="pod")
        pods_before, gpus_before = h.pods(), h.gpus()
    result = compact(tmp_path, "2026-11-20")
    assert result.files_after["pods"] == 1
    with History(tmp_path) as h:
        after = h.idle_cost(by="pod")
        stored, gpus_after = h.pods(), h.gpus()
    assert after["total_cost"].iloc[0] == pytest.approx(4.64)
    assert after["observed_hours"].iloc[0] == pytest.approx(2.0)
    pd.testing.assert_frame_equal(after, before)
    # pods() and gpus() give the rows as stored: both copies before, the first after.
    assert len(pods_before) == 6 and len(stored) == 3
    pd.testing.assert_frame_equal(stored, pods_before.iloc[::2].reset_index(drop=True))
    assert len(gpus_after) > 0 and len(gpus_after) * 2 == len(gpus_before)
    assert result.rows["pods"] == 3


def test_a_query_binds_the_parameters_its_tree_names_not_its_text() -> None:
    """A parameter whose name starts another's, or one named in a comment, is not bound:
    DuckDB refuses a parameter the statement does not take."""
    import duckdb

    from ccanalytics.history.queries._accounting import run

    con = duckdb.connect()
    sql = "SELECT $idle_threshold_max AS a -- not $z"
    frame = run(con, sql, {"idle_threshold": 1.0, "idle_threshold_max": 2.0, "z": 3.0})
    assert frame["a"].tolist() == [2.0]


def test_the_straggler_and_rollup_queries_bind_what_their_trees_name() -> None:
    from ccanalytics.history.queries._stragglers import FLAGS_SQL, sql_params
    from ccanalytics.history.store._rollup import _ROLLUP_SQL, rollup_params
    from ccanalytics.measures import sql_parameters

    assert set(sql_params(0, 1)) == set(sql_parameters(FLAGS_SQL))
    assert set(rollup_params()) == set(sql_parameters(_ROLLUP_SQL))

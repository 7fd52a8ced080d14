"""History's answers over a window, each checked against a computation by hand in pandas.

Hours must be equal exactly (both sides count integer microseconds), costs to the cent.
The store below holds, on purpose: a gap longer than the default max_gap, a pod that
appears and disappears, a cluster with a single snapshot, spacing that varies, intervals
crossing UTC midnight, idle, starting, unreporting and CPU-only pods, and a null cost.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from history_helpers import (
    US_PER_HOUR,
    hand_idle_cost,
    hand_pod_rows,
    pod_row,
    spans,
    ts,
    us,
    write_empty_listing,
    write_store,
)

from ccanalytics.history import History

# cl-a: every 10 min from 23:20, then silent 23:50 -> 00:40 (50 min > 2 x 10 min), then on.
A_TIMES = ["2026-03-01 23:20", "2026-03-01 23:30", "2026-03-01 23:40", "2026-03-01 23:50"]
A_TIMES += ["2026-03-02 00:40", "2026-03-02 00:50", "2026-03-02 01:00", "2026-03-02 01:10"]
# cl-c: uneven spacing (5, 7, 5, 20, 5 min): median 5.0 -> cap 10 min.
C_TIMES = ["2026-03-01 23:55", "2026-03-02 00:00", "2026-03-02 00:07", "2026-03-02 00:12"]
C_TIMES += ["2026-03-02 00:32", "2026-03-02 00:37"]


def _rows() -> list[dict[str, object]]:
    rows = []
    for i, t in enumerate(A_TIMES):
        for rank in range(4):
            busy = 30.0 if rank == 2 else 75.0 + rank  # rank 2 straggles throughout
            rows.append(
                pod_row(
                    "cl-a",
                    t,
                    f"a{rank}",
                    rank=rank,
                    cost=2.5,
                    gpu_util_mean=busy,
                    gpu_util_max=busy + 5,
                )
            )
        # an inference pod idle from the third snapshot on
        util = 60.0 if i < 2 else 2.0
        rows.append(
            pod_row(
                "cl-a",
                t,
                "a-infer",
                cost=1.25,
                gpu_count=2,
                gpu_util_mean=util,
                gpu_util_max=util + 1,
            )
        )
        if 2 <= i <= 5:  # appears, then disappears
            rows.append(
                pod_row(
                    "cl-a", t, "a-tmp", cost=0.4, gpu_count=1, gpu_util_mean=50.0, gpu_util_max=55.0
                )
            )
        if i < 3:  # starting: paid for, no metrics
            rows.append(
                pod_row(
                    "cl-a",
                    t,
                    "a-boot",
                    status="STARTING",
                    cost=0.9,
                    gpu_util_mean=None,
                    gpu_util_max=None,
                )
            )
        rows.append(
            pod_row(
                "cl-a",
                t,
                "a-cpu",
                cost=0.1,
                gpu_count=0,
                gpu_type=None,
                gpu_util_mean=None,
                gpu_util_max=None,
            )
        )
    rows.append(pod_row("cl-b", "2026-03-02 00:30", "b0", cost=3.0))  # one snapshot
    for i, t in enumerate(C_TIMES):
        rows.append(pod_row("cl-c", t, "c0", cost=None, gpu_util_mean=5.0, gpu_util_max=6.0))
        rows.append(pod_row("cl-c", t, "c1", cost=0.7, gpu_util_mean=40.0 + i, gpu_util_max=70.0))
        rows.append(
            pod_row("cl-c", t, "c2", cost=1.1, gpu_count=4, gpu_util_mean=None, gpu_util_max=None)
        )
    return rows


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    path = tmp_path_factory.mktemp("store")
    return path, write_store(path, _rows())


@pytest.fixture(scope="module")
def history(store: tuple[Path, pd.DataFrame]) -> Iterator[History]:
    with History(store[0]) as h:
        yield h


WINDOWS = {
    "whole store": (None, None),
    "edge inside an interval": ("2026-03-01 23:35", "2026-03-02 00:45"),
    "across midnight": ("2026-03-01 23:00", "2026-03-02 02:00"),
}


def _window(since: str | None, until: str | None, pods: pd.DataFrame) -> tuple[int, int]:
    start = us(ts(since)) if since else min(us(t) for t in pods["observed_at"])
    end = us(ts(until)) if until else max(us(t) for t in pods["observed_at"])
    return start, end


def _assert_measures(ours: pd.DataFrame, hand: pd.DataFrame) -> None:
    assert len(ours) == len(hand)
    for column in ("observed_hours", "unobserved_hours", "idle_gpu_hours"):
        assert ours[column].tolist() == hand[column].tolist(), column
    for column in ("total_cost", "idle_cost", "unused_cost"):
        np.testing.assert_allclose(ours[column].astype(float), hand[column], atol=0.005)


@pytest.mark.parametrize("window", WINDOWS.values(), ids=list(WINDOWS))
@pytest.mark.parametrize("by", ["cluster", "day", None])
def test_idle_cost_equals_the_hand_computation(
    history: History, store: tuple[Path, pd.DataFrame], window: tuple[str, str], by: str | None
) -> None:
    pods = store[1]
    start, end = _window(*window, pods)
    ours = history.idle_cost(*window, by=by)
    hand = hand_idle_cost(pods, start, end, by)
    _assert_measures(ours, hand)
    if by == "cluster":
        assert ours["cluster_id"].tolist() == hand["key"].tolist()
    if by == "day":
        assert ours["day"].tolist() == [
            ts("1970-01-01") + pd.Timedelta(days=k) for k in hand["key"]
        ]


def test_idle_cost_with_an_explicit_max_gap(
    history: History, store: tuple[Path, pd.DataFrame]
) -> None:
    pods = store[1]
    start, end = _window(None, None, pods)
    ours = history.idle_cost(by="cluster", max_gap=pd.Timedelta(minutes=60))
    _assert_measures(ours, hand_idle_cost(pods, start, end, "cluster", max_gap=60 * 60_000_000))


def test_a_gap_longer_than_max_gap_is_unobserved_not_idle(history: History) -> None:
    row = history.idle_cost(by="cluster").set_index("cluster_id").loc["cl-a"]
    # 7 intervals of 10 min each, plus the capped 50-min gap: 20 min covered, 30 unobserved.
    assert row["observed_hours"] == 80 / 60
    # The window is the whole store (23:20 .. 01:10) for every cluster: 110 min.
    assert row["unobserved_hours"] == (110 - 80) / 60


def test_a_cluster_with_one_snapshot_observes_no_time(history: History) -> None:
    row = history.idle_cost(by="cluster").set_index("cluster_id").loc["cl-b"]
    assert row["observed_hours"] == 0 and row["total_cost"] == 0
    assert row["unobserved_hours"] == 110 / 60


def test_by_day_splits_at_utc_midnight(history: History) -> None:
    days = history.idle_cost("2026-03-01 23:00", "2026-03-02 02:00", by="day")
    assert days["day"].tolist() == [ts("2026-03-01"), ts("2026-03-02")]
    whole = history.idle_cost("2026-03-01 23:00", "2026-03-02 02:00", by=None)
    assert days["observed_hours"].sum() == pytest.approx(whole["observed_hours"].iloc[0])
    assert days["total_cost"].sum() == pytest.approx(whole["total_cost"].iloc[0])
    # cl-c's 23:55 snapshot stands for 23:55-00:00: 5 min on the 1st.
    # cl-a on the 1st: 23:20-23:50 plus the capped gap 23:50-00:00 (cap 20 min, 10 on the 1st).
    assert days["observed_hours"].iloc[0] == (40 + 5) / 60


def test_the_pod_that_appears_and_disappears(history: History) -> None:
    pods = history.idle_cost(by="pod").set_index("pod_id")
    # a-tmp is in the snapshots 23:40, 23:50, 00:40, 00:50: 10 + 20 (capped) + 10 + 10 min.
    assert pods.loc["a-tmp", "observed_hours"] == 50 / 60
    assert pods.loc["a-tmp", "unobserved_hours"] == 30 / 60
    assert pods.loc["a-tmp", "total_cost"] == pytest.approx(0.4 * 50 / 60)


def test_idle_cost_by_pod_equals_the_hand_computation(
    history: History, store: tuple[Path, pd.DataFrame]
) -> None:
    pods = store[1]
    window = WINDOWS["edge inside an interval"]
    start, end = _window(*window, pods)
    rows = hand_pod_rows(pods, start, end, None)
    ours = history.idle_cost(*window, by="pod").set_index(["cluster_id", "pod_id"])
    assert sorted(ours.index) == sorted(set(zip(rows["cluster_id"], rows["pod_id"], strict=True)))
    for (cluster_id, pod_id), mine in rows.groupby(["cluster_id", "pod_id"]):
        got = ours.loc[(cluster_id, pod_id)]
        assert got["observed_hours"] == mine["covered"].sum() / US_PER_HOUR
        assert got["unobserved_hours"] == (mine["raw"] - mine["covered"]).sum() / US_PER_HOUR
        idle = mine[mine["idle"]]
        assert got["idle_gpu_hours"] == (idle["gpu_count"] * idle["covered"]).sum() / US_PER_HOUR
        cost = (mine["cost0"] * mine["covered"]).sum() / US_PER_HOUR
        assert round(got["total_cost"], 2) == round(cost, 2)
        idle_cost = (idle["cost0"] * idle["covered"]).sum() / US_PER_HOUR
        assert round(got["idle_cost"], 2) == round(idle_cost, 2)


def test_pod_lifetimes_equal_the_hand_computation(
    history: History, store: tuple[Path, pd.DataFrame]
) -> None:
    pods = store[1]
    rows = hand_pod_rows(pods, *_window(None, None, pods), None)
    life = history.pod_lifetimes().set_index("pod_id")
    for pod_id, mine in rows.groupby("pod_id"):
        got = life.loc[pod_id]
        assert got["first_seen"] == mine["observed_at"].min()
        assert got["last_seen"] == mine["observed_at"].max()
        assert got["statuses"] == ",".join(sorted(mine["status"].unique()))
        assert got["observed_hours"] == mine["covered"].sum() / US_PER_HOUR
        idle_us = mine.loc[mine["idle"], "covered"].sum()
        assert got["idle_hours"] == idle_us / US_PER_HOUR
        if mine["covered"].sum():
            assert got["idle_time_share"] == pytest.approx(idle_us / mine["covered"].sum())
        else:
            assert pd.isna(got["idle_time_share"])
        cost = (mine["cost0"] * mine["covered"]).sum() / US_PER_HOUR
        assert round(got["total_cost"], 2) == round(cost, 2)


def test_pod_lifetimes_name_the_idle_inference_pod_first(history: History) -> None:
    life = history.pod_lifetimes()
    top = life.iloc[0]
    assert top["pod_id"] == "a-infer"
    # idle from 23:40: 23:40-23:50, the capped gap's 20 min, 00:40-01:10: 60 of 80 minutes.
    assert top["idle_time_share"] == pytest.approx(60 / 80)
    assert top["idle_cost"] == pytest.approx(1.25 * 60 / 60)
    assert life.set_index("pod_id").loc["a-boot", "statuses"] == "STARTING"


@pytest.mark.parametrize("by", ["cluster", "rank", "pod"])
def test_utilization_is_the_time_weighted_mean_by_hand(
    history: History, store: tuple[Path, pd.DataFrame], by: str
) -> None:
    pods = store[1]
    window = WINDOWS["across midnight"]
    start, end = _window(*window, pods)
    ours = history.utilization(*window, freq="30min", by=by)
    width = 30 * 60_000_000
    rows = hand_pod_rows(pods, start, end, None)
    judged = rows[rows["judged"]]
    key = {
        "cluster": ["cluster_id"],
        "rank": ["cluster_id", "rank"],
        "pod": ["cluster_id", "pod_id"],
    }
    buckets = range(start // width, (end - 1) // width + 1)
    seen = rows if by != "rank" else rows[rows["rank"].notna()]
    groups = sorted({tuple(k) for k in seen[key[by]].itertuples(index=False)})
    assert len(ours) == len(groups) * len(buckets)
    indexed = ours.set_index([*key[by], "time"])
    measured = 0
    for group in groups:
        for k in buckets:
            wanted = repr(tuple(map(str, group)))
            lo_b, hi_b = k * width, (k + 1) * width

            def overlap(frame: pd.DataFrame, lo_b: int = lo_b, hi_b: int = hi_b) -> pd.Series:
                hi = frame["lo"] + frame["covered"]
                return (np.minimum(hi, hi_b) - np.maximum(frame["lo"], lo_b)).clip(lower=0)

            mine = judged[_keyed(judged, key[by]) == wanted]
            weight = mine["gpu_count"].astype(float) * overlap(mine)
            got = indexed.loc[(*group, pd.Timestamp(lo_b * 1000, tz="UTC"))]
            if weight.sum() > 0:
                expected = (mine["gpu_util_mean"].astype(float) * weight).sum() / weight.sum()
                assert got["gpu_util_mean"] == pytest.approx(expected, rel=1e-12)
                measured += 1
            else:
                assert pd.isna(got["gpu_util_mean"])
            if by == "cluster":
                snaps = spans(pods, start, end, None)
                snaps = snaps[snaps["cluster_id"] == group[0]]
                expected_us = overlap(snaps).sum()
            else:
                present = rows[_keyed(rows, key[by]) == wanted]
                expected_us = overlap(present).sum()
            assert got["observed_hours"] == expected_us / US_PER_HOUR
    assert 0 < measured < len(ours)  # some buckets measured, some not


def _keyed(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Each row's key as a string (a missing rank matches no rank)."""
    return np.array([repr(tuple(map(str, k))) for k in frame[columns].itertuples(index=False)])


def test_utilization_shows_unobserved_buckets_as_missing(history: History) -> None:
    util = history.utilization("2026-03-02 00:00", "2026-03-02 01:00", freq="10min")
    a = util[util["cluster_id"] == "cl-a"].set_index("time")
    assert pd.isna(a.loc[ts("2026-03-02 00:20"), "gpu_util_mean"])  # inside the silent gap
    assert a.loc[ts("2026-03-02 00:20"), "observed_hours"] == 0
    assert a.loc[ts("2026-03-02 00:00"), "observed_hours"] == 10 / 60  # the capped gap's end
    assert str(util["time"].dtype) == "datetime64[ns, UTC]"
    assert str(util["gpu_util_mean"].dtype) == "Float64"


def test_stragglers_share_counts_snapshots(history: History) -> None:
    slow = history.stragglers()
    assert slow[["cluster_id", "rank"]].values.tolist() == [["cl-a", 2]]
    row = slow.iloc[0]
    assert (row["snapshots"], row["flagged"], row["share"]) == (8, 8, 1.0)
    assert row["first_flagged"] == ts(A_TIMES[0]) and row["last_flagged"] == ts(A_TIMES[-1])
    every = history.stragglers(min_share=0.0)
    assert sorted(every["rank"].tolist()) == [0, 1, 2, 3]  # cl-c has too few ranks


def test_window_edges_count_snapshots_inside_only(history: History) -> None:
    slow = history.stragglers("2026-03-01 23:30", "2026-03-02 00:50", min_share=0.0)
    assert set(slow["snapshots"]) == {4}  # 23:30, 23:40, 23:50, 00:40


def test_threshold_is_the_old_spelling_of_idle_threshold(history: History) -> None:
    new = history.idle_cost(by="pod", idle_threshold=50.0)
    with pytest.warns(DeprecationWarning, match="idle_threshold"):
        old = history.idle_cost(by="pod", threshold=50.0)
    with pytest.warns(DeprecationWarning, match="idle_threshold"):
        lifetimes = history.pod_lifetimes(threshold=50.0)
    pd.testing.assert_frame_equal(old, new)
    pd.testing.assert_frame_equal(lifetimes, history.pod_lifetimes(idle_threshold=50.0))


def test_bad_arguments_are_value_errors(history: History) -> None:
    with pytest.raises(ValueError, match="by must be"):
        history.idle_cost(by="week")
    with pytest.raises(ValueError, match="threshold"):
        history.idle_cost(idle_threshold=150)
    with pytest.raises(ValueError, match="max_gap"):
        history.idle_cost(max_gap=pd.Timedelta(0))
    with pytest.raises(ValueError, match="before since"):
        history.idle_cost("2026-03-02", "2026-03-01")
    with pytest.raises(ValueError, match="min_share"):
        history.stragglers(min_share=2)
    with pytest.raises(ValueError, match="freq"):
        history.utilization(freq="0s")


def test_window_bounds_say_which_window_a_query_covers(history: History) -> None:
    start, end = history.window_bounds(pd.Timedelta(minutes=30))
    assert (start, end) == (ts("2026-03-02 00:40"), None)  # newest snapshot 01:10
    assert history.window_bounds("2026-03-01", "2026-03-02") == (ts("2026-03-01"), ts("2026-03-02"))


def test_an_empty_store_gives_empty_answers(tmp_path: Path) -> None:
    with History(write_empty_listing(tmp_path / "none")) as empty:
        assert empty.idle_cost().empty and empty.idle_cost(by="pod").empty
        assert empty.idle_cost(by=None)["observed_hours"].tolist() == [0.0]
        assert empty.stragglers().empty and empty.utilization().empty
        assert empty.pod_lifetimes().empty
        assert list(empty.idle_cost(by="day").columns)[:2] == ["day", "observed_hours"]

"""Rollups: every idle-cost answer read through the rollups that compaction writes
equals the answer from the raw pod rows, to the cent, over random stores, windows, gaps
and thresholds; a rollup that no longer matches its day's files is never read."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from examples import examples
from history_helpers import write_crash_leftover
from hypothesis import HealthCheck, event, given, settings, strategies as st

from ccanalytics.frames import POD_COLUMNS
from ccanalytics.history import History, compact
from ccanalytics.history.queries._history import catalog_of
from ccanalytics.history.queries._queries import idle_cost_since
from ccanalytics.history.store._rollup import ROLLUP_DIR, SUMMED
from ccanalytics.history.store._schema import OK, SNAPSHOT_COLUMNS
from ccanalytics.history.store._write import append_frame
from ccanalytics.measures import Params, sql_columns, sum_shares

T0 = pd.Timestamp("2026-11-20T00:00:00Z")
#: Every sum of the registry and every share of two, in the order the one-pass query
#: gives them (what the rollups answer).
_EVERY = [*(m.name for m in SUMMED), *(m.name for m in sum_shares())]
#: The columns compared, every summed measure of the registry among them: USD to the
#: cent, hours to the hundredth of a second.
_USD = tuple(m.name for m in SUMMED if m.unit == "USD")
_HOURS = ("observed_hours", "unobserved_hours", *(m.name for m in SUMMED if m.unit != "USD"))
#: The pod columns the summed measures read (their trees say which).
_READ = set().union(*(sql_columns(f"SELECT {m.sql_sum()} FROM pods") for m in SUMMED)) & set(
    POD_COLUMNS
)


def _pods(rows: list[dict[str, object]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    for name, spec in POD_COLUMNS.items():
        if name not in frame:
            frame[name] = pd.NA
        frame[name] = frame[name].astype(spec.dtype)
    return frame[list(POD_COLUMNS)].assign(
        observed_at=pd.to_datetime(frame["observed_at"], utc=True)
    )


def _snapshots(rows: list[dict[str, object]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    frame["observed_at"] = pd.to_datetime(frame["observed_at"], utc=True)
    return frame[list(SNAPSHOT_COLUMNS)].astype(SNAPSHOT_COLUMNS)


# A pod at one instant: its GPUs, status, price and utilization, near the thresholds.
_DRAWN = {
    "gpu_count": st.sampled_from([0, 1, 8]),
    "status": st.sampled_from(["RUNNING", "RUNNING", "EXITED", None]),
    "cost": st.one_of(st.none(), st.sampled_from([0.42, 2.49, 24.56, 98.32])),
    "gpu_util_max": st.one_of(st.none(), st.sampled_from([0.0, 5.0, 9.9, 10.0, 30.0, 99.0])),
    "gpu_mem_util_max": st.one_of(st.none(), st.sampled_from([50.0, 95.0, 96.0])),
    # The GPUs reporting utilization weigh the utilization sums; unknown in older rows.
    "gpus_reporting": st.one_of(st.none(), st.sampled_from([0, 1, 8])),
}
#: Any other percentage a summed measure reads, near every threshold's default.
_PERCENT = st.one_of(st.none(), st.sampled_from([0.0, 5.0, 10.0, 30.0, 50.0, 95.0, 96.0]))
_POD_FIELDS = {
    **_DRAWN,
    **{
        c: _PERCENT
        for c in sorted(_READ - {*_DRAWN, "gpu_util_mean"})
        if str(POD_COLUMNS[c].dtype) == "Float64"
    },
}
_POD = st.fixed_dictionaries(_POD_FIELDS)


def test_every_column_a_summed_measure_reads_is_drawn() -> None:
    # A measure reading a column no example varies would pass here unexamined.
    assert {*_POD_FIELDS, "gpu_util_mean", "cluster_id"} >= _READ


# One cluster snapshot: minutes since T0 (three days, so that days are compacted,
# uncompacted and crossed at midnight), its listing's outcome, and its pods.
_SNAPSHOT = st.tuples(
    st.integers(min_value=0, max_value=3 * 1440 - 1),
    st.sampled_from(["cl-a", "cl-b"]),
    st.sampled_from([OK, OK, OK, "ApiError"]),
    st.lists(_POD, min_size=0, max_size=3),
)


def _write(store: Path, snapshots: list[tuple[int, str, str, list[dict[str, object]]]]) -> None:
    """Each snapshot as collect writes it: its pod rows (if it listed any) and its
    snapshots row, one file each."""
    for minute, cluster, outcome, pods in snapshots:
        when = T0 + pd.Timedelta(minutes=minute, seconds=7 if cluster == "cl-b" else 0)
        listed = pods if outcome == OK else []
        if listed:
            rows = [
                {
                    **pod,
                    "cluster_id": cluster,
                    "pod_id": f"{cluster}-{i}",
                    "gpu_util_mean": None
                    if pod["gpu_util_max"] is None
                    else pod["gpu_util_max"] / 2,
                    "observed_at": when,
                }
                for i, pod in enumerate(listed)
            ]
            append_frame(store, "pods", _pods(rows))
        row = {
            "cluster_id": cluster,
            "pods": len(listed),
            "outcome": outcome,
            "http_status": None if outcome == OK else 503,
            "observed_at": when,
        }
        append_frame(store, "snapshots", _snapshots([row]))


def _answers(store: Path, **kwargs: object) -> dict[str | None, pd.DataFrame]:
    return _answers_and_rolled(store, **kwargs)[0]


def _rolled(store: Path) -> int:
    with History(store) as h:
        return _rolled_in(h)


def _answers_and_rolled(
    store: Path, **kwargs: object
) -> tuple[dict[str | None, pd.DataFrame], int]:
    """The answers, and how many days the same History read from rollups to give them
    (one History, not two: an example opens four otherwise, ~30 ms each)."""
    with History(store) as h:
        answers = {by: h.measures(_EVERY, by=by, **kwargs) for by in ("day", "cluster", None)}  # type: ignore[arg-type]
        return answers, _rolled_in(h)


def _rolled_in(h: History) -> int:
    return int(h.sql("SELECT days FROM _rolled_days")["days"].iloc[0])


def _assert_same(
    ours: dict[str | None, pd.DataFrame], rows: dict[str | None, pd.DataFrame]
) -> None:
    for by, frame in rows.items():
        got = ours[by]
        assert list(got.columns) == list(frame.columns)
        assert len(got) == len(frame)
        for names, within in ((_USD, 0.005), (_HOURS, 0.01 / 3600)):
            pd.testing.assert_frame_equal(
                got[list(names)], frame[list(names)], check_exact=False, rtol=0, atol=within
            )
        keys = [c for c in frame.columns if c in ("day", "cluster_id")]
        if keys:
            pd.testing.assert_frame_equal(got[keys], frame[keys])


@pytest.mark.slow  # a store written, compacted and read a few times per example
@pytest.mark.timeout(600)  # ~2 s an example on a busy machine
@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    snapshots=st.lists(_SNAPSHOT, min_size=1, max_size=14),
    compacted=st.sets(st.integers(min_value=0, max_value=2), max_size=3),
    window=st.one_of(
        st.none(), st.tuples(st.integers(0, 3 * 1440), st.integers(0, 3 * 1440)).map(sorted)
    ),
    max_gap=st.sampled_from([None, "5min", "3h"]),
    threshold=st.sampled_from([None, 9.9, 10.0, 50.0]),
)
def test_rollups_answer_as_the_rows(
    snapshots: list[tuple[int, str, str, list[dict[str, object]]]],
    compacted: set[int],
    window: list[int] | None,
    max_gap: str | None,
    threshold: float | None,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder)
        _write(store, snapshots)
        for day in compacted:
            compact(store, (T0 + pd.Timedelta(days=day)).date())
        kwargs: dict[str, object] = {"max_gap": max_gap}
        if window is not None:
            kwargs["since"] = T0 + pd.Timedelta(minutes=window[0])
            kwargs["until"] = T0 + pd.Timedelta(minutes=window[1])
        if threshold is not None:
            kwargs["params"] = Params(idle_threshold=threshold)
        ours, rolled = _answers_and_rolled(store, **kwargs)
        event(f"days read from rollups: {rolled}")
        shutil.rmtree(store / ROLLUP_DIR, ignore_errors=True)  # the same store, rows only
        rows, rolled = _answers_and_rolled(store, **kwargs)
        assert rolled == 0
    _assert_same(ours, rows)


def _day(store: Path, day: int, cost: float) -> None:
    """A day of 5-minute snapshots of one pod, 40 % of them idle."""
    start = T0 + pd.Timedelta(days=day)
    rows = [
        {
            "cluster_id": "cl-a",
            "pod_id": "p",
            "status": "RUNNING",
            "gpu_count": 8,
            "cost": cost,
            "gpu_util_max": 5.0 if i % 5 < 2 else 90.0,
            "gpu_util_mean": 3.0 if i % 5 < 2 else 80.0,
            "observed_at": start + pd.Timedelta(minutes=5 * i),
        }
        for i in range(288)
    ]
    append_frame(store, "pods", _pods(rows))


def test_compaction_writes_a_rollup_that_readers_use(tmp_path: Path) -> None:
    for day in range(3):
        _day(tmp_path, day, cost=12.0)
    for day in range(2):
        compact(tmp_path, (T0 + pd.Timedelta(days=day)).date())
    assert len(list((tmp_path / ROLLUP_DIR).glob("*.parquet"))) == 2
    assert _rolled(tmp_path) == 2
    got = _answers(tmp_path)[None]
    # By hand: 3 days of 5-minute spans less the last snapshot's, 12 USD/h, 2 in 5 idle.
    spans = 3 * 288 - 1
    assert got["observed_hours"].iloc[0] == pytest.approx(spans * 5 / 60)
    assert got["total_cost"].iloc[0] == pytest.approx(12.0 * spans * 5 / 60)
    idle = sum(1 for i in range(3 * 288 - 1) if i % 288 % 5 < 2)
    assert got["idle_cost"].iloc[0] == pytest.approx(12.0 * idle * 5 / 60)
    # Other thresholds read the rows: the rollups cannot answer them.
    none_idle = _answers(tmp_path, params=Params(idle_threshold=1.0))[None]
    assert none_idle["idle_cost"].iloc[0] == 0.0


def test_a_day_that_gains_a_file_is_read_from_its_rows(tmp_path: Path) -> None:
    _day(tmp_path, 0, cost=12.0)
    compact(tmp_path, T0.date())
    before = _answers(tmp_path)[None]["total_cost"].iloc[0]
    # A late collector adds an instant at 23:57 after the day was compacted: the
    # rollup no longer sums the day's files, so the day is read from its rows.
    late = T0 + pd.Timedelta(hours=23, minutes=57)
    rows = [
        {"cluster_id": "cl-a", "pod_id": "q", "cost": 60.0, "observed_at": late},
    ]
    append_frame(tmp_path, "pods", _pods(rows))
    assert _rolled(tmp_path) == 0
    after = _answers(tmp_path)[None]["total_cost"].iloc[0]
    # The day's last instant (23:55, 12 USD/h) now stands for the 2 minutes to 23:57;
    # the late one, last now, for none.
    assert after == pytest.approx(before + 12.0 * 2 / 60)
    compact(tmp_path, T0.date())  # merges the late file and writes the day's new rollup
    assert len(list((tmp_path / ROLLUP_DIR).glob("*.parquet"))) == 1
    assert _rolled(tmp_path) == 1
    assert _answers(tmp_path)[None]["total_cost"].iloc[0] == pytest.approx(after)


@pytest.mark.slow  # a store written, compacted and read a few times per example
@pytest.mark.timeout(600)
@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    snapshots=st.lists(_SNAPSHOT, min_size=1, max_size=14),
    compacted=st.sets(st.integers(min_value=0, max_value=2), max_size=3),
    starts=st.lists(st.integers(0, 3 * 1440), min_size=1, max_size=3),
    end=st.integers(0, 3 * 1440),
    max_gap=st.sampled_from([None, "5min", "3h"]),
)
def test_windows_asked_at_once_answer_as_each_asked_alone(
    snapshots: list[tuple[int, str, str, list[dict[str, object]]]],
    compacted: set[int],
    starts: list[int],
    end: int,
    max_gap: str | None,
) -> None:
    """History.spend asks its day, week and month in one query (idle_cost_since): each
    window's frame is the one History.measures of every sum and share by cluster gives
    alone (idle_cost's one pass), rollups or rows, and its
    clusters sum to what the whole store's single-window query (by=None) says."""
    until = T0 + pd.Timedelta(minutes=end)
    since = [T0 + pd.Timedelta(minutes=min(start, end)) for start in starts]
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder)
        _write(store, snapshots)
        for day in compacted:
            compact(store, (T0 + pd.Timedelta(days=day)).date())
        with History(store) as h:
            together = _idle_cost_since(h, since, until, max_gap)
            alone = [h.measures(_EVERY, start, until, max_gap=max_gap) for start in since]
            totals = [h.measures(_EVERY, start, until, by=None, max_gap=max_gap) for start in since]
    assert len(together) == len(alone) == len(totals)
    summed = ["observed_hours", *(m.name for m in SUMMED), "unobserved_hours"]
    for got, want, total in zip(together, alone, totals, strict=True):
        pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=0, atol=1e-9)
        for column in summed:
            assert float(got[column].sum()) == pytest.approx(float(total[column].iloc[0]), abs=1e-9)


def test_windows_over_a_store_without_snapshots_are_each_idle_costs_empty_frame(
    tmp_path: Path,
) -> None:
    """An open end on an empty store: no window to time, one empty frame per start."""
    with History(write_crash_leftover(tmp_path)) as h:
        together = _idle_cost_since(h, [T0, T0 + pd.Timedelta(days=1)], None, None)
        alone = h.measures(_EVERY, T0, None)
    assert len(together) == 2
    for frame in together:
        assert frame.empty
        pd.testing.assert_frame_equal(frame, alone)


def _idle_cost_since(h: History, starts: Any, until: Any, max_gap: Any) -> list[pd.DataFrame]:
    """What History.spend asks: idle cost by cluster from each start, in one query."""
    return catalog_of(h).fresh(lambda con: idle_cost_since(con, starts, until, max_gap=max_gap))

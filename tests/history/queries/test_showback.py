"""History.showback: cost per pod per UTC hour or day, by the one rule of time, and teams.

Hand stores (history_helpers.write_store): every figure below is computed by hand in
the test's docstring. The simulated day checks that any grouping of the rows sums to
the store's other answers (idle_cost per cluster, pod, day; spend) to the cent.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from examples import examples
from history_helpers import pod_row, ts, write_empty_listing, write_store
from hypothesis import given, settings, strategies as st
from simulated_day import START, SimulatedDay

from ccanalytics import History
from ccanalytics.errors import TeamsError
from ccanalytics.history import SHOWBACK_COLUMNS, UNALLOCATED, load_teams, parse_teams

CENT = 0.005


def _half_hourly(cluster: str, pod: str, times: list[str], **values: object) -> list[dict]:
    return [pod_row(cluster, t, pod, **values) for t in times]


TIMES = ["2026-11-02T00:00", "2026-11-02T00:30", "2026-11-02T01:00", "2026-11-02T01:30",
         "2026-11-02T02:00"]  # fmt: skip


@pytest.fixture
def one_pod(tmp_path: Path) -> Path:
    """cl-a/p1 at 2.00 USD/h, a snapshot every 30 min from 00:00 to 02:00 (the last stands
    for no time): idle (busiest GPU 5 %) at 00:00 and 00:30, busy (85 %) after."""
    rows = [
        pod_row("cl-a", t, "p1", cost=2.0, gpu_util_max=5.0 if i < 2 else 85.0,
                gpu_util_mean=4.0 if i < 2 else 80.0)
        for i, t in enumerate(TIMES)
    ]  # fmt: skip
    write_store(tmp_path, rows)
    return tmp_path


def test_one_row_per_pod_per_hour_with_hand_computed_costs(one_pod: Path) -> None:
    """Hour 0: 1 h at 2 USD/h = 2.00, all idle (the pod is idle 00:00-01:00); hour 1:
    2.00, busy. 02:00 is the last snapshot: it stands for no time, so no row."""
    with History(one_pod) as h:
        rows = h.showback()
    assert list(rows.columns) == list(SHOWBACK_COLUMNS)
    assert list(rows["period_start"]) == [ts("2026-11-02T00:00"), ts("2026-11-02T01:00")]
    assert list(rows["period_end"]) == [ts("2026-11-02T01:00"), ts("2026-11-02T02:00")]
    assert list(rows["cost"]) == [2.0, 2.0]
    assert list(rows["idle_cost"]) == [2.0, 0.0]
    assert list(rows["idle_hours"]) == [1.0, 0.0]
    assert list(rows["observed_hours"]) == [1.0, 1.0]
    # unused: cost * (1 - util/100): 2 * 0.96 = 1.92 idle, 2 * 0.20 = 0.40 busy
    assert rows["unused_cost"].round(10).tolist() == [1.92, 0.4]
    assert rows["gpu_util_mean"].tolist() == [4.0, 80.0]
    assert rows["waste_class"].tolist() == ["idle_empty", "none"]  # memory unknown: empty
    assert rows["team"].tolist() == [UNALLOCATED, UNALLOCATED]


def test_each_charge_period_is_clipped_to_the_window(one_pod: Path) -> None:
    """[00:15, 01:45): 00:15-01:00 is 0.75 h (1.50 USD), 01:00-01:45 is 0.75 h (1.50)."""
    with History(one_pod) as h:
        rows = h.showback("2026-11-02T00:15", "2026-11-02T01:45")
        total = h.idle_cost("2026-11-02T00:15", "2026-11-02T01:45", by=None)
    assert list(rows["period_start"]) == [ts("2026-11-02T00:15"), ts("2026-11-02T01:00")]
    assert list(rows["period_end"]) == [ts("2026-11-02T01:00"), ts("2026-11-02T01:45")]
    assert list(rows["cost"]) == [1.5, 1.5]
    assert rows["cost"].sum() == total["total_cost"].iloc[0] == 3.0


def test_by_day_splits_at_utc_midnight(tmp_path: Path) -> None:
    """Snapshots at 23:00, 23:30, 00:00 (next day), 00:30, 01:00 at 1.20 USD/h: the 23rd
    has 1 h (1.20 USD), the 24th 01:00 - 00:00 = 1 h (1.20 USD)."""
    times = ["2026-11-23T23:00", "2026-11-23T23:30", "2026-11-24T00:00", "2026-11-24T00:30",
             "2026-11-24T01:00"]  # fmt: skip
    write_store(tmp_path, [pod_row("cl-a", t, "p1", cost=1.2) for t in times])
    with History(tmp_path) as h:
        rows = h.showback(by="day")
    assert list(rows["period_start"]) == [ts("2026-11-23T23:00"), ts("2026-11-24T00:00")]
    assert list(rows["period_end"]) == [ts("2026-11-24T00:00"), ts("2026-11-24T01:00")]
    assert rows["cost"].round(12).tolist() == [1.2, 1.2]


def test_a_pod_without_metrics_is_unjudged(tmp_path: Path) -> None:
    rows = [pod_row("cl-a", t, "p1", status="STARTING", gpu_util_mean=None, gpu_util_max=None)
            for t in TIMES[:3]]  # fmt: skip
    write_store(tmp_path, rows)
    with History(tmp_path) as h:
        frame = h.showback()
    assert frame["waste_class"].tolist() == ["unjudged"]
    assert frame["gpu_util_mean"].isna().all()
    assert frame["cost"].tolist() == [1.0]


TEAMS = """
# the narrow rule first: the first match wins
[[team]]
name = "chat"
clusters = "cl-infer"
pods = ["chat-*"]

[[team]]
name = "inference"
clusters = ["cl-infer*"]

[[team]]
name = "training"
clusters = "cl-train"
pods = "*-rank-?"
"""


def test_teams_first_matching_rule_wins_and_the_rest_is_unallocated(tmp_path: Path) -> None:
    pods = [("cl-infer", "chat-1"), ("cl-infer", "embed-1"), ("cl-infer-2", "chat-2"),
            ("cl-train", "llm-rank-0"), ("cl-train", "llm-rank-10"), ("cl-other", "x")]  # fmt: skip
    rows = [pod_row(c, t, p) for c, p in pods for t in TIMES[:3]]
    write_store(tmp_path, rows)
    teams = parse_teams(TEAMS)
    with History(tmp_path) as h:
        frame = h.showback(teams=teams)
    got = dict(zip(frame["name"], frame["team"], strict=True))
    assert got == {
        "chat-1": "chat",
        "embed-1": "inference",
        "chat-2": "inference",  # cl-infer-2 is not "cl-infer": the broad rule
        "llm-rank-0": "training",
        "llm-rank-10": UNALLOCATED,  # "?" is one character
        "x": UNALLOCATED,
    }
    assert teams.names() == ["chat", "inference", "training"]


def test_teams_from_a_file_path(tmp_path: Path, one_pod: Path) -> None:
    path = tmp_path / "teams.toml"
    path.write_text('[[team]]\nname = "a-team"\nclusters = "cl-a"\n', encoding="utf-8")
    with History(one_pod) as h:
        assert set(h.showback(teams=path)["team"]) == {"a-team"}
        assert set(h.showback(teams=str(path))["team"]) == {"a-team"}


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ('[[team]]\nname = "a"\nnodes = ["x"]\n', 3, "nodes"),
        ('[[team]]\nname = "a"\n\n[[team]]\nclusters = "cl-*"\n', 4, "name"),
        ('[[team]]\nname = "a"\npods = []\n', 3, "pods"),
        ('[[team]]\nname = "a"\nclusters = [1]\n', 3, "clusters"),
        ('[[team]]\nname = "a"\n\n[[team]]\nname = "b"\npods = 7\n', 6, "pods"),
        ("teams = 1\n", 1, "teams"),
        ("", None, "team"),
    ],
)
def test_a_bad_mapping_names_the_file_line_and_key(
    tmp_path: Path, text: str, line: int | None, key: str
) -> None:
    path = tmp_path / "teams.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TeamsError) as info:
        load_teams(path)
    err = info.value
    assert (err.path, err.line, err.key) == (path, line, key)
    assert str(err).startswith(f"{path}{'' if line is None else f', line {line}'}: ")
    assert key in str(err)


def test_bad_toml_and_a_missing_file_are_teams_errors(tmp_path: Path) -> None:
    path = tmp_path / "teams.toml"
    path.write_text("[[team]\nname=", encoding="utf-8")
    with pytest.raises(TeamsError, match="not valid TOML"):
        load_teams(path)
    with pytest.raises(TeamsError, match="cannot read the team mapping"):
        load_teams(tmp_path / "absent.toml")


def test_a_bad_mapping_fails_before_the_store_is_read(tmp_path: Path, one_pod: Path) -> None:
    path = tmp_path / "teams.toml"
    path.write_text('[[team]]\nname = ""\n', encoding="utf-8")
    with History(one_pod) as h, pytest.raises(TeamsError, match="line 2"):
        h.showback(teams=path)


def test_an_empty_store_gives_an_empty_frame_with_the_columns(tmp_path: Path) -> None:
    with History(write_empty_listing(tmp_path / "none")) as h:
        rows = h.showback("7d")
    assert rows.empty and list(rows.columns) == list(SHOWBACK_COLUMNS)


def test_by_must_be_hour_or_day(one_pod: Path) -> None:
    with History(one_pod) as h, pytest.raises(ValueError, match="'hour' or 'day'"):
        h.showback(by="week")  # type: ignore[arg-type]


# -- any grouping sums to the store's other answers, to the cent (the simulated day) ----

MINUTES = 24 * 60


@pytest.fixture(scope="module")
def day(simulated_day: SimulatedDay) -> Iterator[History]:
    """One History of the simulated day for the module's examples, which only read it:
    opening one (listing and statting 864 files, a connection) cost each example 60 ms."""
    with History(simulated_day.store) as h:
        yield h


@pytest.mark.slow
@pytest.mark.timeout(300)
@settings(max_examples=examples(12))  # two queries over the day's cached copy: ~0.2 s each
@given(
    start=st.integers(0, MINUTES - 1),
    length=st.integers(1, MINUTES),
    by=st.sampled_from(["hour", "day"]),
    grouping=st.sampled_from(["cluster", "pod", "day", "random", None]),
    groups=st.integers(2, 7),
    salt=st.integers(0, 2**16),
)
def test_any_grouping_sums_to_idle_cost_to_the_cent(
    day: History,
    start: int,
    length: int,
    by: str,
    grouping: str | None,
    groups: int,
    salt: int,
) -> None:
    """Per cluster, pod, UTC day, in all, and over a random grouping of the pods (each
    pod in one of ``groups`` groups, drawn by a hash): the rows sum to idle_cost's."""
    since = pd.Timestamp(START) + pd.Timedelta(minutes=start)
    until = min(since + pd.Timedelta(minutes=length), pd.Timestamp(START) + pd.Timedelta(days=1))
    rows = day.showback(since, until, by=by)  # type: ignore[arg-type]
    asked = "pod" if grouping == "random" else grouping
    answer = day.idle_cost(since, until, by=asked)  # type: ignore[arg-type]
    assert (rows["period_start"] >= since).all() and (rows["period_end"] <= until).all()
    assert (rows["period_start"] < rows["period_end"]).all()
    if grouping is None:
        for column, measure in (("cost", "total_cost"), ("idle_cost", "idle_cost")):
            assert abs(rows[column].sum() - answer[measure].iloc[0]) < CENT
        return
    if grouping == "day":
        rows = rows.assign(day=rows["period_start"].dt.floor("D"))
        keys = ["day"]
        answer = answer.assign(day=answer["day"].dt.floor("D"))
    elif grouping == "random":

        def group_of(frame: pd.DataFrame) -> pd.Series:
            ids = frame["cluster_id"].astype(str) + "/" + frame["pod_id"].astype(str)
            # crc32, not hash(): the same groups in every process, so a failure reproduces
            return ids.map(lambda pod: zlib.crc32(f"{pod}#{salt}".encode()) % groups)

        rows = rows.assign(group=group_of(rows))
        answer = answer.assign(group=group_of(answer)).groupby("group").sum(numeric_only=True)
        answer = answer.reset_index()
        keys = ["group"]
    else:
        keys = ["cluster_id"] if grouping == "cluster" else ["cluster_id", "pod_id"]
    sums = rows.groupby(keys)[["cost", "idle_cost", "unused_cost"]].sum()
    expected = answer.set_index(keys)[["total_cost", "idle_cost", "unused_cost"]]
    expected = expected[expected["total_cost"].notna()]
    expected.columns = ["total_cost", "idle_cost_answer", "unused_cost_answer"]
    joined = sums.join(expected, how="outer").fillna(0.0)
    # Element-wise: a window no snapshot covers (23:56-23:57) leaves both sides empty,
    # and the max of no values is NA.
    pairs = (("cost", "total_cost"), ("idle_cost", "idle_cost_answer"))
    for got, want in (*pairs, ("unused_cost", "unused_cost_answer")):
        assert ((joined[got] - joined[want]).abs() < CENT).all()


@pytest.mark.slow
@pytest.mark.timeout(300)
@settings(max_examples=examples(10))  # spend and showback over the day: ~0.3 s each
@given(at_minutes=st.integers(1, MINUTES - 5))
def test_rows_from_the_day_start_sum_to_spend_so_far(day: History, at_minutes: int) -> None:
    at = pd.Timestamp(START) + pd.Timedelta(minutes=at_minutes)
    spent = day.spend(at=at).set_index(["period", "cluster_id"]).loc["day", "spent"]
    rows = day.showback(pd.Timestamp(START), at)
    by_cluster = rows.groupby("cluster_id")["cost"].sum()
    joined = pd.concat([by_cluster, spent], axis=1).fillna(0.0)
    assert (joined["cost"] - joined["spent"]).abs().max() < CENT


@pytest.mark.slow
def test_the_rows_are_not_rounded(simulated_day: SimulatedDay) -> None:
    with History(simulated_day.store) as h:
        rows = h.showback("3h")
    cents = (rows["cost"] * 100).round(6)
    assert (cents != cents.round()).any()  # some row is not a whole number of cents

"""The answers do not depend on how the store's files are cut: one small file per
snapshot or one compacted file per day, and the idle-cost query's short form (no
instant held by two files, known from the footers) or its general form."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ccanalytics import History, collect
from ccanalytics.history import compact
from ccanalytics.history.queries import _queries
from ccanalytics.history.queries._accounting import ONE_FILE_VIEW, one_file_per_instant
from ccanalytics.history.queries._history import _spans_disjoint
from ccanalytics.history.store._write import append_frame
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

CLUSTERS = ["cl-infer-prod", "cl-llama70b-train", "cl-bringup", "cl-eval-afternoon"]


@pytest.fixture(scope="module")
def small_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twelve snapshots 5 minutes apart, one file per table per snapshot, on one day."""
    store = tmp_path_factory.mktemp("small")
    clock = SimulatedClock(datetime(2026, 11, 2, 13, 30, tzinfo=UTC))
    # The exempt key: the pacer counts real seconds, the simulated clock would make it wait.
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        for _ in range(12):
            collect(CLUSTERS, store, client=client, errors="collect", trust_service_clock=True)
            clock.advance(timedelta(minutes=5))
    return store


def answers(store: Path) -> dict[str, pd.DataFrame]:
    with History(store) as h:
        found = {f"idle_cost {by}": h.idle_cost(by=by) for by in ("cluster", "day", "pod", None)}
        found["utilization"] = h.utilization(freq="1min")
        found["pod_lifetimes"] = h.pod_lifetimes()
        found["coverage"] = h.coverage()
    return found


def assert_same(got: dict[str, pd.DataFrame], want: dict[str, pd.DataFrame]) -> None:
    assert got.keys() == want.keys()
    for name, frame in want.items():
        assert len(frame) > 0, name  # a comparison of empty frames would prove nothing
        pd.testing.assert_frame_equal(got[name], frame, check_exact=False, rtol=1e-12, obj=name)


def one_file(store: Path) -> bool:
    with History(store) as h:
        return one_file_per_instant(h.connection)


def test_the_small_files_and_the_compacted_day_give_the_same_answers(
    small_files: Path, tmp_path: Path
) -> None:
    compacted = tmp_path / "compacted"
    shutil.copytree(small_files, compacted)
    (day,) = {p.name.removeprefix("date=") for p in (compacted / "pods").iterdir()}
    compact(compacted, day)
    assert len(list((compacted / "pods").rglob("*.parquet"))) == 1
    assert len(list((small_files / "pods").rglob("*.parquet"))) == 12

    assert_same(answers(small_files), answers(compacted))


def test_the_short_form_gives_the_general_forms_answers(
    small_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert one_file(small_files)  # one file per snapshot: the short form
    short = answers(small_files)
    monkeypatch.setattr(_queries, "one_file_per_instant", lambda con: False)
    assert_same(answers(small_files), short)


def test_an_instant_in_two_files_takes_the_general_form(small_files: Path, tmp_path: Path) -> None:
    store = tmp_path / "twice"
    shutil.copytree(small_files, store)
    with History(store) as h:
        before = h.idle_cost(by="cluster")
        first = h.pods().query("observed_at == observed_at.min()")
    append_frame(store, "pods", first)  # the same snapshot's pod rows again, a second file

    assert not one_file(store)
    with History(store) as h:
        pd.testing.assert_frame_equal(h.idle_cost(by="cluster"), before)


@pytest.mark.parametrize(
    ("spans", "disjoint"),
    [
        ([], True),
        ([(1, 2), (3, 4)], True),
        ([(3, 4), (), (1, 2)], True),  # in any order; a file without times shares none
        ([(1, 2), (2, 3)], False),  # one microsecond in both
        ([(1, 10), (3, 4), (11, 12)], False),  # inside an earlier, longer file
        ([(1, 2), None], False),  # a footer that cannot tell
    ],
)
def test_spans_disjoint(spans: list[Any], disjoint: bool) -> None:
    assert _spans_disjoint(spans) is disjoint


def test_a_connection_without_the_view_takes_the_general_form() -> None:
    import duckdb

    con = duckdb.connect()
    assert not one_file_per_instant(con)
    con.execute(f"CREATE VIEW {ONE_FILE_VIEW} AS SELECT true AS one_file")
    assert one_file_per_instant(con)

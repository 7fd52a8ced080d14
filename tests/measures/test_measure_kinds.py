"""Each kind of measure carries its own figure, and a new measure is one registry entry.

Every entry of the kinds whose queries are not a sum over pod rows (spend, a per-pod
share, the anomaly, the backtest, a judgement) declares its figure: ``sql`` over its
kind's relation, or the judgement function that decides it. The queries select the
entries: an entry added to the registry here (and nowhere else) is a column of its
query's answer, with the value its SQL says, checked against the answer's own columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from budget_store import write_budget_store

from ccanalytics import History
from ccanalytics.history import IdleRule
from ccanalytics.measures import (
    KIND_RELATIONS,
    MEASURES,
    Measure,
    _registry,
    computed,
    of_kind,
    projections,
    sql_columns,
)

#: The kinds whose figure is an expression over a relation of their own.
WITH_SQL = ("spend", "pod_share", "anomaly", "backtest")


@pytest.mark.parametrize("kind", [*WITH_SQL, "judgement"])
def test_every_entry_of_a_kind_carries_its_own_figure(kind: Any) -> None:
    entries = of_kind(kind)
    assert entries
    relation = KIND_RELATIONS[kind]
    for m in entries:
        assert (m.sql is None) != (m.compute is None), m.name  # one home, never two
        if m.sql is not None:
            # It reads its relation's columns only: the query builds nothing else for it.
            assert sql_columns(m.sql) <= set(relation.columns), m.name
        else:
            assert callable(computed(m))


def test_only_the_sums_and_their_quotients_have_no_relation() -> None:
    kinds = {m.kind for m in MEASURES}
    assert kinds - set(KIND_RELATIONS) == {"sum", "share", "waste", "count"}


@pytest.mark.parametrize("kind", WITH_SQL)
def test_the_projections_are_printed_from_the_tree_in_each_dialect(kind: Any) -> None:
    import sqlglot

    for dialect in ("duckdb", "spark"):
        printed = projections(kind, dialect)
        named = [m for m in of_kind(kind) if m.sql is not None]
        assert len(printed) == len(named)
        for text, m in zip(printed, named, strict=True):
            tree = sqlglot.parse_one(text, read=dialect)
            assert tree.alias == m.answer_column


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_budget_store(tmp_path_factory.mktemp("kinds"))


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Add test-only entries to the registry (and only there) for one test."""

    def register(*entries: Measure) -> None:
        monkeypatch.setattr(_registry, "MEASURES", (*_registry.MEASURES, *entries))

    return register


def _with_sql(name: str, kind: Any, sql: str) -> Measure:
    return Measure(
        name=name, kind=kind, unit="x", meaning="a test-only entry", label=name, fmt="z", sql=sql
    )


def test_a_new_spend_measure_is_a_column_of_spend(store: Path, registered: Any) -> None:
    registered(_with_sql("left_usd", "spend", "burn_rate * hours_left"))
    with History(store) as h:
        frame = h.spend()
        totals = h.spend(by=None)
    assert list(frame.columns)[-1] == "left_usd"
    # cl-a burns 2.50 USD/h: from Nov 10 12:00 to the month's end, 20.5 days.
    month_a = frame[(frame["cluster_id"] == "cl-a") & (frame["period"] == "month")].iloc[0]
    assert month_a["left_usd"] == pytest.approx(2.50 * 20.5 * 24)
    for answer in (frame, totals):
        expected = answer["projected"] - answer["spent"]
        pd.testing.assert_series_equal(answer["left_usd"], expected, check_names=False)


def test_a_new_anomaly_measure_is_a_column_of_spend_anomalies(store: Path, registered: Any) -> None:
    registered(_with_sql("above_usual", "anomaly", "spend - usual"))
    with History(store) as h:
        frame = h.spend_anomalies()
    assert len(frame) == 2 and "above_usual" in frame.columns
    # Both pods cost the same every hour: the hour is its usual.
    expected = frame["spend"] - frame["usual"]
    pd.testing.assert_series_equal(frame["above_usual"], expected, check_names=False)
    assert (frame.loc[frame["usual"].notna(), "above_usual"] == 0).all()


def test_a_new_backtest_measure_is_a_column_of_backtest(store: Path, registered: Any) -> None:
    registered(_with_sql("kept_stops", "backtest", "sum(stops) - sum(false_stops)"))
    with History(store) as h:
        # Every pod is 85 % busy at most: a rule at 90 % stops each once its 2 h are up.
        frame = h.backtest(IdleRule("2h", 90.0), by="cluster")
    assert frame["stops"].sum() > 0
    expected = (frame["stops"] - frame["false_stops"]).astype("Float64")
    pd.testing.assert_series_equal(frame["kept_stops"], expected, check_names=False)


def test_a_new_pod_share_is_a_column_of_pod_lifetimes(store: Path, registered: Any) -> None:
    registered(
        _with_sql(
            "busy_time_share",
            "pod_share",
            "coalesce(sum(covered_us) FILTER (WHERE NOT idle), 0) / nullif(sum(covered_us), 0)",
        )
    )
    with History(store) as h:
        frame = h.pod_lifetimes()
    assert len(frame) == 2
    total = frame["busy_time_share"] + frame["idle_time_share"]
    assert total.to_numpy(float) == pytest.approx([1.0, 1.0])

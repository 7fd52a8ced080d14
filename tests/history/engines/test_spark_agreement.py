"""One answer: ``History(store)`` and ``History(store, engine=spark)`` agree to the cent.

Over a simulated week of the sandbox (conftest.py: four clusters, failed listings, a
gap, one day compacted and read by DuckDB from its rollup, the others from their
files), every registry measure that :meth:`History.measures` answers, by cluster, day
and pod (and the other dimensions), at the default thresholds and at others, and the
views of it (``idle_cost``, ``waste``): the same columns, dtypes and keys, and every
figure within half a cent (shares within 1e-9). The figures are checked to be
non-trivial first (a spend, idle spend, straggler waste and unused capacity), so agreement is
not two engines each answering zeros.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ccanalytics import History
from ccanalytics.history import IdleRule
from ccanalytics.measures import MEASURES, Params

#: Spark starts in 20 s on two shared cores; each query takes a few.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

#: Every measure History.measures answers (the registry's sums, waste classes, shares).
NAMES = [m.name for m in MEASURES if m.kind in ("sum", "waste", "share")]
SHARES = {m.name for m in MEASURES if m.kind == "share"} | {"waste_share"}
OTHER = Params(idle_threshold=30.0, z=2.0, low_compute_threshold=50.0)


def _agree(duck: pd.DataFrame, spark: pd.DataFrame) -> None:
    assert list(spark.columns) == list(duck.columns)
    assert spark.dtypes.to_dict() == duck.dtypes.to_dict()
    assert len(spark) == len(duck) and len(duck) > 0
    for column in duck.columns:
        left, right = duck[column], spark[column]
        if str(left.dtype) != "Float64":
            pd.testing.assert_series_equal(left, right)  # keys exactly, order included
            continue
        assert (left.isna() == right.isna()).all(), column
        a, b = left.dropna().to_numpy(float), right.dropna().to_numpy(float)
        tolerance = 1e-9 if column in SHARES else 0.005  # to the cent (USD) or hour
        assert np.allclose(a, b, rtol=0, atol=tolerance), (column, a - b)


@pytest.fixture(scope="module")
def duck(week_store: Path) -> Any:
    with History(week_store) as h:
        yield h


@pytest.fixture
def both(duck: History, week_store: Path, spark: Any) -> Any:
    with History(week_store, engine=spark) as h:
        yield duck, h


def test_the_week_is_what_the_agreement_needs(duck: History) -> None:
    snapshots = duck.snapshots()
    assert (snapshots["outcome"] != "ok").any()  # failed listings
    assert duck.sql("SELECT days FROM _rolled_days")["days"].iloc[0] == 1  # the compacted day
    totals = duck.measures(NAMES, by=None).iloc[0]
    for name in ("total_cost", "idle_cost", "straggler_cost", "unused_cost"):
        assert totals[name] > 0, name


#: Each dimension at one set of thresholds and the pods at both: a Spark query costs
#: seconds, so the pairs, not their product.
PAIRS = [("cluster", OTHER), ("day", None), ("pod", None), ("pod", OTHER)]


@pytest.mark.parametrize(("by", "params"), PAIRS, ids=["cluster-other", "day", "pod", "pod-other"])
def test_every_measure_agrees(
    both: tuple[History, History], by: str, params: Params | None
) -> None:
    duck, spark = both
    _agree(duck.measures(NAMES, by=by, params=params), spark.measures(NAMES, by=by, params=params))


@pytest.mark.parametrize("by", [None, ["rank", "gpu_type", "hour"]], ids=str)
def test_the_other_dimensions_agree(both: tuple[History, History], by: Any) -> None:
    duck, spark = both
    _agree(duck.measures(NAMES, "3d", by=by), spark.measures(NAMES, "3d", by=by))


@pytest.mark.parametrize(
    ("by", "params"), [("day", None), ("pod", OTHER)], ids=["day", "pod-other"]
)
def test_idle_cost_agrees(both: tuple[History, History], by: Any, params: Params | None) -> None:
    """idle_cost's own accounting (cluster-hours observed and not; DuckDB from the
    compacted day's rollup at the default thresholds) against Spark's from the files."""
    duck, spark = both
    _agree(duck.idle_cost(by=by, params=params), spark.idle_cost(by=by, params=params))


@pytest.mark.parametrize("by", ["pod"])
def test_waste_agrees(both: tuple[History, History], by: Any) -> None:
    duck, spark = both
    _agree(duck.waste(by=by, params=OTHER), spark.waste(by=by, params=OTHER))


@pytest.mark.parametrize("params", [None, OTHER], ids=["defaults", "other"])
def test_the_stragglers_count_agrees(both: tuple[History, History], params: Params | None) -> None:
    """The registry's count (chronic stragglers per cluster), the straggler rule's
    medians and robust z on Spark as in DuckDB."""
    duck, spark = both
    counted = duck.measures(["stragglers"], by="cluster", params=params)
    assert counted["stragglers"].sum() > 0
    _agree(counted, spark.measures(["stragglers"], by="cluster", params=params))


#: Every other question History answers over the store's rows, as a user calls it.
QUESTIONS = {
    "spend": lambda h: h.spend(),
    "spend_anomalies": lambda h: h.spend_anomalies(),
    "stragglers": lambda h: h.stragglers(),
    "straggler_flags": lambda h: h.straggler_flags("2d"),
    "showback": lambda h: h.showback("2d", by="day"),
    "coverage": lambda h: h.coverage(),
    "utilization": lambda h: h.utilization("2d"),
    "pod_lifetimes": lambda h: h.pod_lifetimes(),
    "rightsizing": lambda h: h.rightsizing(params=Params(low_compute_threshold=90.0)),
    "backtest": lambda h: h.backtest(
        [IdleRule("2h", 5.0), IdleRule("4h", 30.0, memory_threshold=50.0)], by="pod"
    ),
}


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_every_other_question_agrees(both: tuple[History, History], question: str) -> None:
    duck, spark = both
    _agree(QUESTIONS[question](duck), QUESTIONS[question](spark))


def test_every_question_spark_answers_is_held_to_duckdb_here() -> None:
    from ccanalytics.history.queries._spark import SPARK_QUESTIONS

    assert set(SPARK_QUESTIONS) == {*QUESTIONS, "measures", "idle_cost", "waste"}

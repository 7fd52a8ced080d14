"""Bad input on Spark: a typed error in one line, never Spark's stack or Py4J's objects.

A question Spark does not answer names itself; a listed file Spark cannot find (gone
from under a question, or a path the session cannot see) is the store's error; a
stopped session is the engine's. Each error is raised ``from None``: no Py4J exception
(which carries the JVM's stack) hangs off it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ccanalytics import History, collect
from ccanalytics.errors import EngineError, StoreError
from ccanalytics.history.queries._history import catalog_of
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("small") / "store"
    clock = SimulatedClock(datetime(2026, 11, 2, 12, tzinfo=UTC))
    with Sandbox(SandboxApp(clock=clock)) as sandbox, sandbox.client(EXEMPT_KEY) as client:
        for _ in range(3):
            collect(["cl-infer-prod"], folder, client=client, trust_service_clock=True)
            clock.advance(timedelta(minutes=5))
    return folder


def _one_clean_line(err: BaseException) -> str:
    text = str(err)
    assert "\n" not in text and "Traceback" not in text and "py4j" not in text.lower()
    assert err.__cause__ is None and (err.__suppress_context__ or err.__context__ is None)
    return text


def test_a_question_spark_does_not_answer_names_itself(store: Path, spark: Any) -> None:
    """A question History gains is refused on Spark until it is held to DuckDB's answer."""
    with History(store, engine=spark) as h, pytest.raises(EngineError) as caught:
        catalog_of(h).reader("a_new_question")
    assert caught.value.question == "a_new_question"
    assert "History.a_new_question does not run on Spark" in str(caught.value)


def test_an_engine_that_is_no_session_is_refused(store: Path) -> None:
    with pytest.raises(ValueError, match=r"neither 'duckdb' nor a pyspark\.sql\.SparkSession"):
        History(store, engine="spark")


def test_a_file_spark_cannot_find_is_the_store_s_error(
    store: Path, spark: Any, tmp_path: Path
) -> None:
    import shutil

    copy = Path(shutil.copytree(store, tmp_path / "store"))
    # Inside one listing the views are not listed again: the file Spark was given is
    # gone when it reads it, as on an executor that cannot see the store's path.
    with History(copy, engine=spark) as h, catalog_of(h).one_listing(listed=True):
        next(copy.glob("pods/date=*/*.parquet")).unlink()
        with pytest.raises(StoreError) as caught:
            h.idle_cost()
    text = _one_clean_line(caught.value)
    assert text.startswith(f"Spark cannot read the store {copy}")


def test_a_stopped_session_is_the_engine_s_error(store: Path, spark: Any) -> None:
    with History(store, engine=spark) as h:
        assert h.idle_cost()["total_cost"].sum() > 0
        spark.stop()
        with pytest.raises(EngineError) as caught:
            h.measures("idle_cost")
    text = _one_clean_line(caught.value)
    assert text.startswith("Spark could not ") and "History.measures" in text
    assert "the Spark session is stopped" in text

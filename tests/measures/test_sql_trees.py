"""What a rule's SQL reads and binds comes from its sqlglot tree, not from its text.

A parameter whose name starts another's (``$z`` and ``$z_max``), a column named only in
a string or a comment: the text says yes, the tree says no.
"""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from ccanalytics import analysis
from ccanalytics.analysis import _run, _summary
from ccanalytics.frames import POD_COLUMNS
from ccanalytics.measures import (
    MEASURES,
    query,
    sql_columns,
    sql_parameters,
    sql_printed,
    sql_tables,
)


def test_a_parameter_is_bound_only_when_the_tree_names_it() -> None:
    frame = pd.DataFrame({"cost": [1.0, 2.0]})
    out = query(
        frame,
        "SELECT sum(cost) * $z_max AS m FROM frame",
        {"z": 1.0, "z_max": 3.0},
        reads=["cost"],
        frame_dtypes={"cost": "Float64"},
    )
    assert out["m"].tolist() == [9.0]  # (1 + 2) x 3
    assert sql_parameters("SELECT $z_max, '$z' AS text") == {"z_max"}


def test_columns_named_in_strings_or_comments_are_not_read() -> None:
    sql = "SELECT cost -- and rank\nFROM frame WHERE status = 'gpu_util_min'"
    assert sql_columns(sql) == {"cost", "status"}
    assert sql_tables(sql) == {"frame"}


def test_the_live_queries_read_every_column_a_registry_measure_reads() -> None:
    read = set(_run._reads(_summary._SUMMARY_SQL))
    for m in MEASURES:
        if m.kind in ("sum", "waste") and m.live:
            wanted = sql_columns(f"SELECT {m.sql_sum()} FROM frame") & set(POD_COLUMNS)
            assert wanted <= read, m.name


def test_a_rule_prints_in_another_dialect() -> None:
    sql = "SELECT count(*) FILTER (WHERE gpu_util_max < $idle_threshold) AS idle FROM frame"
    spark = sql_printed(sql, "spark")
    assert "FROM frame" in spark and "idle_threshold" in spark
    assert sql_printed(sql) != spark


def test_sqlglot_waits_for_the_first_question() -> None:
    code = "import sys, ccanalytics.cli, ccanalytics.analysis; print('sqlglot' in sys.modules)"
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert shown.strip() == "False"


@pytest.mark.parametrize("without", [True, False])
def test_an_older_frame_weighs_each_mean_by_its_gpu_count(without: bool) -> None:
    # Two pods, 8 GPUs at 90 % and 2 GPUs at 40 %: (8 x 90 + 2 x 40) / 10 = 80 %.
    frame = pd.DataFrame(
        {
            "cluster_id": ["c", "c"],
            "pod_id": ["a", "b"],
            "status": ["RUNNING", "RUNNING"],
            "gpu_count": [8, 2],
            "gpu_util_mean": [90.0, 40.0],
            "gpu_util_max": [95.0, 45.0],
            "cpu_util": [10.0, 10.0],
            "cost": [8.0, 2.0],
        }
    )
    if not without:
        frame["gpus_reporting"] = frame["gpu_count"]
    row = analysis.cluster_summary(frame).iloc[0]
    assert row["gpu_util_mean"] == pytest.approx(80.0)


def test_a_parameter_bound_to_a_column_is_that_parameter_alone() -> None:
    """A rule judged at a threshold per row (the backtest's rules): ``$z`` becomes the
    column, ``$z_max`` (a name it starts) and the ``$z`` of a string or comment stay."""
    import duckdb

    from ccanalytics.measures import sql_bound_to_columns, sql_parameters

    sql = "SELECT a < $z AS low, b < $z_max AS high, '$z' AS text FROM t, r -- not $z"
    bound = sql_bound_to_columns(sql, {"z": "r.z"})
    assert sql_parameters(bound) == {"z_max"}
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT 1 AS a, 2 AS b; CREATE TABLE r AS SELECT 5 AS z")
    assert con.execute(bound, {"z_max": 1}).fetchall() == [(True, False, "$z")]

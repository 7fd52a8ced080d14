"""``Measure.sql_sum(case=True)`` is the same sum as its FILTER form, bit for bit.

The live summary sums the registry's measures as ``sum(CASE WHEN where THEN row END)``
(one pass of the aggregate) where History keeps ``sum(row) FILTER (WHERE where)``; both
must give the same figure, NULL predicates (a missing status or metric) and groups with
no matching row included.
"""

from __future__ import annotations

import duckdb
import pytest

from ccanalytics.frames import POD_COLUMNS
from ccanalytics.measures import MEASURES, Params, sql_columns, sql_parameters, waste_classes

_SUMMED = [m for m in (*MEASURES, *waste_classes()) if m.kind in ("sum", "waste") and m.row]

# Pod rows as the rules read them: every column the measures' SQL names, with NULLs and
# a cluster whose only pod is not running (its filtered sums are NULL).
_COLUMNS = (
    "cluster_id",
    "status",
    "gpu_count",
    "gpus_reporting",
    "gpu_util_mean",
    "gpu_util_max",
    "gpu_util_min",
    "gpu_mem_util_max",
    "cost",
    "cpu_util",
    "idle_gpus",
    "straggler_deficit",
)
_ROWS = """
SELECT * FROM (VALUES
  ('a', 'RUNNING', 2, 2, 50.0, 60.0, 40.0, 40.0, 1.5, 0.25, 1, 5.0),
  ('a', 'RUNNING', 1, 1, 3.0, 5.0, 1.0, 50.0, 2.0, NULL, 0, NULL),
  ('a', NULL, 4, NULL, NULL, NULL, NULL, NULL, 7.0, NULL, NULL, NULL),
  ('a', 'RUNNING', 8, 8, 98.0, 99.0, 97.0, 99.0, NULL, NULL, 3, NULL),
  ('b', 'EXITED', 1, NULL, NULL, NULL, NULL, NULL, 0.5, NULL, NULL, NULL),
  ('c', 'RUNNING', 0, NULL, NULL, NULL, NULL, NULL, 0.1, 30.0, NULL, NULL)
) AS t({})
""".format(", ".join(_COLUMNS))


@pytest.mark.parametrize("measure", _SUMMED, ids=lambda m: m.name)
def test_case_form_sums_the_same_rows(measure: object) -> None:
    con = duckdb.connect()
    params = Params().sql()
    sums = []
    for case in (False, True):
        sql = measure.sql_sum(case=case)  # type: ignore[attr-defined]
        used = {k: v for k, v in params.items() if k in sql_parameters(f"SELECT {sql}")}
        sums.append(
            con.execute(
                f"SELECT cluster_id, {sql} FROM ({_ROWS}) GROUP BY cluster_id ORDER BY cluster_id",
                used,
            ).fetchall()
        )
    assert sums[0] == sums[1]
    assert len(sums[0]) == 3


def test_the_rows_have_every_column_a_measure_reads() -> None:
    # A measure reading a column these rows lack fails above with a BinderException.
    read = set().union(*(sql_columns(f"SELECT {m.sql_sum()}") for m in _SUMMED))
    assert read <= set(_COLUMNS)


def test_case_form_is_a_case_only_where_there_is_a_where() -> None:
    filtered = next(m for m in _SUMMED if m.where)
    assert "FILTER" not in filtered.sql_sum(case=True)
    assert "CASE WHEN" in filtered.sql_sum(case=True)
    assert "FILTER (WHERE" in filtered.sql_sum()


_DUCKDB_TYPES = {"Float64": "DOUBLE", "Int64": "BIGINT", "string": "VARCHAR"}
#: The two columns the rules derive from a pod's GPUs rather than read from its row.
_DERIVED = {"idle_gpus": "BIGINT", "straggler_deficit": "DOUBLE"}


def _stored_rows() -> str:
    """The rows above with each column of the frames' own dtype, as the store holds it."""
    casts = ", ".join(
        f"CAST({c} AS {_DERIVED.get(c) or _DUCKDB_TYPES[POD_COLUMNS[c].dtype]}) AS {c}"
        for c in _COLUMNS
    )
    return f"SELECT {casts} FROM ({_ROWS})"


@pytest.mark.parametrize("measure", _SUMMED, ids=lambda m: m.name)
def test_every_sum_is_a_double(measure: object) -> None:
    # A sum of a DECIMAL literal (1.0) keeps a 128-bit DECIMAL state per group, which
    # the rollups and wide windows hold in memory for every group at once.
    con = duckdb.connect()
    sql = measure.sql_sum()  # type: ignore[attr-defined]
    params = {k: v for k, v in Params().sql().items() if k in sql_parameters(f"SELECT {sql}")}
    (kind,) = con.execute(f"SELECT typeof({sql}) FROM ({_stored_rows()})", params).fetchone()  # type: ignore[misc]
    assert kind == "DOUBLE"

"""The SQL of any registry measure, printed for another engine's warehouse.

:func:`measures_sql` is the statement :meth:`History.measures
<ccanalytics.history.History.measures>` runs (one pass over the window's pod rows,
grouped by the dimensions), over the store's tables ``pods``, ``gpus`` and ``snapshots``
as they are in Parquet, printed from its sqlglot tree in the chosen dialect. Its named
parameters stay placeholders (``$name`` in DuckDB, ``:name`` in Spark): the window in
epoch microseconds, ``max_gap_us`` (NULL: twice the median spacing) and each threshold.
Spark's text is the one History runs on a Spark session (:func:`~._spark.spark_sql`);
the other dialects are sqlglot's translation of the same tree, with DuckDB's time
functions given as sqlglot's own nodes so each dialect prints its spelling.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ccanalytics.measures import Params

__all__ = ["DIALECTS", "measures_sql"]

#: The dialects ``ccanalytics measures sql --dialect`` prints.
DIALECTS: Final = ("duckdb", "spark", "trino", "bigquery", "snowflake")


def _portable(node: Any) -> Any:
    """DuckDB's epoch functions as sqlglot's typed nodes (printed per dialect)."""
    from sqlglot import exp

    if isinstance(node, exp.Anonymous):
        if node.name.lower() == "epoch_us":
            return exp.UnixMicros(this=node.expressions[0])
        if node.name.lower() == "make_timestamptz":
            return exp.UnixToTime(this=node.expressions[0], scale=exp.UnixToTime.MICROS)
    return node


def measures_sql(
    names: str | Sequence[str],
    *,
    dialect: str = "duckdb",
    by: str | Sequence[str] | None = "cluster",
) -> str:
    """The SQL of the measures ``names`` split ``by`` (dimension names), in ``dialect``.

    A comment first lists the parameters to bind and the thresholds' defaults. An
    unknown measure, dimension or dialect is a ValueError naming the known ones; a
    measure that is not a sum or a share (``stragglers``) one naming its method.
    """
    import sqlglot

    from ccanalytics.history.queries import _measures
    from ccanalytics.history.queries._spark import spark_sql
    from ccanalytics.measures import DIALECT, dimensions, sql_parameters

    if dialect not in DIALECTS:
        raise ValueError(f"no dialect {dialect!r} (known: {', '.join(DIALECTS)})")
    split = dimensions(by)
    chosen = _measures.resolve(names)
    counted = [m.name for m in chosen if m.kind in _measures.COUNTED]
    if counted:  # its statement is the straggler rule's per rank, not a sum printed here
        raise ValueError(
            f"{counted[0]!r} is a count measure (ranks, not pod rows): History.measures "
            "answers it, on DuckDB or Spark"
        )
    sql = _measures.statement(chosen, split)
    if dialect == "spark":
        text = sqlglot.transpile(spark_sql(sql), read="spark", write="spark", pretty=True)[0]
    elif dialect == DIALECT:
        text = sqlglot.transpile(sql, read=DIALECT, write=DIALECT, pretty=True)[0]
    else:
        tree = sqlglot.parse_one(sql, read=DIALECT).transform(_portable)
        text = tree.sql(dialect=dialect, pretty=True, comments=False)
    defaults = Params().sql()
    bound = sorted(sql_parameters(sql))
    listed = ", ".join(f"{n}={defaults[n]}" if n in defaults else n for n in bound)
    keys = (
        " (bucket k: its start is k times the width in microseconds)"
        if any(d.bucket_us for d in split)
        else ""
    )
    return (
        f"-- parameters: {listed}\n-- times: epoch microseconds; sums in USD or hours{keys}\n{text}"
    )

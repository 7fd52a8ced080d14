"""A History's questions on a Spark session: the same SQL trees, printed in Spark's dialect.

:class:`SparkEngine` stands where the DuckDB connection stands for the questions it
answers (:data:`SPARK_QUESTIONS`): ``execute(sql, params)`` takes the package's own
DuckDB SQL, binds the parameters into its sqlglot tree as typed literals, rewrites the
few DuckDB idioms sqlglot does not translate (:func:`spark_sql`), prints the tree in
Spark's dialect and runs it. The views ``pods``, ``gpus`` and ``snapshots`` are Spark
temporary views over the files the catalog's listing holds (the same listing, vetting
and window as DuckDB's), with the catalog's bookkeeping columns: ``date`` from the
Hive folder, ``file_index`` the file's place in the listing. Spark reads the store's
own files, never the rollups or the day cache: those are DuckDB's shortcuts, and the
agreement test (tests/history/engines) holds the two answers to one another.

pyspark is imported only when a Spark session is handed in (``History(store,
engine=spark)``); a failure inside Spark (the JVM's stack trace, Py4J's objects) leaves
as one line of :class:`~ccanalytics.errors.EngineError` or, when Spark cannot see the
store's files, :class:`~ccanalytics.errors.StoreError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from ccanalytics.errors import EngineError, StoreError
from ccanalytics.history.store import TABLES, empty_table
from ccanalytics.measures import DIALECT

if TYPE_CHECKING:
    from pathlib import PurePath

    import pandas as pd
    import pyarrow as pa  # type: ignore[import-untyped]

    from ccanalytics.history.store import Location

__all__ = ["SPARK_QUESTIONS", "SparkEngine", "is_spark_session", "spark_sql"]

#: The History questions a Spark session answers (tests/history/engines holds each to
#: DuckDB's answer): every question over the store's rows. A question added to History
#: runs on Spark once it is named here; until then it is an EngineError naming it.
SPARK_QUESTIONS: Final = frozenset(
    {
        "backtest",
        "coverage",
        "idle_cost",
        "measures",
        "pod_lifetimes",
        "rightsizing",
        "showback",
        "spend",
        "spend_anomalies",
        "straggler_flags",
        "stragglers",
        "utilization",
        "waste",
    }
)
#: DuckDB functions with another name in Spark (same arguments, same meaning).
_RENAMED: Final = {"epoch_us": "UNIX_MICROS", "make_timestamptz": "TIMESTAMP_MICROS"}
#: Views the catalog defines beside the tables, answered here as literals.
_FLAGS: Final = ("_bounds", "_one_file_per_instant", "_rolled_days")


def is_spark_session(engine: object) -> bool:
    """Whether ``engine`` is a pyspark SparkSession (without importing pyspark)."""
    return any(
        cls.__name__ == "SparkSession" and cls.__module__.startswith("pyspark.")
        for cls in type(engine).__mro__
    )


def _literal(value: Any) -> Any:
    """A parameter's value as a typed SQL literal (a float as DOUBLE: a bare ``0.5`` is
    a DECIMAL in Spark)."""
    from sqlglot import exp

    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, float):
        return exp.cast(exp.Literal.number(repr(value)), "DOUBLE")
    if isinstance(value, int):
        return exp.Literal.number(int(value))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, (list, tuple)):
        return exp.Array(expressions=[_literal(v) for v in value])
    raise TypeError(f"no SQL literal for a parameter of type {type(value).__name__}")


def _bound(tree: Any, params: Mapping[str, Any]) -> Any:
    from sqlglot import exp

    def bind(node: Any) -> Any:
        if isinstance(node, exp.Placeholder) and node.name in params:
            return _literal(params[node.name])
        return node

    return tree.transform(bind)


def _enumerated(select: Any) -> Any:
    """DuckDB's ``SELECT unnest(range(len(L))) AS i, unnest(L) AS v`` (two generators,
    zipped) as Spark's one ``posexplode(L) AS (i, v)``."""
    from sqlglot import exp

    parts = select.expressions
    if len(parts) != 2 or not all(isinstance(p, exp.Alias) for p in parts):
        return select
    first, second = (p.this for p in parts)
    if not (isinstance(first, exp.Explode) and isinstance(second, exp.Explode)):
        return select
    if not isinstance(first.this, exp.GenerateSeries):
        return select
    listed = second.this
    posexplode = exp.Anonymous(this="POSEXPLODE", expressions=[listed.copy()])
    names = [exp.to_identifier(p.alias) for p in parts]
    select.set("expressions", [exp.Aliases(this=posexplode, expressions=names)])
    return select


def _spark_idioms(node: Any) -> Any:
    from sqlglot import exp

    if isinstance(node, exp.Anonymous) and node.name.lower() in _RENAMED:
        return exp.Anonymous(this=_RENAMED[node.name.lower()], expressions=node.expressions)
    if isinstance(node, exp.CTE) and node.args.get("materialized") is not None:
        node.set("materialized", None)  # Spark plans each CTE itself
    if isinstance(node, exp.PercentileDisc):
        # Spark's form of the standard aggregate; sqlglot prints PERCENTILE_APPROX for
        # it, an estimate, where the straggler rule's median must be exact.
        ordered = exp.Order(expressions=[exp.Ordered(this=node.this.copy(), nulls_first=True)])
        share = exp.Anonymous(this="PERCENTILE_DISC", expressions=[node.expression.copy()])
        return exp.WithinGroup(this=share, expression=ordered)
    if isinstance(node, exp.Select):
        return _enumerated(node)
    return node


def _columns(query: Any, ctes: Mapping[str, Any]) -> list[str] | None:
    """The output columns of ``query`` (a SELECT or a union), a ``*`` over one of
    ``ctes`` expanded; None where they cannot be told without the tables' schemas."""
    from sqlglot import exp

    if isinstance(query, exp.Union):
        return _columns(query.left, ctes)
    if isinstance(query, exp.Subquery):
        return _columns(query.this, ctes)
    if not isinstance(query, exp.Select):
        return None
    names: list[str] = []
    for projection in query.expressions:
        if isinstance(projection, exp.Star):
            source = query.args.get("from_") or query.args.get("from")
            table = source.this if source is not None else None
            inner = ctes.get(table.name) if isinstance(table, exp.Table) else None
            expanded = _columns(inner, ctes) if inner is not None else None
            if expanded is None:
                return None
            names += expanded
        elif projection.alias_or_name:
            names.append(projection.alias_or_name)
        else:
            return None
    return names


def _by_name(tree: Any) -> Any:
    """Each ``UNION ALL BY NAME`` (DuckDB's; Spark SQL has none) as a plain UNION ALL of
    both sides in one column order, a column one side lacks as NULL there."""
    from sqlglot import exp

    ctes = {cte.alias: cte.this for cte in tree.find_all(exp.CTE)}
    for union in list(tree.find_all(exp.Union)):
        if not union.args.get("by_name"):
            continue
        left, right = _columns(union.left, ctes), _columns(union.right, ctes)
        if left is None or right is None:
            raise EngineError("a UNION BY NAME over columns Spark cannot be told", question=None)
        order = [*left, *(c for c in right if c not in left)]
        sides = []
        for side, has in ((union.left, left), (union.right, right)):
            picked = [exp.column(c) if c in has else exp.alias_(exp.Null(), c) for c in order]
            sides.append(exp.select(*picked).from_(exp.Subquery(this=side.copy(), alias="_side")))
        union.replace(exp.union(sides[0], sides[1], distinct=False))
    return tree


def spark_sql(sql: str, params: Mapping[str, Any] | None = None) -> str:
    """The package's DuckDB ``sql`` as Spark SQL: ``params`` bound as literals (the rest
    stay ``:name`` markers), the DuckDB idioms sqlglot keeps rewritten."""
    import sqlglot

    tree = sqlglot.parse_one(sql, read=DIALECT)
    if params:
        tree = _bound(tree, params)
    tree = _by_name(tree.transform(_spark_idioms))
    return str(tree.sql(dialect="spark", comments=False))


class _Result:
    """What the questions read of a DuckDB result: ``df()``, ``fetchall()``, ``fetchone()``."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    def df(self) -> pd.DataFrame:
        frame: pd.DataFrame = self._table.to_pandas()
        return frame

    def fetchall(self) -> list[tuple[Any, ...]]:
        return [tuple(row.values()) for row in self._table.to_pylist()]

    def fetchone(self) -> tuple[Any, ...] | None:
        rows = self.fetchall()
        return rows[0] if rows else None


class SparkEngine:
    """The questions' connection on a Spark session (see the module docstring)."""

    name: Final = "spark"

    def __init__(self, session: Any, location: Location) -> None:
        self.session = session
        self.location = location
        #: The question being answered, for the errors' words.
        self.question = "__init__"
        self._viewed: dict[str, object] = {}

    def refuse(self, question: str) -> EngineError:
        """The error of a question this engine does not answer."""
        return EngineError(
            f"History.{question} does not run on Spark (it answers "
            f"{', '.join(sorted(SPARK_QUESTIONS))}): open History(store) for it",
            question=question,
        )

    # -- the views ----------------------------------------------------------------------

    def define(self, listings: Mapping[str, Sequence[PurePath]], flags: Mapping[str, Any]) -> None:
        """The tables' views over ``listings``' files and the catalog's flags as literals."""
        with self._spark_errors(f"read the store's files for History.{self.question}"):
            for table in TABLES:
                files = tuple(listings.get(table, ()))
                if self._viewed.get(table) != files:
                    self._table_frame(table, files).createOrReplaceTempView(table)
                    self._viewed[table] = files
            for name in _FLAGS:
                sql = _flag_sql(name, flags.get(name))
                if self._viewed.get(name) != sql:
                    self.session.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS {sql}")
                    self._viewed[name] = sql

    def _table_frame(self, table: str, files: tuple[PurePath, ...]) -> Any:
        """``table``'s files as one Spark frame with every column of the store's schema."""
        from pyspark.sql import functions as F

        schema = empty_table(table).schema
        if not files:
            frame = self.session.createDataFrame([], _spark_schema(schema))
            return frame.withColumn("date", F.lit(None).cast("date")).withColumn(
                "file_index", F.lit(None).cast("bigint")
            )
        paths = [self.location.at(path) for path in files]
        # The store's schema given, not inferred: no footer of every file read to merge
        # schemas, and a column a file lacks reads as NULL of its type.
        frame = (
            self.session.read.schema(f"{_spark_schema(schema)}, `date` date")
            .option("basePath", str(self.location.at(self.location.root / table)))
            .parquet(*[str(p) for p in paths])
        )
        indices = self.session.createDataFrame(
            [(_uri(p), index) for index, p in enumerate(paths)], "_file string, file_index bigint"
        )
        frame = frame.withColumn("_file", F.col("_metadata.file_path"))
        return frame.join(F.broadcast(indices), "_file").drop("_file")

    # -- the queries --------------------------------------------------------------------

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> _Result:
        """Run the package's DuckDB ``sql`` with ``params`` on the session."""
        text = spark_sql(sql, params)
        with self._spark_errors(f"answer History.{self.question}"):
            return _Result(self.session.sql(text).toArrow())

    def _stopped(self) -> bool:
        """Whether the session's context is stopped (pyspark drops its JVM handle)."""
        try:
            return self.session.sparkContext._jsc is None
        except Exception:  # a session whose context cannot even be asked
            return True

    @contextmanager
    def _spark_errors(self, doing: str) -> Iterator[None]:
        """Spark's failures as one line: a file it cannot see is the store's error, the
        rest the engine's. ``from None``: Py4J's objects (and the JVM's stack) stay out."""
        if self._stopped():
            raise EngineError(
                f"Spark could not {doing}: the Spark session is stopped (start another "
                "and open a History on it)",
                question=self.question,
            )
        try:
            yield
        except Exception as err:
            if self._stopped():  # stopped mid-query: pyspark fails in its own ways then
                text, problem = "", "the Spark session was stopped during the query"
            elif not _from_spark(err):
                raise
            else:
                text, problem = str(err), _first_line(err)
        else:
            return
        if _NOT_FOUND.search(text):
            problem = "a listed file is gone, or not on a path Spark sees"
            raise StoreError(
                f"Spark cannot read the store {self.location.show(self.location.root)} "
                f"({problem}): is it on a path every Spark executor can see?",
                self.location.root,
            ) from None
        raise EngineError(
            f"Spark could not {doing}: {problem}",
            question=self.question,
        ) from None


_NOT_FOUND = re.compile(r"PATH_NOT_FOUND|FileNotFound|does not exist|No such file", re.I)


def _from_spark(err: BaseException) -> bool:
    """Whether ``err`` is Spark's or Py4J's (a query's failure, a stopped session)."""
    module = type(err).__module__
    return module.startswith(("pyspark", "py4j")) or isinstance(err, ConnectionError)


def _first_line(err: BaseException) -> str:
    """Spark's message without its stack: the error class and first line, or the kind."""
    skipped = ("at ", "File ", "Traceback", "JVM stacktrace", "An error occurred while calling")
    for line in str(err).strip().splitlines():
        line = line.strip().removeprefix(": ")
        if line and not line.startswith(skipped):
            return line[:300]
    return type(err).__name__


def _flag_sql(name: str, value: Any) -> str:
    if name == "_bounds":
        lo, hi = value if value else (None, None)
        return (
            f"SELECT CAST({'NULL' if lo is None else int(lo)} AS BIGINT) AS lo_us, "
            f"CAST({'NULL' if hi is None else int(hi)} AS BIGINT) AS hi_us"
        )
    if name == "_one_file_per_instant":
        return f"SELECT {'true' if value else 'false'} AS one_file"
    return "SELECT 0 AS days"  # _rolled_days: Spark reads every day from its files


def _uri(path: Any) -> str:
    """A file's address as Spark's ``_metadata.file_path`` spells it: Hadoop's URI,
    which escapes what a URI may not hold (a space, ``%``) and keeps ``=`` and the rest."""
    from urllib.parse import quote

    text = str(path)
    if "://" in text:
        return text
    return "file:" + quote(text, safe="/!$&'()*+,;=:@-._~")


def _spark_type(kind: Any) -> str:
    """The Spark SQL type of an Arrow type of the store's schema."""
    import pyarrow as pa

    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "string"
    if pa.types.is_boolean(kind):
        return "boolean"
    if pa.types.is_int32(kind):
        return "int"
    if pa.types.is_integer(kind):
        return "bigint"
    if pa.types.is_floating(kind):
        return "double"
    if pa.types.is_timestamp(kind):
        return "timestamp"
    if pa.types.is_date(kind):
        return "date"
    raise TypeError(f"no Spark type for the store's {kind}")


def _spark_schema(schema: pa.Schema) -> str:
    return ", ".join(f"`{field.name}` {_spark_type(field.type)}" for field in schema)

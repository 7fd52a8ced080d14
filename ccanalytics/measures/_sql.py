"""The rules' SQL as trees: what a statement reads and binds, and how it prints.

A rule or a measure is SQL text written once (:mod:`ccanalytics.measures.rules`, the
registry); what is known *about* it (the columns it reads, the ``$name`` parameters it
binds, its text in another engine's dialect) is read off its sqlglot syntax tree, never
off the text with a regex or ``in``: a column named in a comment or inside a string, or
a parameter whose name starts another's (``$z`` in ``$z_max``), is then no false match.

Parsing is costly (a tenth of a second for the live summary's statement) and sqlglot's
import a few more, so both wait for the first question, and each text is parsed once
per process (the statements are a handful of constants).
"""

from __future__ import annotations

import functools
from typing import Any, Final

__all__ = ["sql_bound_to_columns", "sql_columns", "sql_parameters", "sql_printed", "sql_tables"]

#: The dialect the rules are written in.
DIALECT: Final = "duckdb"


@functools.lru_cache(maxsize=256)
def _tree(sql: str) -> Any:
    import sqlglot

    return sqlglot.parse_one(sql, read=DIALECT)


@functools.lru_cache(maxsize=256)
def sql_columns(sql: str) -> frozenset[str]:
    """Every column name ``sql`` refers to (qualified or not; ``*`` aside)."""
    from sqlglot import exp

    return frozenset(
        column.name for column in _tree(sql).find_all(exp.Column) if column.name != "*"
    )


@functools.lru_cache(maxsize=256)
def sql_parameters(sql: str) -> frozenset[str]:
    """The named parameters ``sql`` binds (``$idle_threshold`` is ``idle_threshold``)."""
    from sqlglot import exp

    return frozenset(node.name for node in _tree(sql).find_all(exp.Placeholder) if node.name)


@functools.lru_cache(maxsize=256)
def sql_tables(sql: str) -> frozenset[str]:
    """The relations ``sql`` reads by name (its own CTEs among them)."""
    from sqlglot import exp

    return frozenset(table.name for table in _tree(sql).find_all(exp.Table))


def sql_printed(sql: str, dialect: str = DIALECT, *, pretty: bool = False) -> str:
    """``sql`` printed from its tree in ``dialect`` (``"spark"``, ``"trino"``, ...)."""
    return str(_tree(sql).sql(dialect=dialect, pretty=pretty))


def sql_bound_to_columns(sql: str, columns: dict[str, str]) -> str:
    """``sql`` with each ``$name`` parameter of ``columns`` replaced by that column
    (``{"idle_threshold": "r.idle_threshold"}``: a rule judged at a threshold per row),
    on the tree: a ``$name`` starting another's, or in a comment, is no match."""
    import sqlglot
    from sqlglot import exp

    def bind(node: Any) -> Any:
        if isinstance(node, exp.Placeholder) and node.name in columns:
            return sqlglot.parse_one(columns[node.name], read=DIALECT)
        return node

    return str(_tree(sql).copy().transform(bind).sql(dialect=DIALECT))

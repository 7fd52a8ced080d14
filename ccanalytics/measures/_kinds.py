"""What each kind of measure is computed over, and the SELECT list its entries make.

Every entry of a kind below carries its own figure: ``sql``, an expression over the
columns of the kind's :class:`Relation` (what the query that answers it builds first),
or, for a judgement decided in Python, ``compute`` (:mod:`ccanalytics.measures._judgements`).
The query then selects :func:`projections` of its kind: each entry's expression parsed
with sqlglot and printed in the engine's dialect under its column's name, so a new
measure of a kind is one entry of the registry, and no figure's SQL is written twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from ccanalytics.measures._sql import DIALECT

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ccanalytics.measures._measure import Kind, Measure

__all__ = ["KIND_RELATIONS", "Relation", "of_kind", "projections", "select_list"]


@dataclass(frozen=True)
class Relation:
    """The relation a kind's measures are expressions over."""

    name: str  #: its name in the query's SQL
    query: str  #: the History method whose query builds it and answers the measures
    columns: tuple[str, ...]  #: what an entry's ``sql`` may read


#: Per kind whose entries carry their own figure: its relation.
KIND_RELATIONS: Final[Mapping[Kind, Relation]] = MappingProxyType(
    {
        "spend": Relation(
            "period_spend",
            "spend",
            (
                "total_cost",
                "observed_hours",
                "unobserved_hours",
                "burn_rate",
                "hours_left",
                "rest_p10",
                "rest_p50",
                "rest_p90",
            ),
        ),
        "pod_share": Relation(
            "pod_rows", "pod_lifetimes", ("covered_us", "raw_us", "idle", "cost")
        ),
        "anomaly": Relation(
            "anomaly_inputs", "spend_anomalies", ("spend", "usual", "mad", "weeks")
        ),
        "judgement": Relation("period_spend", "spend", ()),
        "backtest": Relation(
            "per_pod",
            "backtest",
            ("stops", "false_stops", "saved_usd", "saved_gpu_hours", "interrupted_usd"),
        ),
    }
)


def of_kind(kind: Kind) -> tuple[Measure, ...]:
    """The registry's entries of ``kind``, in its order."""
    from ccanalytics.measures._registry import MEASURES

    return tuple(m for m in MEASURES if m.kind == kind)


def projections(kind: Kind, dialect: str = DIALECT) -> tuple[str, ...]:
    """``<expression> AS <column>`` of each entry of ``kind`` with ``sql``, in ``dialect``:
    the expression parsed and printed from its tree, the alias set on the tree."""
    import sqlglot
    from sqlglot import exp

    out = []
    for m in of_kind(kind):
        if m.sql is None:
            continue
        tree = sqlglot.parse_one(m.sql, read=DIALECT)
        out.append(str(exp.alias_(tree, m.answer_column, quoted=False).sql(dialect=dialect)))
    return tuple(out)


def select_list(kind: Kind, dialect: str = DIALECT) -> str:
    """:func:`projections` of ``kind`` as one SELECT list (comma-separated)."""
    return ", ".join(projections(kind, dialect))

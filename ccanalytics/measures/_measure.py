"""What a measure is: the :class:`Measure` entry the registry declares each quantity
with (:data:`ccanalytics.measures.MEASURES`), the :class:`Metric` that carries it to the
textfile, and the two small helpers its entries are written with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Format", "Kind", "Measure", "Metric", "format_share", "sum_where"]


Kind = Literal[
    "sum", "share", "waste", "count", "spend", "pod_share", "anomaly", "judgement", "backtest"
]
Format = Literal["usd", "share", "count", "hours", "z", "date"]


@dataclass(frozen=True)
class Metric:
    """A Prometheus metric of the textfile: ``ccanalytics_<name>``."""

    name: str
    kind: Literal["gauge", "counter"]
    help: str


def sum_where(value: str, where: str) -> str:
    """``sum(value) FILTER (WHERE where)`` as ``sum(CASE WHEN where THEN value END)``: the
    same values summed (a row outside ``where`` gives NULL, which a sum skips), in the
    aggregate's one pass, where DuckDB runs each FILTER as a pass of its own."""
    return f"sum(CASE WHEN {where} THEN {value} END)"


@dataclass(frozen=True)
class Measure:
    """One quantity, declared once (see the module docstring for the kinds)."""

    name: str  #: the column over a window (History), and the measure's name
    kind: Kind
    unit: str  #: of ``name``: "USD", "GPU-hours", "0-1", "ranks"
    meaning: str  #: one sentence: the docs, the report's card note
    label: str  #: the report's label
    fmt: Format
    live: str | None = None  #: the live summary's column (per hour), if any
    live_unit: str | None = None
    row: str | None = None  #: "sum": the value of one pod row, per hour
    where: str | None = None  #: "sum": which pod rows count (None: all)
    #: "count": the statement whose rows it counts where ``where`` holds (its own SQL)
    source: str | None = None
    numerator: str | None = None  #: "share": measure names
    denominator: str | None = None
    params: tuple[str, ...] = ()  #: the Params fields that judge it
    policy_key: str | None = None  #: the policy's limit on it
    old_policy_keys: tuple[str, ...] = ()  #: spellings that warn for one release
    metric: Metric | None = None
    #: How an alert says the figure: ``{value}`` formatted by ``fmt``.
    sentence: str | None = None
    periodic: bool = False  #: the policy limits it per period (day, week, month)
    #: Old column names (over a window) for this one: documented, not kept.
    old_names: tuple[str, ...] = field(default=())
    #: "spend", "pod_share", "anomaly", "backtest": the figure as one SQL expression over
    #: the columns of its kind's relation (:mod:`ccanalytics.measures._kinds`), which the
    #: query's SELECT list is built from.
    sql: str | None = None
    #: "judgement": the function of :mod:`ccanalytics.measures._judgements` that decides
    #: it (a tier, a breach instant), for a figure a rule computes in Python.
    compute: str | None = None
    #: The answer's column, when it is not ``name`` (``spend_anomaly_z`` is ``robust_z``).
    column: str | None = None
    #: The report shows it as a card of its own (live and over a window).
    card: bool = False
    #: The share measure the card's note gives beside it (``idle_cost_share``).
    card_share: str | None = None
    #: The card is marked when above 0 though no policy limits it: a blind spot.
    card_marked: bool = False

    @property
    def answer_column(self) -> str:
        """The column of its query's answer that holds it."""
        return self.column or self.name

    @property
    def live_dtype(self) -> str:
        """The live column's dtype: whole numbers for counts of things, else floats."""
        return "Int64" if self.live_unit in ("GPUs", "pods", "ranks") else "Float64"

    def sql_sum(self, *, case: bool = False) -> str:
        """``sum(row) FILTER (WHERE where)`` over pod rows (a "sum" or "waste" measure).

        With ``case``, the same sum as ``sum(CASE WHEN where THEN row END)``: a row
        outside ``where`` gives NULL, which a sum skips, so the same values are summed in
        the same order. DuckDB runs each FILTER as a pass of its own over the group's
        rows and the CASE in the aggregate's one pass: the live summary's thirty sums
        took a fifth less time so.
        """
        if self.kind not in ("sum", "waste") or self.row is None:
            raise TypeError(f"{self.name} is not a sum over pod rows")
        if case and self.where:
            return sum_where(self.row, self.where)
        where = f" FILTER (WHERE {self.where})" if self.where else ""
        return f"sum({self.row}){where}"

    def sql_count(self, keys: tuple[str, ...] = ()) -> str:
        """A "count" measure over its ``source``'s rows, per value of ``keys`` (none: one
        row); ``source``'s own relations are the caller's (CTEs before it)."""
        if self.kind != "count" or self.source is None or self.where is None:
            raise TypeError(f"{self.name} is not a count of rows")
        select = ", ".join([*keys, f"count(*) FILTER (WHERE {self.where}) AS {self.name}"])
        group = f" GROUP BY {', '.join(keys)} ORDER BY {', '.join(keys)}" if keys else ""
        return f"SELECT {select} FROM ({self.source}) AS counted{group}"

    def format_live(self, value: float) -> str:
        """The live figure ``value`` (of ``live``, in ``live_unit``) in words."""
        if self.live_unit == "USD/h":
            return f"{value:,.2f} USD/h"
        if self.live_unit == "0-1":
            return format_share(value)
        return f"{int(value)}"

    def format(self, value: float) -> str:
        """``value`` in words of the measure's unit."""
        if self.fmt == "usd":
            return f"{value:,.2f} USD"
        if self.fmt == "share":
            return format_share(value)
        if self.fmt == "hours":
            return f"{value:,.1f} h"
        if self.fmt == "z":
            return f"z {value:.1f}"
        if self.fmt == "date":  # Unix seconds: the UTC day
            from datetime import UTC, datetime

            return f"{datetime.fromtimestamp(value, UTC):%Y-%m-%d}"
        return f"{int(value)}"


def format_share(value: float) -> str:
    """A share (0-1) in percent for a sentence: never a non-zero share printed as 0 %.

    One decimal below 10 % (``0.3%``), none above (``46%``), ``<0.1%`` for the tiniest.
    """
    percent = value * 100
    if 0 < percent < 0.1:
        return "<0.1%"
    return f"{percent:.1f}%" if percent < 10 else f"{percent:.0f}%"

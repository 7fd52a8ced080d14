"""Utilization history: snapshots appended to a Parquet store, and SQL over it.

- ``_collect``: :func:`collect` takes one snapshot of some clusters and appends it;
- ``_collector``: :func:`collect_every`, the scheduled loop (``_schedule``: its budget);
- ``_write``: appending files atomically (hidden temporary name, then a rename);
- ``_layout``: where files live, and which a reader should read;
- ``_schema``: what a file holds; frames to Arrow and back with nullable dtypes;
- ``_history``: :class:`History`, the read side, in an embedded DuckDB;
- ``_window``: ``since``/``until`` to a ``[start, end)`` window in UTC;
- ``_maintenance``: :func:`compact` (a day's files into one) and :func:`verify`.

The store, ``STORE/{pods,gpus}/date=YYYY-MM-DD/<unique>.parquet``, is plain Hive-style
Parquet: DuckDB, Polars, pyarrow and Spark read it as it is (see the README).

It may import :mod:`ccanalytics.frames`, :mod:`ccanalytics.api`,
:mod:`ccanalytics.analysis` and :mod:`ccanalytics.errors`; never the report or the
CLI, which build on it. Names are imported on first use (pyarrow and DuckDB are heavy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccanalytics._lazy import lazy_exports

if TYPE_CHECKING:
    from ccanalytics.history._alerts import (
        Snooze,
        notify_on_change,
        read_state,
        snooze,
        webhook_problem,
    )
    from ccanalytics.history._check import CheckResult, check_policy, check_store
    from ccanalytics.history._collect import CollectResult, collect
    from ccanalytics.history._collector import CollectorRun, SnapshotOutcome, collect_every
    from ccanalytics.history._history import History
    from ccanalytics.history._judge import Judgement, PolicyReport, judge_policy
    from ccanalytics.history._maintenance import CompactResult, StoreReport, compact, verify
    from ccanalytics.history._policy import Policy, Rule, Threshold, load_policy, parse_policy
    from ccanalytics.history._schedule import budget_refusal
    from ccanalytics.history._schema import SCHEMA_VERSION
    from ccanalytics.history._spend import PERIODS, SPEND_COLUMNS, period_bounds
    from ccanalytics.history._textfile import render_textfile, write_textfile
    from ccanalytics.history._window import resolve_window

__all__ = [
    "PERIODS",
    "SCHEMA_VERSION",
    "SPEND_COLUMNS",
    "CheckResult",
    "CollectResult",
    "CollectorRun",
    "CompactResult",
    "History",
    "Judgement",
    "Policy",
    "PolicyReport",
    "Rule",
    "SnapshotOutcome",
    "Snooze",
    "StoreReport",
    "Threshold",
    "budget_refusal",
    "check_policy",
    "check_store",
    "collect",
    "collect_every",
    "compact",
    "judge_policy",
    "load_policy",
    "notify_on_change",
    "parse_policy",
    "period_bounds",
    "read_state",
    "render_textfile",
    "resolve_window",
    "snooze",
    "verify",
    "webhook_problem",
    "write_textfile",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "CollectResult": "ccanalytics.history._collect",
        "collect": "ccanalytics.history._collect",
        "CollectorRun": "ccanalytics.history._collector",
        "SnapshotOutcome": "ccanalytics.history._collector",
        "collect_every": "ccanalytics.history._collector",
        "budget_refusal": "ccanalytics.history._schedule",
        "History": "ccanalytics.history._history",
        "CompactResult": "ccanalytics.history._maintenance",
        "StoreReport": "ccanalytics.history._maintenance",
        "compact": "ccanalytics.history._maintenance",
        "verify": "ccanalytics.history._maintenance",
        "SCHEMA_VERSION": "ccanalytics.history._schema",
        "PERIODS": "ccanalytics.history._spend",
        "SPEND_COLUMNS": "ccanalytics.history._spend",
        "period_bounds": "ccanalytics.history._spend",
        "resolve_window": "ccanalytics.history._window",
        "Snooze": "ccanalytics.history._alerts",
        "notify_on_change": "ccanalytics.history._alerts",
        "read_state": "ccanalytics.history._alerts",
        "snooze": "ccanalytics.history._alerts",
        "webhook_problem": "ccanalytics.history._alerts",
        "CheckResult": "ccanalytics.history._check",
        "check_policy": "ccanalytics.history._check",
        "check_store": "ccanalytics.history._check",
        "Judgement": "ccanalytics.history._judge",
        "PolicyReport": "ccanalytics.history._judge",
        "judge_policy": "ccanalytics.history._judge",
        "Policy": "ccanalytics.history._policy",
        "Rule": "ccanalytics.history._policy",
        "Threshold": "ccanalytics.history._policy",
        "load_policy": "ccanalytics.history._policy",
        "parse_policy": "ccanalytics.history._policy",
        "render_textfile": "ccanalytics.history._textfile",
        "write_textfile": "ccanalytics.history._textfile",
    },
)

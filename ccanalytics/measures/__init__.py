"""Every measure declared once, the rules it judges by, and the one engine that runs them.

- :mod:`ccanalytics.measures.rules`: the rules as SQL (running, judged, idle, unused
  capacity, stragglers, memory at risk) and their default thresholds;
- :data:`THRESHOLDS`: every threshold declared once (name, default, unit, bounds,
  meaning, policy key and flag), from which :class:`Params`, its validation, the CLI's
  flags, the policy's keys and the docs' table are derived;
- :class:`Params`: the thresholds every path judges with (live analyses, History,
  ``check``, the report, the plots);
- :func:`sql_columns`, :func:`sql_parameters`, :func:`sql_tables`, :func:`sql_printed`,
  :func:`sql_bound_to_columns`:
  what a rule's SQL reads and binds, and its text in another dialect, read off its
  sqlglot tree;
- :func:`query`: DuckDB over an in-memory pods frame, so a live frame runs the very SQL
  the store runs;
- :data:`MEASURES`: the registry, one :class:`Measure` per quantity (its name, SQL,
  unit, meaning, policy key, metric, label and docs), from which History's columns,
  the policy's keys, the alerts' sentences, the textfile's metrics, the report's
  cards and the docs' columns page are generated;
- :data:`KIND_RELATIONS`, :func:`of_kind`, :func:`projections`: what each kind of
  measure is computed over and the SELECT list its entries make, printed in an
  engine's dialect; :func:`budget_tier`, :func:`breach_instant`,
  :func:`forecast_breach`: the judgements an entry's ``compute`` names;
- :func:`live_totals`: a live summary's measures over all its rows (sums summed, shares
  the quotient of their totals), by the engine: the report's fleet figures;
- :func:`live_by_sql`: the registry's sums over a live frame's pod rows by a dimension
  (``gpu_type``, say), as one statement for the engine; :func:`share_sql`: a share
  over rows weighted by their time (History's utilization buckets);
- :data:`DIMENSIONS`, :func:`dimensions`: what a measure can be split by, declared
  once; :data:`POD_IDENTITY`: a pod's identity columns as every per-pod answer gives
  them;
- :func:`gpu_types`: the table of GPU types' memory (``gpu_types.toml``, extendable),
  which right-sizing reads.

This package sits in the base layer: it imports no other part of ccanalytics, so
analysis, history, plots, report and the CLI all read it.
"""

from __future__ import annotations

from ccanalytics.measures import rules
from ccanalytics.measures._dimensions import (
    DIMENSIONS,
    POD_IDENTITY,
    Dimension,
    columns_of,
    dimensions,
)
from ccanalytics.measures._engine import query
from ccanalytics.measures._gpu_types import GpuTypes, gpu_types
from ccanalytics.measures._grouped import live_by_sql, share_sql
from ccanalytics.measures._judgements import (
    breach_instant,
    budget_tier,
    computed,
    forecast_breach,
)
from ccanalytics.measures._kinds import KIND_RELATIONS, Relation, of_kind, projections, select_list
from ccanalytics.measures._limits import SpendLimit, limit_of
from ccanalytics.measures._measure import Measure, Metric, format_share, sum_where
from ccanalytics.measures._params import (
    PARAMETER_DOCS,
    Params,
    deprecated,
    idle_threshold_given,
    renamed,
)
from ccanalytics.measures._registry import (
    MEASURES,
    by_name,
    by_policy_key,
    policy_keys,
    sum_shares,
    waste_classes,
)
from ccanalytics.measures._sql import (
    DIALECT,
    sql_bound_to_columns,
    sql_columns,
    sql_parameters,
    sql_printed,
    sql_tables,
)
from ccanalytics.measures._thresholds import THRESHOLDS, Threshold, Unit, threshold
from ccanalytics.measures._totals import live_totals

__all__ = [
    "DIALECT",
    "DIMENSIONS",
    "KIND_RELATIONS",
    "MEASURES",
    "PARAMETER_DOCS",
    "POD_IDENTITY",
    "THRESHOLDS",
    "Dimension",
    "GpuTypes",
    "Measure",
    "Metric",
    "Params",
    "Relation",
    "SpendLimit",
    "Threshold",
    "Unit",
    "breach_instant",
    "budget_tier",
    "by_name",
    "by_policy_key",
    "columns_of",
    "computed",
    "deprecated",
    "dimensions",
    "forecast_breach",
    "format_share",
    "gpu_types",
    "idle_threshold_given",
    "limit_of",
    "live_by_sql",
    "live_totals",
    "of_kind",
    "policy_keys",
    "projections",
    "query",
    "renamed",
    "rules",
    "select_list",
    "share_sql",
    "sql_bound_to_columns",
    "sql_columns",
    "sql_parameters",
    "sql_printed",
    "sql_tables",
    "sum_shares",
    "sum_where",
    "threshold",
    "waste_classes",
]

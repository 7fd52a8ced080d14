"""``ccanalytics measures sql``: the SQL of any registry measure, in a warehouse's dialect."""

from __future__ import annotations

import argparse
from typing import Any

from ccanalytics.cli._common import EXIT_OK, Formatter, UsageError

#: The dialects and dimensions, spelled here so that ``--help`` imports no history
#: (tests/cli/test_measures_sql.py holds them to the library's).
DIALECTS = ("duckdb", "spark", "trino", "bigquery", "snowflake")
DIMENSIONS = ("cluster", "team", "gpu_type", "pod", "rank", "day", "hour")


def add_parser(sub: Any) -> None:
    measures = sub.add_parser(
        "measures",
        help="the registry's measures for other engines: their SQL",
        formatter_class=Formatter,
    )
    commands: Any = measures.add_subparsers(dest="measures_command", metavar="COMMAND")
    commands.required = True
    sql = commands.add_parser(
        "sql",
        help="print the SQL of measures over the store's tables (pods, gpus, snapshots)",
        formatter_class=Formatter,
        epilog="Example:\n  ccanalytics measures sql idle_cost idle_cost_share "
        "--dialect spark --by cluster --by day\n\n"
        "The statement History.measures runs, printed from its syntax tree; its named\n"
        "parameters (the window in epoch microseconds, the thresholds) stay placeholders.",
    )
    sql.add_argument("names", nargs="+", metavar="NAME", help="registry measure names")
    sql.add_argument("--dialect", choices=DIALECTS, default="duckdb", help="SQL dialect")
    sql.add_argument(
        "--by",
        action="append",
        choices=DIMENSIONS,
        metavar="DIM",
        help=f"split by this dimension (repeatable; default: cluster): {', '.join(DIMENSIONS)}",
    )
    sql.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ccanalytics.history import measures_sql

    try:
        text = measures_sql(args.names, dialect=args.dialect, by=args.by or "cluster")
    except ValueError as err:  # an unknown measure, or one that is not a sum: the user's
        raise UsageError(str(err)) from None
    print(text)
    return EXIT_OK

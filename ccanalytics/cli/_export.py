"""``ccanalytics export showback``: cost per pod per UTC hour or day, as FOCUS 1.2, CSV or Parquet.

Exit status: 0 the file was written; 1 the store cannot be read or holds no snapshot; 2
bad usage, a bad team mapping, or an output that exists (without ``--force``) or cannot
be written (each checked before the store is read). This module parses and prints;
:func:`ccanalytics.history.export_showback` reads the store and writes the file.
"""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from typing import Any

from ccanalytics.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    Formatter,
    add_rule_options,
    duration,
    rule_params,
)

__all__ = ["add_parser", "run"]

_EPILOG = """\
--format focus writes FOCUS 1.2 (as Parquet when FILE ends in .parquet or .pq, else as
CSV); csv and parquet write History.showback's own columns. Costs are estimates from
snapshots, never rounded: any grouping of the rows sums to the store's spend.

Examples:
  ccanalytics export showback --store /data/cc --window 7d --teams teams.toml \\
      --format focus --output showback-focus.csv
  ccanalytics export showback --store /data/cc --window 30d --by day --format parquet \\
      --output november.parquet --force"""


def add_parser(sub: Any) -> None:
    export = sub.add_parser(
        "export",
        help="export the history for other tools: showback as FOCUS 1.2, CSV or Parquet",
        formatter_class=Formatter,
        description="Export the history for other tools. WHAT: showback (cost per pod per "
        "UTC hour or day, by team).",
    )
    what = export.add_subparsers(
        dest="what", metavar="WHAT", required=True, help="showback: what each pod cost, by team"
    )
    showback = what.add_parser(
        "showback",
        help="cost per pod per UTC hour or day, by team, as FOCUS 1.2, CSV or Parquet",
        formatter_class=Formatter,
        description="Write one row per pod per UTC hour (or day) of the window that ends at "
        "the store's newest snapshot: its cost by the store's one rule of time, its team "
        "from a mapping file, its idle cost and GPU utilization.",
        epilog=_EPILOG,
    )
    showback.add_argument(
        "--store",
        required=True,
        metavar="STORE",
        help="the history store: a folder or s3://bucket/prefix",
    )
    showback.add_argument(
        "--window",
        type=duration,
        default=timedelta(days=7),
        metavar="DURATION",
        help="how far back from the newest snapshot (default: 7d)",
    )
    showback.add_argument(
        "--by",
        choices=("hour", "day"),
        default="hour",
        help="one row per pod per UTC hour or day (default: %(default)s)",
    )
    showback.add_argument(
        "--teams",
        metavar="FILE",
        help="a TOML team mapping: cluster and pod-name globs to a team, the first "
        "matching rule wins (default: every pod 'unallocated')",
    )
    showback.add_argument(
        "--format",
        choices=("focus", "csv", "parquet"),
        default="focus",
        help="FOCUS 1.2 columns, or showback's own as CSV or Parquet (default: %(default)s)",
    )
    showback.add_argument("-o", "--output", required=True, metavar="FILE", help="the file to write")
    showback.add_argument(
        "--force", action="store_true", help="replace FILE if it exists (default: refuse)"
    )
    # Showback's waste classes read every threshold: the registry's flags, each of them.
    add_rule_options(showback)
    showback.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ccanalytics.errors import StoreError
    from ccanalytics.history import export_showback

    try:
        result = export_showback(
            args.store,
            args.output,
            fmt=args.format,
            since=args.window,
            by=args.by,
            teams=args.teams,
            force=args.force,
            params=rule_params(args),
        )
    except StoreError as err:  # the store failed: 1, as check and report say it
        print(f"ccanalytics export: {' '.join(str(err).split())}", file=sys.stderr)
        return EXIT_FAILURE
    print(result)
    return EXIT_OK

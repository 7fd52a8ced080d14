"""``ccanalytics report``: a self-contained HTML report, and optionally the frames as CSV."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ccanalytics.cli._check import parse_duration
from ccanalytics.cli._common import EXIT_FAILURE, EXIT_OK, Formatter, add_api_options, api_client


def add_parser(sub: Any) -> None:
    report = sub.add_parser(
        "report",
        help="write a self-contained HTML report: cost, idle spend, stragglers",
        formatter_class=Formatter,
        epilog="Example:\n  ccanalytics report --sandbox --output report.html --csv frames/\n"
        "  ccanalytics report cl-a cl-b --output report.html --store /data/cc --window 24h",
    )
    report.add_argument(
        "cluster_ids",
        nargs="*",
        metavar="CLUSTER_ID",
        help="clusters to report on (with --sandbox and none: every sandbox cluster)",
    )
    report.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file")
    report.add_argument("--csv", metavar="DIR", help="also write the frames as CSV files to DIR")
    report.add_argument(
        "--store", metavar="DIR", help="a history store: open with the window it covers"
    )
    report.add_argument(
        "--window",
        type=parse_duration,
        metavar="DURATION",
        help="with --store: how far back from the newest snapshot (default: 24h)",
    )
    add_api_options(report)
    report.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ccanalytics.errors import StoreError
    from ccanalytics.report import write_report

    if args.window is not None and args.store is None:
        raise ValueError("--window needs --store")
    with api_client(args) as (client, default_ids):
        cluster_ids = args.cluster_ids or default_ids
        if not cluster_ids:
            raise ValueError("name at least one CLUSTER_ID (or use --sandbox)")
        try:
            summary = write_report(
                cluster_ids,
                args.output,
                client=client,
                csv_dir=args.csv,
                store=args.store,
                window=args.window,
            )
        except StoreError as err:  # the store failed, like the API failing: 1
            print(f"ccanalytics report: {' '.join(str(err).split())}", file=sys.stderr)
            return EXIT_FAILURE
    print(summary, file=sys.stderr if args.output == "-" else sys.stdout)
    return EXIT_OK

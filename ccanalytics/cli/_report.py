"""``ccanalytics report``: a self-contained HTML report, and optionally the frames as CSV.

Exit status, for cron: 0 the report was written; 1 a cluster could not be loaded
(without ``--keep-going`` nothing was written; with it the report was written for the
others, with a "Could not load" section) or the API failed; 2 bad usage or an output
that cannot be written (checked before anything is loaded).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import sys
from typing import Any

from ccanalytics.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    Formatter,
    add_api_options,
    add_rule_options,
    api_client,
    cluster_id,
    cluster_ids_of,
    duration,
    non_negative_int,
    rule_params,
)

_EPILOG = """\
Example:
  ccanalytics report --sandbox --output report.html --csv frames/
  ccanalytics report cl-a cl-b -o /var/www/fleet.html --keep-going --idle-threshold 5
  ccanalytics report cl-a cl-b -o fleet.html --store /data/cc --window 24h"""


# MAX_RANK_PLOTS copied so that ``--help`` imports no pandas (a test checks it matches
# report.MAX_RANK_PLOTS); the thresholds' defaults come from ccanalytics.measures (light).
MAX_RANK_PLOTS = 3


def add_parser(sub: Any) -> None:
    report = sub.add_parser(
        "report",
        help="write a self-contained HTML report: cost, idle spend, stragglers",
        formatter_class=Formatter,
        epilog=_EPILOG,
    )
    report.add_argument(
        "cluster_ids",
        nargs="*",
        metavar="CLUSTER_ID",
        type=cluster_id,
        help="clusters to report on (with --sandbox and none: every sandbox cluster)",
    )
    report.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="the HTML file (a symlink is followed; '-' for standard output)",
    )
    report.add_argument("--csv", metavar="DIR", help="also write the frames as CSV files to DIR")
    report.add_argument(
        "--store",
        metavar="STORE",
        help="a history store (a folder or s3://bucket/prefix): open with the window it covers",
    )
    report.add_argument(
        "--window",
        type=duration,
        metavar="DURATION",
        help="with --store: how far back from the newest snapshot (default: 24h)",
    )
    report.add_argument(
        "--policy",
        metavar="FILE",
        help="with --store: open with the budget status of this check policy (TOML)",
    )
    report.add_argument(
        "--keep-going",
        action="store_true",
        help="write the report for the clusters that loaded when others fail (exit 1)",
    )
    report.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only errors: no progress bars (shown on stderr when it is a terminal) "
        "and no summary",
    )
    report.add_argument(
        "--max-rank-plots",
        type=non_negative_int,
        default=MAX_RANK_PLOTS,
        metavar="N",
        help="clusters drawn rank by rank at most, those with findings first "
        "(default: %(default)s)",
    )
    add_rule_options(report)
    add_api_options(report)
    # No cluster named is only an error without --sandbox (which then means every one).
    report.set_defaults(func=run, spellings={"cluster_ids": "CLUSTER_ID (or use --sandbox)"})


def run(args: argparse.Namespace) -> int:
    from ccanalytics.errors import FleetLoadError, StoreError
    from ccanalytics.report import ReportLoadError, write_report

    # At exit, before the interpreter's finalization: every object left frozen, so the
    # collections of that finalization skip them (refcounting still frees them). They
    # would walk every object of pandas, pyarrow and matplotlib again and again: 0.3-0.6 s
    # of a report's 6 s, measured on 2 busy cores. Registered once per process.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)

    from ccanalytics.report import check_report_arguments

    cluster_ids = cluster_ids_of(args)
    # Refused (2) before a client opens: a policy needs a store, a bad policy, no clusters.
    policy = check_report_arguments(
        cluster_ids, store=args.store, window=args.window, policy=args.policy
    )
    with api_client(args) as client:
        try:
            summary = write_report(
                cluster_ids,
                args.output,
                client=client,
                csv_dir=args.csv,
                errors="collect" if args.keep_going else "raise",
                params=rule_params(args),
                max_rank_plots=args.max_rank_plots,
                store=args.store,
                window=args.window,
                policy=policy,
                # Progress is for a person watching: never in cron (no terminal) or a pipe.
                progress=sys.stderr.isatty() and not args.quiet,
            )
        except StoreError as err:  # the store failed, like the API failing: 1
            _fail(" ".join(str(err).split()))
            return EXIT_FAILURE
        except FleetLoadError as err:
            _fail(
                f"{_clusters_failed(err.errors, len(cluster_ids))}; no report written "
                "(--keep-going writes one for the others)"
            )
            return EXIT_FAILURE
        except ReportLoadError as err:
            _fail(f"{_clusters_failed(err.errors, len(cluster_ids))}; no report written")
            return EXIT_FAILURE
    if not args.quiet:
        print(summary, file=sys.stderr if args.output == "-" else sys.stdout)
    if summary.errors:
        _fail(f"{_clusters_failed(summary.errors, len(cluster_ids))}; the report covers the others")
        return EXIT_FAILURE
    return EXIT_OK


def _clusters_failed(errors: dict[str, Any], asked: int) -> str:
    reasons = "; ".join(f"{cid}: {' '.join(str(why).split())}" for cid, why in errors.items())
    return f"{len(errors)} of {asked} clusters could not be loaded ({reasons})"


def _fail(message: str) -> None:
    print(f"ccanalytics report: {message}", file=sys.stderr)

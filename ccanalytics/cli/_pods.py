"""``ccanalytics pods``: one or more clusters' pods as a table, CSV, JSON or Parquet."""

from __future__ import annotations

import argparse
from typing import Any

from ccanalytics.cli._common import (
    EXIT_OK,
    FORMATS,
    Formatter,
    add_api_options,
    add_output_options,
    api_client,
)


def add_parser(sub: Any) -> None:
    pods = sub.add_parser(
        "pods",
        help="list the pods of one or more clusters as a table, CSV, JSON or Parquet",
        formatter_class=Formatter,
        epilog="Example:\n  ccanalytics pods cl-llama70b-train --sandbox --format csv -o pods.csv",
    )
    pods.add_argument("cluster_ids", nargs="+", metavar="CLUSTER_ID")
    add_output_options(pods, FORMATS)
    add_api_options(pods)
    pods.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ccanalytics.cli._output import write_frame
    from ccanalytics.frames import load_cluster_pods

    with api_client(args) as (client, _):
        frame = load_cluster_pods(args.cluster_ids, client=client, progress=False)
    write_frame(frame, args.format, args.output)
    return EXIT_OK

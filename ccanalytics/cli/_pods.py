"""``ccanalytics pods``: one or more clusters' pods as a table, CSV, JSON or Parquet.

The table shows a readable set of columns (``TABLE_COLUMNS``); files for programs
(CSV, JSON, Parquet) keep every column. ``--columns`` chooses for any format.
"""

from __future__ import annotations

import argparse
from typing import Any

from ccanalytics.cli._common import (
    EXIT_OK,
    FORMATS,
    Formatter,
    add_api_options,
    add_output_options,
    add_quiet_option,
    api_client,
    cluster_id,
    output_format,
    shows_progress,
)

__all__ = ["TABLE_COLUMNS", "add_parser", "column_list", "run"]

#: The table's columns unless ``--columns`` says otherwise: who, what, how busy, what cost.
TABLE_COLUMNS = (
    "cluster_id",
    "name",
    "status",
    "rank",
    "gpu_type",
    "gpu_count",
    "gpu_util_mean",
    "cost",
    "uptime_s",
)


def _known_columns() -> list[str]:
    from ccanalytics.frames import POD_COLUMNS

    return [*POD_COLUMNS, "observed_at"]


def column_list(text: str) -> list[str] | None:
    """``--columns a,b,c`` (checked against the pods frame's columns) or ``all`` (None)."""
    if text.strip().lower() == "all":
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError("name at least one column, or 'all'")
    known = _known_columns()
    unknown = [name for name in names if name not in known]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"no column {', '.join(map(repr, unknown))}; the columns are: {','.join(known)}"
        )
    return list(dict.fromkeys(names))


def add_parser(sub: Any) -> None:
    pods = sub.add_parser(
        "pods",
        help="list the pods of one or more clusters as a table, CSV, JSON or Parquet",
        formatter_class=Formatter,
        epilog="Example:\n"
        "  ccanalytics pods cl-llama70b-train --sandbox -o pods.csv\n"
        "  ccanalytics pods cl-infer-prod --sandbox --columns name,gpu_util_max,cost",
    )
    pods.add_argument("cluster_ids", nargs="+", metavar="CLUSTER_ID", type=cluster_id)
    add_output_options(pods, FORMATS)
    pods.add_argument(
        "--columns",
        type=column_list,
        metavar="A,B,C",
        help="columns to show, or 'all' (default: a readable set for the table: "
        + ",".join(TABLE_COLUMNS)
        + "; every column in files)",
    )
    add_quiet_option(pods, "progress bar of a multi-cluster load")
    pods.add_argument(
        "--no-progress", dest="quiet", action="store_true", help="the same as --quiet"
    )
    add_api_options(pods)
    pods.set_defaults(func=run, columns=False)


def run(args: argparse.Namespace) -> int:
    fmt = output_format(args.format, args.output)  # before loading: fail fast
    from ccanalytics.cli._output import write_frame
    from ccanalytics.frames import load_cluster_pods

    progress = shows_progress(args)
    with api_client(args) as client:
        frame = load_cluster_pods(args.cluster_ids, client=client, progress=progress)
    columns = args.columns
    if columns is False:  # not given: readable for people, everything for programs
        columns = list(TABLE_COLUMNS) if fmt == "table" else None
    if columns is not None:
        frame = frame[[name for name in columns if name in frame.columns]]
    write_frame(frame, fmt, args.output)
    return EXIT_OK

"""The ``ccanalytics`` command: thin wrappers over the library, for cron and shells.

Each command reads its arguments, calls one library function, prints, and turns
library errors into a one-line message on stderr with a non-zero exit status:

- 0: success;
- 1: the API or the network failed (cron should alert), or ``--strict`` warnings;
- 2: bad usage or bad input (argparse's convention; also key-audit errors).

Heavy modules are imported inside the commands, so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

FORMATS = ("table", "csv", "json", "parquet")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    pass


def _add_api_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by every command that talks to the API."""
    group = parser.add_argument_group("API")
    group.add_argument(
        "--sandbox",
        action="store_true",
        help="run against the embedded sandbox instead of CCANALYTICS_BASE_URL",
    )
    group.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS", help="per-request timeout"
    )


def _add_output_options(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    """``--format`` and ``--output``, the same everywhere."""
    parser.add_argument(
        "--format", choices=formats, default="table", help="output format (default: table)"
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE instead of standard output"
    )


def _client_options(args: argparse.Namespace) -> dict[str, Any]:
    return {} if args.timeout is None else {"timeout": args.timeout}


def _cmd_pods(args: argparse.Namespace) -> int:
    from ccanalytics._loader import load_cluster_pods
    from ccanalytics._output import write_frame

    with _api_client(args) as (client, _):
        frame = load_cluster_pods(args.cluster_ids, client=client, progress=False)
    write_frame(frame, args.format, args.output)
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from ccanalytics.report import write_report

    with _api_client(args) as (client, default_ids):
        cluster_ids = args.cluster_ids or default_ids
        if not cluster_ids:
            raise ValueError("name at least one CLUSTER_ID (or use --sandbox)")
        summary = write_report(cluster_ids, args.output, client=client, csv_dir=args.csv)
    print(summary, file=sys.stderr if args.output == "-" else sys.stdout)
    return EXIT_OK


def _cmd_sandbox(args: argparse.Namespace) -> int:
    from ccanalytics.sandbox import serve

    rate_limits = None
    if args.quota is not None:
        rate_limits = {"minute": (args.quota, args.window)}
    serve(
        port=args.port,
        host=args.host,
        **({"rate_limits": rate_limits} if rate_limits else {}),
        latency=args.latency,
    )
    return EXIT_OK


@contextlib.contextmanager
def _api_client(args: argparse.Namespace) -> Iterator[tuple[Any, list[str]]]:
    """The client the command should use, and the clusters to use when none are named."""
    from ccanalytics._client import Client

    options = _client_options(args)
    if args.sandbox:
        from ccanalytics.sandbox import FULL_ACCESS_KEY, IN_PROCESS_URL, SandboxTransport

        transport = SandboxTransport()
        client = Client(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=transport, **options)
        default_ids = sorted(transport.app.data.clusters)
    else:
        client, default_ids = Client(**options), []
    with client:
        yield client, default_ids


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (also used by the docs and tests)."""
    parser = argparse.ArgumentParser(
        prog="ccanalytics",
        formatter_class=_Formatter,
        description="GPU cluster utilization and cost, and SSH-key hygiene, "
        "for the Cloud Compute API v2.",
        epilog="Configure with CCANALYTICS_API_KEY and CCANALYTICS_BASE_URL, "
        "or add --sandbox to use the embedded sandbox.\n\n"
        "Example:\n  ccanalytics report --sandbox --output report.html",
    )
    parser.add_argument("--version", action="version", version="%(prog)s 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    pods = sub.add_parser(
        "pods",
        help="list the pods of one or more clusters as a table, CSV, JSON or Parquet",
        formatter_class=_Formatter,
        epilog="Example:\n  ccanalytics pods cl-llama70b-train --sandbox --format csv -o pods.csv",
    )
    pods.add_argument("cluster_ids", nargs="+", metavar="CLUSTER_ID")
    _add_output_options(pods, FORMATS)
    _add_api_options(pods)
    pods.set_defaults(func=_cmd_pods)

    report = sub.add_parser(
        "report",
        help="write a self-contained HTML report: cost, idle spend, stragglers",
        formatter_class=_Formatter,
        epilog="Example:\n  ccanalytics report --sandbox --output report.html --csv frames/",
    )
    report.add_argument(
        "cluster_ids",
        nargs="*",
        metavar="CLUSTER_ID",
        help="clusters to report on (with --sandbox and none: every sandbox cluster)",
    )
    report.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file")
    report.add_argument("--csv", metavar="DIR", help="also write the frames as CSV files to DIR")
    _add_api_options(report)
    report.set_defaults(func=_cmd_report)

    from ccanalytics import _keys_cli

    _keys_cli.add_parser(sub)

    sandbox = sub.add_parser(
        "sandbox",
        help="serve the embedded sandbox API over loopback HTTP",
        formatter_class=_Formatter,
        epilog="Example:\n  ccanalytics sandbox --port 8765\n"
        "  CCANALYTICS_BASE_URL=http://127.0.0.1:8765 "
        "CCANALYTICS_API_KEY=sbx-full-access-key ccanalytics pods cl-infer-prod",
    )
    sandbox.add_argument("--port", type=int, default=8765, help="TCP port (0: any free port)")
    sandbox.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    sandbox.add_argument("--quota", type=int, help="requests per --window (default: generous)")
    sandbox.add_argument("--window", type=float, default=60.0, help="window length in seconds")
    sandbox.add_argument("--latency", type=float, default=0.0, help="seconds added to each answer")
    sandbox.set_defaults(func=_cmd_sandbox)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ccanalytics`` and ``python -m ccanalytics``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    from ccanalytics.errors import (
        ApiConnectionError,
        ApiError,
        CCAnalyticsError,
        FleetLoadError,
    )

    try:
        return func(args)
    except (ApiError, ApiConnectionError, FleetLoadError) as err:  # the API failed: 1
        print(f"ccanalytics {args.command}: {_one_line(err)}", file=sys.stderr)
        return EXIT_FAILURE
    except (CCAnalyticsError, ValueError, OSError) as err:
        print(f"ccanalytics {args.command}: {_one_line(err)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"ccanalytics {args.command}: interrupted", file=sys.stderr)
        return 130


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text


if __name__ == "__main__":
    sys.exit(main())

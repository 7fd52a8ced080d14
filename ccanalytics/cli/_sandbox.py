"""``ccanalytics sandbox``: serve the embedded sandbox API over loopback HTTP."""

from __future__ import annotations

import argparse
from typing import Any

from ccanalytics.cli._common import (
    EXIT_OK,
    Formatter,
    UsageError,
    non_negative_seconds,
    port_number,
    positive_int,
    positive_seconds,
)


def add_parser(sub: Any) -> None:
    sandbox = sub.add_parser(
        "sandbox",
        help="serve the embedded sandbox API over loopback HTTP",
        formatter_class=Formatter,
        epilog="Example:\n  ccanalytics sandbox --port 8765\n"
        "  CCANALYTICS_BASE_URL=http://127.0.0.1:8765 "
        "CCANALYTICS_API_KEY=sbx-full-access-key ccanalytics pods cl-infer-prod",
    )
    sandbox.add_argument(
        "--port", type=port_number, default=8765, help="TCP port, 0-65535 (0: any free port)"
    )
    sandbox.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    sandbox.add_argument(
        "--quota", type=positive_int, help="requests per --window (default: generous)"
    )
    sandbox.add_argument(
        "--window", type=positive_seconds, metavar="SECONDS", help="quota window length"
    )
    sandbox.add_argument(
        "--latency",
        type=non_negative_seconds,
        default=0.0,
        metavar="SECONDS",
        help="seconds added to each answer",
    )
    sandbox.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ccanalytics.sandbox import serve

    if (args.quota is None) != (args.window is None):
        raise UsageError("--quota and --window go together: --quota N --window SECONDS")
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

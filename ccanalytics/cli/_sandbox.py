"""``ccanalytics sandbox``: serve the embedded sandbox API over loopback HTTP."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
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

#: Where ``--speed`` alone starts the simulated clock, for the help only: the sandbox's
#: DEFAULT_START, spelled here so that ``--help`` imports no sandbox (a test checks).
_DEFAULT_SIMULATED_START = "2026-11-02T00:00Z"


def _utc_instant(text: str) -> datetime:
    """An ISO 8601 instant; one without an offset is read as UTC."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time: {text!r} (e.g. 2026-11-02T00:00Z)"
        ) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _speed(text: str) -> float:
    """Simulated seconds per real second: a positive number."""
    try:
        speed = float(text)
    except ValueError:
        speed = float("nan")
    if not 0 < speed < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text!r}")
    return speed


def add_parser(sub: Any) -> None:
    sandbox = sub.add_parser(
        "sandbox",
        help="serve the embedded sandbox API over loopback HTTP",
        formatter_class=Formatter,
        epilog="Example:\n  ccanalytics sandbox --port 8765\n"
        "  CCANALYTICS_BASE_URL=http://127.0.0.1:8765 "
        "CCANALYTICS_API_KEY=sbx-full-access-key ccanalytics pods cl-infer-prod\n\n"
        "A fleet that lives in time (one real second is sixty simulated seconds,\n"
        "so a simulated day passes in 24 minutes; responses carry its Date):\n"
        "  ccanalytics sandbox --simulated-start 2026-11-02T00:00Z --speed 60",
    )
    sandbox.add_argument(
        "--port", type=port_number, default=8765, help="TCP port, 0-65535 (0: any free port)"
    )
    sandbox.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    sandbox.add_argument(
        "--quota", type=positive_int, help="requests per --quota-window (default: generous)"
    )
    sandbox.add_argument(
        "--quota-window",
        type=positive_seconds,
        metavar="SECONDS",
        help="the rate-limit window's length",
    )
    # The old spelling: "window" is a history span in every other command.
    sandbox.add_argument(
        "--window",
        dest="old_window",
        type=positive_seconds,
        metavar="SECONDS",
        help=argparse.SUPPRESS,
    )
    sandbox.add_argument(
        "--latency",
        type=non_negative_seconds,
        default=0.0,
        metavar="SECONDS",
        help="seconds added to each answer",
    )
    clock = sandbox.add_argument_group("simulated clock (the timeline fleet)")
    clock.add_argument(
        "--simulated-start",
        type=_utc_instant,
        metavar="TIME",
        help=f"run on a simulated clock starting at TIME (ISO 8601, UTC unless an offset "
        f"is given; with --speed alone: {_DEFAULT_SIMULATED_START})",
    )
    clock.add_argument(
        "--speed",
        type=_speed,
        metavar="X",
        help="simulated seconds per real second (default 60 with --simulated-start)",
    )
    clock.add_argument("--seed", type=int, default=0, help="the timeline's seed (default 0)")
    sandbox.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ccanalytics.sandbox import serve, simulated_clock

    window = args.quota_window
    if args.old_window is not None:
        print(
            "ccanalytics sandbox: --window is now --quota-window "
            "(the old spelling goes in the next release)",
            file=sys.stderr,
        )
        window = args.old_window if window is None else window
    if (args.quota is None) != (window is None):
        raise UsageError("--quota and --quota-window go together: --quota N --quota-window SECONDS")
    options: dict[str, Any] = {"latency": args.latency}
    if args.quota is not None:
        options["rate_limits"] = {"minute": (args.quota, window)}
    clock = simulated_clock(args.simulated_start, args.speed)
    if clock is not None:
        options["clock"] = clock
        options["seed"] = args.seed
    serve(port=args.port, host=args.host, **options)
    return EXIT_OK

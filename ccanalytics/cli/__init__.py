"""The ``ccanalytics`` command: thin wrappers over the library, for cron and shells.

Each command reads its arguments, calls one library function, prints, and turns
library errors into a one-line message on stderr with a non-zero exit status:

- 0: success;
- 1: the API or the network failed (cron should alert), or ``--strict`` warnings;
- 2: bad usage or bad input (argparse's convention; also key-audit errors): a
  wrong argument is one line on stderr, checked before anything runs;
- 3: ``check`` found a threshold breached.

One module per command (``_pods``, ``_report``, ``_collect``, ``_check``, ``_sandbox``;
``audit-keys`` lives with the key audit in :mod:`ccanalytics.keys._cli`), each with
``add_parser`` and ``run``;
``_common`` holds the shared options and exit codes. This is the top layer: it may
import every other subpackage, and nothing imports it. Heavy modules are imported
inside the commands, so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ccanalytics.cli import _check, _collect, _pods, _report, _sandbox
from ccanalytics.cli._common import EXIT_FAILURE, EXIT_USAGE, Formatter, Parser

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (also used by the docs and tests)."""
    parser = Parser(
        prog="ccanalytics",
        formatter_class=Formatter,
        description="GPU cluster utilization and cost, and SSH-key hygiene, "
        "for the Cloud Compute API v2.",
        epilog="Configure with CCANALYTICS_API_KEY and CCANALYTICS_BASE_URL, "
        "or add --sandbox to use the embedded sandbox.\n\n"
        "Example:\n  ccanalytics report --sandbox --output report.html",
    )
    parser.add_argument("--version", action="version", version="%(prog)s 0.1.0")
    sub: Any = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _pods.add_parser(sub)
    _report.add_parser(sub)
    _collect.add_parser(sub)

    from ccanalytics.keys import _cli as _keys_cli

    _keys_cli.add_parser(sub)
    _check.add_parser(sub)
    _sandbox.add_parser(sub)
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
    except FleetLoadError as err:  # some clusters failed: 1, in words for a shell user
        print(f"ccanalytics {args.command}: {_one_line(err.describe())}", file=sys.stderr)
        return EXIT_FAILURE
    except (ApiError, ApiConnectionError) as err:  # the API failed: 1
        print(f"ccanalytics {args.command}: {_one_line(err)}", file=sys.stderr)
        return EXIT_FAILURE
    except (CCAnalyticsError, ValueError, OSError) as err:
        print(f"ccanalytics {args.command}: {_one_line(err)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"ccanalytics {args.command}: interrupted", file=sys.stderr)
        return 130


def _one_line(err: BaseException | str) -> str:
    return " ".join(str(err).split()) or type(err).__name__

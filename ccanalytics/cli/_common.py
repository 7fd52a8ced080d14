"""What every command shares: exit codes, option sets, the client to use."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = [
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "FORMATS",
    "Formatter",
    "add_api_options",
    "add_output_options",
    "api_client",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

FORMATS = ("table", "csv", "json", "parquet")


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the ``Example:`` epilogs as written."""


def add_api_options(parser: argparse.ArgumentParser) -> None:
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


def add_output_options(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    """``--format`` and ``--output``, the same everywhere."""
    parser.add_argument(
        "--format", choices=formats, default="table", help="output format (default: table)"
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE instead of standard output"
    )


def _client_options(args: argparse.Namespace) -> dict[str, Any]:
    return {} if args.timeout is None else {"timeout": args.timeout}


@contextlib.contextmanager
def api_client(args: argparse.Namespace) -> Iterator[tuple[Any, list[str]]]:
    """The client the command should use, and the clusters to use when none are named."""
    from ccanalytics.api import Client

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

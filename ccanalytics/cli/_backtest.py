"""``ccanalytics history backtest``: idle rules replayed over a store, side by side.

``--idle-for 30m,2h --idle-threshold 1,10`` gives every pair of the two lists as a rule
(four here: 30m at 1 %, 30m at 10 %, 2h at 1 %, 2h at 10 %), each a
:class:`~ccanalytics.history.IdleRule`; History.backtest judges them (a rule finer than
the snapshots, a negative threshold: its one-line ArgumentsError, exit 2). The command
is one of ``history``'s (:mod:`ccanalytics.cli._history` adds these options to it).
"""

from __future__ import annotations

import argparse
from typing import Any

from ccanalytics.cli._common import duration, non_negative_number

__all__ = ["SPELLINGS", "add_arguments", "keywords"]

#: How the library's parameters read in this command's errors (``--idle-for 10m is ...``).
SPELLINGS = {
    "idle_for": "--idle-for ",
    "idle_threshold": "--idle-threshold ",
    "memory_threshold": "--memory-threshold ",
    "rules": "--idle-for/--idle-threshold: ",
    "regret": "--regret ",
}


def _list(kind: Any) -> Any:
    """A comma-separated list of ``kind`` values (``30m,2h``)."""

    def parse(text: str) -> list[Any]:
        words = [word.strip() for word in text.split(",")]
        if not all(words):
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, not {text!r}")
        return [kind(word) for word in words]

    return parse


def _threshold(text: str) -> float:
    # Negative thresholds are the library's to refuse (one rule, one message), so any
    # number parses here.
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage, not {text}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The rules' options and ``--regret``."""
    parser.add_argument(
        "--idle-for",
        type=_list(duration),
        required=True,
        metavar="DURATION[,DURATION...]",
        help="stop a pod idle this long (each one with each --idle-threshold is a rule)",
    )
    parser.add_argument(
        "--idle-threshold",
        type=_list(_threshold),
        required=True,
        metavar="PERCENT[,PERCENT...]",
        help="a pod whose busiest GPU is below this is idle",
    )
    parser.add_argument(
        "--memory-threshold",
        type=non_negative_number,
        metavar="PERCENT",
        help="a stop also needs the fullest GPU's memory below this (default: no line)",
    )
    parser.add_argument(
        "--regret",
        type=duration,
        metavar="DURATION",
        help="a stop followed by work within this long is a false stop (default: 1h)",
    )
    parser.set_defaults(spellings=SPELLINGS)


def keywords(args: argparse.Namespace) -> dict[str, Any]:
    """``rules=`` (every pair of the lists, in order) and ``regret=`` when given."""
    from ccanalytics.history import IdleRule

    rules = [
        IdleRule(span, threshold, memory_threshold=args.memory_threshold)
        for span in args.idle_for
        for threshold in args.idle_threshold
    ]
    given: dict[str, Any] = {"rules": rules}
    if args.regret is not None:
        given["regret"] = args.regret
    return given

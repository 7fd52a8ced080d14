"""Every command's exit statuses, written once: its ``--help`` and the README print them.

One number means one thing across the commands (0 done, 1 the API, the network or the
store failed, 2 bad usage or bad input), and a command that finds something to report
says so with a number of its own: ``check`` 3 and 4, ``audit-keys`` 5, so a script
can tell a finding from a typo. :func:`summary` says them all in one sentence, for the
top-level ``--help`` and the README (``docs/generate.py`` writes it there).
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Final

from ccanalytics.cli._common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE

__all__ = [
    "EXIT_BREACHED",
    "EXIT_KEY_ERRORS",
    "EXIT_SNOOZED",
    "EXIT_STATUSES",
    "add_exit_statuses",
    "exit_epilog",
    "summary",
]

EXIT_BREACHED: Final = 3
#: Breached, but every breach belongs to a snoozed rule: cron stays quiet, a script can tell.
EXIT_SNOOZED: Final = 4
#: A key the API or sshd would refuse: a finding, not a usage error (which is 2).
EXIT_KEY_ERRORS: Final = 5

_USAGE = "bad usage"
#: Every command's status 1 ends so: a failure that is not the user's is 1, never 2.
_OTHER = ", or anything else failed (its cause in one line)"

#: Command -> (status, what it means), in the order of the statuses.
EXIT_STATUSES: Final[dict[str, tuple[tuple[int, str], ...]]] = {
    "pods": (
        (EXIT_OK, "the table or file was written"),
        (EXIT_FAILURE, "the API or the network failed, or a cluster could not be loaded" + _OTHER),
        (EXIT_USAGE, f"{_USAGE}, or an output that cannot be written"),
    ),
    "report": (
        (EXIT_OK, "the report was written"),
        (
            EXIT_FAILURE,
            "a cluster could not be loaded or the API failed: nothing written, or with "
            "--keep-going the report was written for the clusters that loaded" + _OTHER,
        ),
        (
            EXIT_USAGE,
            f"{_USAGE}, or the output cannot be written (checked before loading anything)",
        ),
    ),
    "collect": (
        (EXIT_OK, "every snapshot complete"),
        (
            EXIT_FAILURE,
            "a cluster or the store failed in some snapshot, or a compaction failed" + _OTHER,
        ),
        (EXIT_USAGE, f"{_USAGE}, or a schedule over the rate-limit budget (nothing written)"),
    ),
    "audit-keys": (
        (EXIT_OK, "every key is fine"),
        (EXIT_FAILURE, "warnings (with --strict only)" + _OTHER),
        (EXIT_USAGE, f"{_USAGE}, or a file that cannot be read (nothing audited)"),
        (EXIT_KEY_ERRORS, "a key has errors: the API or sshd would refuse it"),
    ),
    "check": (
        (EXIT_OK, "every threshold holds (a budget's warn_at warning is not a breach)"),
        (
            EXIT_FAILURE,
            "the store cannot be read or is empty, the alert state or the textfile cannot "
            "be saved, or a notification cannot be posted (the breaches still print: the "
            "alert reached no one)" + _OTHER,
        ),
        (
            EXIT_USAGE,
            f"{_USAGE}, or a bad policy, also a rule whose clusters match no cluster of the "
            "store (after the other rules are judged and sent; may_match_nothing = true "
            "accepts it)",
        ),
        (EXIT_BREACHED, "a threshold is breached (one sentence per breach on stdout)"),
        (EXIT_SNOOZED, "breached, but every breach snoozed"),
    ),
    "history": (
        (EXIT_OK, "the answer was written"),
        (EXIT_FAILURE, "the store cannot be read, or the path holds no store" + _OTHER),
        (
            EXIT_USAGE,
            f"{_USAGE}, an output file that exists (without --force), or parquet without a file",
        ),
    ),
    "export": (
        (EXIT_OK, "the file was written"),
        (EXIT_FAILURE, "the store cannot be read, or holds no snapshot" + _OTHER),
        (
            EXIT_USAGE,
            f"{_USAGE}, a bad --teams file, or an output that exists (without --force) or "
            "cannot be written: checked before the store is read",
        ),
    ),
    "measures": (
        (EXIT_OK, "the SQL was printed"),
        (EXIT_FAILURE, "anything failed (its cause in one line)"),
        (EXIT_USAGE, f"{_USAGE}, or a name that is no measure a History.measures answers"),
    ),
    "sandbox": (
        (EXIT_OK, "stopped (Ctrl-C)"),
        (EXIT_USAGE, f"{_USAGE}, or the port cannot be bound"),
    ),
}


def exit_epilog(command: str) -> str:
    """The ``exit status:`` block of ``command``'s ``--help``, one status a line."""
    lines = ["exit status:"]
    for code, meaning in EXIT_STATUSES[command]:
        lines.append(
            textwrap.fill(meaning, 78, initial_indent=f"  {code}  ", subsequent_indent="     ")
        )
    return "\n".join(lines)


def add_exit_statuses(parser: argparse.ArgumentParser) -> None:
    """End the ``--help`` of every command of ``parser`` (and of its subcommands, such
    as ``history idle-cost``) with the command's :func:`exit_epilog`."""
    for name, command in _subcommands(parser).items():
        for each in (command, *_subcommands(command).values()):
            each.epilog = "\n\n".join(filter(None, [each.epilog, exit_epilog(name)]))


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse has no public accessor for its subparsers
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


#: The statuses only some commands exit with, in a word or two each (EXIT_STATUSES says
#: which command exits with each, and what it means in full).
_FINDINGS: Final = {
    EXIT_BREACHED: "breached",
    EXIT_SNOOZED: "every breach snoozed",
    EXIT_KEY_ERRORS: "a key has errors",
}


def summary() -> str:
    """Every command's exit statuses in one sentence: the shared three, then the findings."""
    findings = "; ".join(
        f"{command}: " + ", ".join(f"{code} {_FINDINGS[code]}" for code in own)
        for command, statuses in EXIT_STATUSES.items()
        if (own := [code for code, _ in statuses if code in _FINDINGS])
    )
    return (
        f"Exit status: {EXIT_OK} success; {EXIT_FAILURE} the API, the network or the store "
        f"failed, or anything else failed (its cause in one line); {EXIT_USAGE} bad usage or "
        f"bad input (also no command); {findings}. Each command's --help says its own."
    )

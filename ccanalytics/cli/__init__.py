"""The ``ccanalytics`` command: thin wrappers over the library, for cron and shells.

Each command reads its arguments, calls one library function, prints, and turns
library errors into a one-line message on stderr with a non-zero exit status:

- 0: success;
- 1: the API, the network or the store failed (cron should alert), any other
  failure that is not the user's (its cause in one line, never a traceback), or
  ``--strict`` warnings;
- 2: bad usage or bad input, only what the user typed or named (argparse's
  convention; also a bad policy, team or key file): a wrong argument is one line on
  stderr, checked before anything runs;
- 3 and 4: ``check`` found a threshold breached (4: every breach snoozed); 5:
  ``audit-keys`` found a key with errors.

Each command's statuses are written once, in ``_exits``: its ``--help`` prints them, and
the top-level ``--help`` and the README their summary.

One module per command (``_pods``, ``_report``, ``_collect``, ``_check``, ``_history``
(one subcommand per History query), ``_export`` (with its ``showback``), ``_measures``
(``measures sql``), ``_sandbox``;
``audit-keys`` in ``_audit_keys``), each with
``add_parser`` and ``run``;
``_common`` holds the shared options and exit codes. This is the top layer: it may
import every other subpackage, and nothing imports it. Heavy modules are imported
inside the commands, so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from ccanalytics.cli import (
    _audit_keys,
    _check,
    _collect,
    _export,
    _history,
    _measures,
    _pods,
    _report,
    _sandbox,
)
from ccanalytics.cli._common import EXIT_FAILURE, EXIT_USAGE, Formatter, Parser, UsageError
from ccanalytics.cli._exits import add_exit_statuses, summary

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
        "Example:\n  ccanalytics report --sandbox --output report.html\n\n"
        + textwrap.fill(summary(), width=80),
    )
    parser.add_argument("--version", action="version", version="%(prog)s 0.1.0")
    sub: Any = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _pods.add_parser(sub)
    _report.add_parser(sub)
    _collect.add_parser(sub)

    _audit_keys.add_parser(sub)
    _check.add_parser(sub)
    _history.add_parser(sub)
    _export.add_parser(sub)
    _measures.add_parser(sub)
    _sandbox.add_parser(sub)
    add_exit_statuses(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``ccanalytics`` and ``python -m ccanalytics``; returns the exit status."""
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if not words:  # as git does: the commands, on stdout, and the status of bad usage
        parser.print_help()
        return EXIT_USAGE
    _refuse_unknown_options(parser, words)  # before argparse, whose first complaint may differ
    args = parser.parse_args(words)
    func: Callable[[argparse.Namespace], int] = args.func
    from ccanalytics.errors import (
        ApiConnectionError,
        ApiError,
        ArgumentsError,
        FleetLoadError,
        NotFoundError,
    )

    try:
        return func(args)
    except FleetLoadError as err:  # some clusters failed: 1, in words for a shell user
        missing = any(isinstance(e, NotFoundError) for e in err.errors.values())
        hint = _sandbox_hint(args) if missing else ""
        print(f"ccanalytics {args.command}: {_one_line(err.describe())}{hint}", file=sys.stderr)
        return EXIT_FAILURE
    except (ApiError, ApiConnectionError) as err:  # the API failed: 1
        hint = _sandbox_hint(args) if isinstance(err, NotFoundError) else ""
        print(f"ccanalytics {args.command}: {_one_line(err)}{hint}", file=sys.stderr)
        return EXIT_FAILURE
    except ArgumentsError as err:  # the library's rule, in the command's words: 2
        spelled = err.spelled(_spelling(parser, words, args))
        print(f"ccanalytics {args.command}: {_one_line(spelled)}", file=sys.stderr)
        return EXIT_USAGE
    except _usage_errors() as err:  # what the user typed, or a file they named: 2
        print(f"ccanalytics {args.command}: {_one_line(err)}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:  # anything else failed, not the user: 1, its cause in one line
        print(f"ccanalytics {args.command}: {_cause(err)}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print(f"ccanalytics {args.command}: interrupted", file=sys.stderr)
        return 130


def _usage_errors() -> tuple[type[Exception], ...]:
    """The errors that mean the user asked wrongly (exit 2), every other failure being 1.

    Arguments that do not go together, and the files and settings the user gave us to
    read (a policy, a team mapping, GPU types, keys, the configuration) or to write (an
    output that exists or has no folder). A plain ``ValueError`` or ``OSError`` from
    inside is not among them: it would blame the user for the library's failure.
    """
    from ccanalytics import errors

    return (
        UsageError,
        errors.ArgumentsError,
        errors.ConfigurationError,
        errors.ExportOutputError,
        errors.GpuTypesError,
        errors.InvalidSshKeysError,
        errors.KeyFileError,
        errors.KeyNormalizationError,
        errors.PolicyError,
        errors.ReportOutputError,
        errors.ScheduleError,
        errors.TeamsError,
    )


def _cause(err: Exception) -> str:
    """``err`` in one line; named by its type unless it is ours or the system's (whose
    message says what failed), since ``KeyError: 'x'`` means nothing as ``'x'``."""
    from ccanalytics.errors import CCAnalyticsError

    if isinstance(err, CCAnalyticsError | OSError):
        return _one_line(err)
    return f"{type(err).__name__}: {_one_line(err)}"


def _refuse_unknown_options(parser: argparse.ArgumentParser, words: list[str]) -> None:
    """Exit 2 naming a ``--long`` option the command does not have, with the closest one.

    argparse would report a missing required option first (``--outptu r.html`` reads as
    "--output is required"), or list every leftover word; a new user needs the typo.
    Abbreviations argparse accepts (``--out``) are left to it.
    """
    sub, rest = _command_parser(parser, words)
    if sub is parser:
        return
    options = [o for action in sub._actions for o in action.option_strings]
    for word in rest:
        if word == "--":
            return
        if not word.startswith("--"):
            continue
        name = word.split("=", 1)[0]
        if any(option.startswith(name) for option in options):
            continue  # the option itself, or an abbreviation argparse resolves
        # Compared without the dashes every long option shares, which would make any
        # two look alike.
        bare = {option.lstrip("-"): option for option in options if option.startswith("--")}
        close = difflib.get_close_matches(name.lstrip("-"), bare, n=1, cutoff=0.6)
        sub.error(f"unknown option {name}" + (f"; did you mean {bare[close[0]]}?" if close else ""))


def _command_parser(
    parser: argparse.ArgumentParser, words: list[str]
) -> tuple[argparse.ArgumentParser, list[str]]:
    """The parser of the (sub)command ``words`` name (``history idle-cost``: the nested
    one), and the words after its name."""
    rest = list(words)
    while True:
        command = next((w for w in rest if not w.startswith("-")), None)
        sub = _subparser(parser, command) if command is not None else None
        if command is None or sub is None:
            return parser, rest
        parser, rest = sub, rest[rest.index(command) + 1 :]


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:  # argparse has no public accessor for its subparsers
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser | None = action.choices.get(command)
            return found
    return None


def _spelling(
    parser: argparse.ArgumentParser, words: list[str], args: argparse.Namespace
) -> Callable[[str], str]:
    """How the command names a library parameter: its option (``--max-idle-cost``), or a
    positional's metavar (``CLUSTER_ID``), read from the parser itself; a command's
    ``spellings`` default adds words (``CLUSTER_ID (or use --sandbox)``)."""
    sub, _ = _command_parser(parser, words)
    named: dict[str, str] = {}
    for action in sub._actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        if longs:
            named.setdefault(action.dest, longs[0])
        elif not action.option_strings and isinstance(action.metavar, str):
            named.setdefault(action.dest, action.metavar)
    named |= getattr(args, "spellings", {})
    return lambda name: named.get(name, "--" + name.replace("_", "-"))


def _sandbox_hint(args: argparse.Namespace) -> str:
    """On ``--sandbox``, a cluster that does not exist: name the ones that do."""
    if not getattr(args, "sandbox", False):
        return ""
    from ccanalytics.sandbox import sandbox_cluster_ids

    return f"; the sandbox's clusters are {', '.join(sandbox_cluster_ids())}"


def _one_line(err: BaseException | str) -> str:
    return " ".join(str(err).split()) or type(err).__name__

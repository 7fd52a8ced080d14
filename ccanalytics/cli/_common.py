"""What every command shares: exit codes, option sets, argument types, the client to use.

Arguments are checked by argparse ``type=`` functions before a command runs, and a
wrong one is one line on stderr with exit status 2 (``Parser.error``), never a
traceback and never a value the library would reject later.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from typing import Any, NoReturn

from ccanalytics._durations import parse_duration

__all__ = [
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "FORMATS",
    "FORMAT_BY_EXTENSION",
    "Formatter",
    "Parser",
    "UsageError",
    "add_api_options",
    "add_output_options",
    "add_quiet_option",
    "api_client",
    "cluster_id",
    "cluster_ids_of",
    "duration",
    "fraction",
    "non_negative_float",
    "non_negative_int",
    "non_negative_seconds",
    "output_format",
    "percent",
    "period_limit",
    "port_number",
    "positive_int",
    "positive_seconds",
    "rule_params",
    "rules_given",
    "share_of_one",
    "shows_progress",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

FORMATS = ("table", "csv", "json", "parquet")


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the ``Example:`` epilogs as written."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line: ``PROG: what is wrong (...)``.

    Subcommand parsers are made with the class of their parent, so every command of
    ``ccanalytics`` reports a wrong argument the same way, with exit status 2.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see '{self.prog} --help')\n")


class UsageError(ValueError):
    """Arguments that are each valid but do not go together; exit status 2."""


# --------------------------------------------------------------------------- argument types


def _number(text: str, convert: Callable[[str], float], what: str) -> float:
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, not {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, not {text!r}")
    return value


def port_number(text: str) -> int:
    """A TCP port, 0 to 65535 (0: any free port)."""
    port = int(_number(text, int, "a port number"))
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {port}")
    return port


def positive_int(text: str) -> int:
    """A whole number of at least 1."""
    value = int(_number(text, int, "a whole number"))
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {value}")
    return value


def positive_seconds(text: str) -> float:
    """A duration in seconds, more than 0."""
    value = _number(text, float, "a number of seconds")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {text}")
    return value


def non_negative_float(text: str) -> float:
    """A number, 0 or more (an amount of USD, say)."""
    value = _number(text, float, "a number")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number, 0 or more, not {text}")
    return value


def non_negative_int(text: str) -> int:
    """A whole number, 0 or more."""
    value = int(_number(text, int, "a whole number"))
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number, 0 or more, not {value}")
    return value


def percent(text: str) -> float:
    """A percentage from 0 to 100."""
    value = _number(text, float, "a percentage")
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 100, not {text}")
    return value


def fraction(text: str) -> float:
    """A share above 0 and at most 1 (0.5: half)."""
    value = _number(text, float, "a fraction")
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction above 0, at most 1, not {text}")
    return value


def non_negative_number(text: str) -> float:
    """A number, 0 or more (a z-score, a gap in points)."""
    value = _number(text, float, "a number")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number, 0 or more, not {text}")
    return value


def share_of_one(text: str) -> float:
    """A share from 0 to 1."""
    value = _number(text, float, "a share")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a share from 0 to 1, not {text}")
    return value


#: The periods a budget is judged over.
PERIODS = ("day", "week", "month")


def period_limit(text: str) -> tuple[str, float]:
    """``PERIOD=USD``: a budget's limit for the UTC day, ISO week or month."""
    period, sep, usd = text.partition("=")
    if not sep or period.strip() not in PERIODS:
        raise argparse.ArgumentTypeError(
            f"expected PERIOD=USD with PERIOD one of {', '.join(PERIODS)}, not {text!r}"
        )
    return period.strip(), non_negative_float(usd.strip())


def add_rule_options(parser: argparse.ArgumentParser) -> None:
    """The rules' thresholds, one flag per registry entry
    (:data:`ccanalytics.measures.THRESHOLDS`), for every command that judges pods: each
    defaults to the library's, so the CLI and a notebook agree."""
    from ccanalytics.measures import THRESHOLDS

    group = parser.add_argument_group("rule thresholds (every figure is judged at these)")
    for entry in THRESHOLDS:
        group.add_argument(
            entry.flag,
            type=_in_unit(entry.unit),
            default=None,  # None: not given (the library's default applies)
            metavar=entry.unit.metavar,
            help=f"{entry.meaning} (default: {entry.default:g})".replace("%", "%%"),
        )


def _in_unit(unit: Any) -> Callable[[str], float]:
    """The argparse type of a threshold's flag: a number within its unit's bounds."""

    def parse(text: str) -> float:
        value = _number(text, float, "a number")
        if not unit.allows(value):
            raise argparse.ArgumentTypeError(f"expected {unit.expected}, not {text}")
        return value

    parse.__name__ = unit.name  # argparse names the type in its own messages
    return parse


def rules_given(args: argparse.Namespace) -> dict[str, float]:
    """The thresholds given on the command line, by Params name."""
    from ccanalytics.measures import THRESHOLDS

    return {t.name: value for t in THRESHOLDS if (value := getattr(args, t.policy_key)) is not None}


def rule_params(args: argparse.Namespace) -> Any:
    """The :class:`ccanalytics.measures.Params` of :func:`add_rule_options`' flags."""
    from ccanalytics.measures import Params

    return Params(**rules_given(args))


def cluster_id(text: str) -> str:
    """A cluster id; ``a,b`` is refused, since ids are separate arguments (``a b``)."""
    if "," in text:
        spaced = " ".join(part for part in text.split(",") if part)
        raise argparse.ArgumentTypeError(
            f"cluster ids are separated by spaces, not commas: {spaced}"
        )
    return text


def duration(text: str) -> timedelta:
    """A positive duration: ``30s``, ``5m``/``5min``, ``1h``, ``2d``, ``1w``, ``7 days`` or a
    sum like ``1h30m`` (:func:`~ccanalytics._durations.parse_duration`)."""
    try:
        return timedelta(seconds=parse_duration(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def non_negative_seconds(text: str) -> float:
    """A duration in seconds, 0 or more."""
    value = _number(text, float, "a number of seconds")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, 0 or more, not {text}")
    return value


def add_quiet_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``-q``/``--quiet``: no progress on stderr (``what`` says which); errors still print."""
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help=f"nothing on stderr but errors and warnings (no {what}); progress is shown "
        "only when stderr is a terminal anyway",
    )


def shows_progress(args: argparse.Namespace) -> bool:
    """Whether a command shows progress: on a terminal (never in cron), unless ``--quiet``."""
    return sys.stderr.isatty() and not getattr(args, "quiet", False)


def add_api_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by every command that talks to the API."""
    group = parser.add_argument_group("API")
    group.add_argument(
        "--sandbox",
        action="store_true",
        help="run against the embedded sandbox instead of CCANALYTICS_BASE_URL",
    )
    group.add_argument(
        "--timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="per-request timeout in seconds (above 0)",
    )


#: What ``-o FILE`` means without ``--format``, by the file's extension.
FORMAT_BY_EXTENSION = {
    ".csv": "csv",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".txt": "table",
    ".table": "table",
}


def add_output_options(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    """``--format`` and ``--output``, the same everywhere (see ``output_format``)."""
    extensions = ", ".join(f"{ext} {fmt}" for ext, fmt in FORMAT_BY_EXTENSION.items())
    parser.add_argument(
        "--format",
        choices=formats,
        default=None,
        help=f"output format (default: from the -o extension: {extensions}; else table)",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE instead of standard output"
    )


def output_format(fmt: str | None, output: str | None) -> str:
    """The format to write: ``--format`` if given, else the one ``-o``'s extension names.

    Raises ``UsageError`` for an extension that names no format (rather than, say,
    an aligned table in a ``.csv``), and for a missing directory, before anything loads.
    """
    if output is None or output == "-":
        return fmt or "table"
    directory = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(directory):
        raise UsageError(f"cannot write {output}: the directory {directory} does not exist")
    if fmt is not None:
        return fmt
    extension = os.path.splitext(output)[1].lower()
    if extension not in FORMAT_BY_EXTENSION:
        known = ", ".join(FORMAT_BY_EXTENSION)
        raise UsageError(
            f"cannot tell the format of {output} from its extension ({known});"
            " add --format table|csv|json|parquet"
        )
    return FORMAT_BY_EXTENSION[extension]


def _client_options(args: argparse.Namespace) -> dict[str, Any]:
    return {} if args.timeout is None else {"timeout": args.timeout}


@contextlib.contextmanager
def api_client(args: argparse.Namespace) -> Iterator[Any]:
    """The client the command should use: the sandbox's in process with ``--sandbox``."""
    options = _client_options(args)
    if args.sandbox:
        from ccanalytics.sandbox import in_process_client

        client = in_process_client(**options)
    else:
        from ccanalytics.api import Client

        _check_configuration()
        client = Client(**options)
    with client:
        yield client


def cluster_ids_of(args: argparse.Namespace) -> list[str]:
    """The clusters named, or with ``--sandbox`` and none named, every sandbox cluster."""
    if not args.sandbox:
        return list(args.cluster_ids)
    from ccanalytics.sandbox import sandbox_cluster_ids

    return sandbox_cluster_ids(args.cluster_ids)


def _check_configuration() -> None:
    """The library's "no API key" names ``api_key=``; a CLI user needs the CLI's ways."""
    from ccanalytics.api import API_KEY_ENV, BASE_URL_ENV
    from ccanalytics.errors import ConfigurationError

    if not os.environ.get(API_KEY_ENV):
        raise ConfigurationError(
            f"no API key: set {API_KEY_ENV} (and {BASE_URL_ENV}), or add --sandbox to"
            " run against the embedded sandbox"
        )
    if not os.environ.get(BASE_URL_ENV):
        raise ConfigurationError(
            f"no base URL: set {BASE_URL_ENV} (e.g. https://api.example.com), or add"
            " --sandbox to run against the embedded sandbox"
        )

"""``ccanalytics audit-keys``: check authorized_keys files before uploading them.

Reads each FILE (standard input for ``-`` or none), judges every entry with
``keys.audit_lines`` and prints an aligned table, CSV or JSON. Exit status: 0 when
every key is fine, 1 on warnings with ``--strict``, 2 on any error, including a
file that cannot be read (one line on stderr, never a traceback).

It imports neither pandas nor matplotlib (``tests/test_keys_cli.py`` checks), so a
20,000-line file is audited faster than ``ssh-keygen -lf`` fingerprints it; and
``add_parser`` imports nothing, so registering the command costs ``ccanalytics``
nothing at start-up.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # imported in run(): registering the command must stay free
    from ccanalytics.keys import AuditEntry

__all__ = ["EXIT_ERRORS", "EXIT_OK", "EXIT_WARNINGS", "add_parser", "main", "run"]

EXIT_OK = 0
EXIT_WARNINGS = 1  # only with --strict
EXIT_ERRORS = 2

_PROG = "ccanalytics audit-keys"
_HELP = "check SSH public keys (authorized_keys lines) before uploading them"
_DESCRIPTION = (
    "Check every entry of authorized_keys-style files twice: would the API accept\n"
    "the line (api_valid), and is the key one OpenSSH accepts (key_valid)? Also\n"
    "reports weak or deprecated keys, duplicates, options the API cannot store,\n"
    "CRLF line endings and pasted private keys (never printing them)."
)
_EPILOG = (
    "Example:\n"
    "  ccanalytics audit-keys ~/.ssh/authorized_keys\n"
    "  ccanalytics audit-keys --format json keys.txt > audit.json\n"
    "  cat ~/.ssh/id_ed25519.pub | ccanalytics audit-keys --strict -\n"
    "\n"
    "exit status: 0 every key is fine; 1 warnings (with --strict only);\n"
    "2 errors, or a file that cannot be read"
)
_COLUMNS = (
    "line_no",
    "status",
    "key_type",
    "bits",
    "fingerprint",
    "comment",
    "api_valid",
    "key_valid",
    "problems",
    "options",
)
# Control, bidirectional and invisible characters a comment could use to spoof a terminal.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)
_COMMENT_WIDTH = 32


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="authorized_keys-style files ('-' or none: standard input)",
    )
    parser.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="table for people (default), csv or json for programs",
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit with status 1 when any key has warnings"
    )


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``audit-keys`` on the ``ccanalytics`` command line (``args.func`` = ``run``)."""
    parser = subparsers.add_parser(
        "audit-keys",
        help=_HELP,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_arguments(parser)
    parser.set_defaults(func=run)


def _read(name: str) -> bytes:
    if name == "-":
        if sys.stdin.isatty():
            print(f"{_PROG}: reading keys from standard input (end with Ctrl-D)", file=sys.stderr)
        return sys.stdin.buffer.read()
    with open(name, "rb") as file:
        return file.read()


def run(args: argparse.Namespace) -> int:
    """Audit ``args.files`` and print the result; returns the exit status."""
    from ccanalytics.keys import audit_lines

    results: list[tuple[str, list[AuditEntry]]] = []
    unreadable = False
    for name in args.files or ["-"]:
        try:
            data = _read(name)
        except OSError as err:
            print(f"{_PROG}: cannot read {name}: {err.strerror or err}", file=sys.stderr)
            unreadable = True
            continue
        results.append((name, audit_lines(data)))
    writer = {"table": _write_table, "csv": _write_csv, "json": _write_json}[args.format]
    try:
        writer(sys.stdout, results)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    statuses = {entry.status for _, entries in results for entry in entries}
    if unreadable or "error" in statuses:
        return EXIT_ERRORS
    if args.strict and "warning" in statuses:
        return EXIT_WARNINGS
    return EXIT_OK


# --------------------------------------------------------------------------- output


def _terminal_safe(text: str) -> str:
    """Escape what could move the cursor, reorder text or not encode."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)


def _encodable(text: str) -> str:
    """Lone surrogates (from undecodable file names or text) as escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _rows(results: list[tuple[str, list[AuditEntry]]]) -> list[dict[str, Any]]:
    return [{"file": name, **entry.as_dict()} for name, entries in results for entry in entries]


def _write_json(out: TextIO, results: list[tuple[str, list[AuditEntry]]]) -> None:
    import json

    json.dump(_rows(results), out, indent=2)  # ASCII escapes: safe for any text
    out.write("\n")


def _csv_cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " | ".join(value)
    return value


def _write_csv(out: TextIO, results: list[tuple[str, list[AuditEntry]]]) -> None:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("file", *_COLUMNS))
    for name, entries in results:
        for entry in entries:
            row = entry.as_dict()
            writer.writerow([name, *(_csv_cell(row[column]) for column in _COLUMNS)])
    # One pass over the whole text, not one per cell: lone surrogates as escapes.
    out.write(_encodable(buffer.getvalue()))


def _cell(value: object) -> str:
    """Type, bits, fingerprint: made by us from parsed keys, so already safe."""
    return "-" if value is None else str(value)


def _short(comment: str | None) -> str:
    text = "-" if comment is None else _terminal_safe(comment)
    return text if len(text) <= _COMMENT_WIDTH else text[: _COMMENT_WIDTH - 1] + "…"


def _write_table(out: TextIO, results: list[tuple[str, list[AuditEntry]]]) -> None:
    header = ("LINE", "STATUS", "TYPE", "BITS", "FINGERPRINT", "COMMENT", "PROBLEMS")
    for index, (name, entries) in enumerate(results):
        if len(results) > 1:
            out.write(("\n" if index else "") + f"==> {_terminal_safe(_encodable(name))} <==\n")
        if not entries:
            out.write("no keys found\n")
            continue
        rows = [
            (
                str(e.line_no),
                e.status,
                _cell(e.key_type),
                _cell(e.bits),
                _cell(e.fingerprint),
                _short(e.comment),
                [_terminal_safe(p) for p in e.problems] or ["-"],
            )
            for e in entries
        ]
        widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(6)]
        indent = " " * (sum(widths) + 2 * 6)
        # LINE and BITS (numbers) right-aligned, the rest left-aligned; one format for all rows.
        line = (
            "  ".join(
                f"{{{i}:{'>' if i in (0, 3) else '<'}{width}}}" for i, width in enumerate(widths)
            )
            + "  {6}\n"
        )
        parts = [line.format(*header)]
        for row in rows:
            problems = row[6]
            parts.append(line.format(*row[:6], problems[0]))
            parts.extend(indent + more + "\n" for more in problems[1:])
        out.write("".join(parts))
    out.write(_summary(results) + "\n")


def _summary(results: list[tuple[str, list[AuditEntry]]]) -> str:
    counts = {"ok": 0, "warning": 0, "error": 0}
    for _, entries in results:
        for entry in entries:
            counts[entry.status] += 1
    total = sum(counts.values())
    return (
        f"{total} {'entry' if total == 1 else 'entries'}: {counts['ok']} ok,"
        f" {counts['warning']} with warnings, {counts['error']} with errors"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ccanalytics.keys._cli``: the ``audit-keys`` command on its own."""
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

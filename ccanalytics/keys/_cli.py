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
import csv
import errno
import io
import json
import os
import re
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, NoReturn, TextIO

from ccanalytics.keys._source import is_utf16

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


def _short_type_names() -> dict[str, str]:
    """OpenSSH's key type names -> ``ssh-keygen -l``'s short names."""
    plain = {
        "ssh-ed25519": "ED25519",
        "ssh-rsa": "RSA",
        "rsa-sha2-256": "RSA",
        "rsa-sha2-512": "RSA",
        "ssh-dss": "DSA",
        "ecdsa-sha2-nistp256": "ECDSA",
        "ecdsa-sha2-nistp384": "ECDSA",
        "ecdsa-sha2-nistp521": "ECDSA",
        "sk-ssh-ed25519@openssh.com": "ED25519-SK",
        "sk-ecdsa-sha2-nistp256@openssh.com": "ECDSA-SK",
        "webauthn-sk-ecdsa-sha2-nistp256@openssh.com": "ECDSA-SK",
    }
    certs = {
        name.removesuffix("@openssh.com") + "-cert-v01@openssh.com": short + "-CERT"
        for name, short in plain.items()
    }
    return plain | certs


_SHORT_TYPES = _short_type_names()


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


# --------------------------------------------------------------------------- inputs

_SNIFF_BYTES = 8192  # how much of a file decides whether it is text, as git and grep do


@dataclass
class _Input:
    """A source opened and checked, before anything is printed."""

    name: str
    file: BinaryIO


def _open_input(name: str) -> _Input:
    """Open ``name`` for reading, or raise ``_Unusable`` saying why in one line.

    Only regular files (and ``-``, standard input): opening is non-blocking, so a
    named pipe with no writer is refused instead of waiting forever.
    """
    if name == "-":
        if sys.stdin.isatty():
            print(f"{_PROG}: reading keys from standard input (end with Ctrl-D)", file=sys.stderr)
        file: BinaryIO = sys.stdin.buffer
    else:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        except OSError as err:
            raise _Unusable(f"cannot read {_shown(name)}: {err.strerror or err}") from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            why = (
                os.strerror(errno.EISDIR)
                if stat.S_ISDIR(mode)
                else "not a regular file (a pipe or device: pass it as - on standard input)"
            )
            raise _Unusable(f"cannot read {_shown(name)}: {why}")
        os.set_blocking(fd, True)
        file = os.fdopen(fd, "rb", buffering=1 << 16)
    try:
        head = (
            file.peek(_SNIFF_BYTES)[:_SNIFF_BYTES] if isinstance(file, io.BufferedReader) else b""
        )
    except OSError as err:
        raise _Unusable(f"cannot read {_shown(name)}: {err.strerror or err}") from None
    if b"\0" in head and not is_utf16(head):
        if file is not sys.stdin.buffer:
            file.close()
        raise _Unusable(f"{_shown(name)} is not a text file (it holds binary data); no keys read")
    return _Input(name, file)


class _Unusable(Exception):
    """An input that cannot be audited; the message is the whole line to print."""


def _open_inputs(names: list[str]) -> tuple[list[_Input], list[str]]:
    """Every input opened, or the reasons some cannot be (then none stays open)."""
    inputs, problems = [], []
    for name in names:
        try:
            inputs.append(_open_input(name))
        except _Unusable as err:
            problems.append(str(err))
    if problems:
        for usable in inputs:
            if usable.file is not sys.stdin.buffer:
                usable.file.close()
        return [], problems
    return inputs, []


def _shown(name: str) -> str:
    return _terminal_safe(_encodable(name))


# --------------------------------------------------------------------------- the command


def run(args: argparse.Namespace) -> int:
    """Audit ``args.files`` and print the result entry by entry; returns the exit status.

    Every input is opened and checked first: if any cannot be read, only the
    errors are printed (stderr) and nothing goes to stdout.
    """
    inputs, problems = _open_inputs(args.files or ["-"])
    for problem in problems:
        print(f"{_PROG}: {problem}", file=sys.stderr)
    if problems:
        return EXIT_ERRORS
    counts = {"ok": 0, "warning": 0, "error": 0}
    writer = _WRITERS[args.format](sys.stdout, several=len(inputs) > 1)
    try:
        _audit_inputs(inputs, writer, counts)
        writer.finish(counts)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        for usable in inputs:
            if usable.file is not sys.stdin.buffer:
                usable.file.close()
    if counts["error"]:
        return EXIT_ERRORS
    if args.strict and counts["warning"]:
        return EXIT_WARNINGS
    return EXIT_OK


def _audit_inputs(inputs: list[_Input], writer: _Writer, counts: dict[str, int]) -> None:
    """Judge and write each entry as it is read: memory does not grow with the file."""
    from ccanalytics.keys._audit import Duplicates, iter_audit

    duplicates = Duplicates()
    for usable in inputs:
        duplicates.begin(usable.name)
        writer.begin(usable.name)
        for entry in iter_audit(usable.file, duplicates=duplicates):
            counts[entry.status] += 1
            writer.entry(usable.name, entry)
        writer.end()


# --------------------------------------------------------------------------- output


def _terminal_safe(text: str) -> str:
    """Escape what could move the cursor, reorder text or not encode."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)


def _encodable(text: str) -> str:
    """Lone surrogates (from undecodable file names or text) as escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _summary(counts: dict[str, int]) -> str:
    total = sum(counts.values())
    return (
        f"{total} {'entry' if total == 1 else 'entries'}: {counts['ok']} ok,"
        f" {counts['warning']} with warnings, {counts['error']} with errors"
    )


_CHUNK = 2048  # entries formatted before one write: few system calls, bounded memory


class _Writer:
    """Writes entries as they come: ``begin`` a file, ``entry`` each, ``end``, ``finish``."""

    def __init__(self, out: TextIO, *, several: bool) -> None:
        self.out = out
        self.several = several
        self.parts: list[str] = []

    def begin(self, name: str) -> None:
        pass

    def entry(self, name: str, entry: AuditEntry) -> None:
        self.parts.append(self.format(name, entry))
        if len(self.parts) >= _CHUNK:
            self.flush()

    def format(self, name: str, entry: AuditEntry) -> str:
        raise NotImplementedError

    def end(self) -> None:
        self.flush()

    def flush(self) -> None:
        self.out.write("".join(self.parts))
        self.parts.clear()

    def finish(self, counts: dict[str, int]) -> None:
        self.flush()


class _JsonWriter(_Writer):
    """One JSON array, one entry per line, written as the entries come."""

    def __init__(self, out: TextIO, *, several: bool) -> None:
        super().__init__(out, several=several)
        self.separator = "[\n"

    def format(self, name: str, entry: AuditEntry) -> str:
        text = self.separator + json.dumps({"file": name, **entry.as_dict()})  # ASCII: safe
        self.separator = ",\n"
        return text

    def finish(self, counts: dict[str, int]) -> None:
        self.flush()
        self.out.write("[]\n" if self.separator == "[\n" else "\n]\n")


class _CsvWriter(_Writer):
    """A header, then one row per entry (lists joined with `` | ``)."""

    def __init__(self, out: TextIO, *, several: bool) -> None:
        super().__init__(out, several=several)
        self.buffer = io.StringIO()
        self.rows = csv.writer(self.buffer, lineterminator="\n")
        self.rows.writerow(("file", *_COLUMNS))

    def format(self, name: str, entry: AuditEntry) -> str:
        row = entry.as_dict()
        self.rows.writerow([name, *(_csv_cell(row[column]) for column in _COLUMNS)])
        return ""

    def flush(self) -> None:
        # One pass over the chunk's text, not one per cell: lone surrogates as escapes.
        self.out.write(_encodable(self.buffer.getvalue()))
        self.buffer.seek(0)
        self.buffer.truncate()
        self.parts.clear()


def _csv_cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " | ".join(value)
    return value


class _TableWriter(_Writer):
    """Fixed-width columns, so each entry is printed as soon as it is judged."""

    _HEADER = ("LINE", "STATUS", "TYPE", "BITS", "FINGERPRINT", "COMMENT", "PROBLEMS")
    # LINE and BITS right-aligned; TYPE as ssh-keygen -l names it; a fingerprint is 50 wide.
    _ROW = "{:>6}  {:<7}  {:<15}  {:>5}  {:<50}  {:<" + str(_COMMENT_WIDTH) + "}  {}\n"
    _INDENT = " " * (6 + 7 + 15 + 5 + 50 + _COMMENT_WIDTH + 2 * 6)

    def __init__(self, out: TextIO, *, several: bool) -> None:
        super().__init__(out, several=several)
        self.files = 0
        self.entries = 0

    def begin(self, name: str) -> None:
        if self.several:
            self.parts.append(("\n" if self.files else "") + f"==> {_shown(name)} <==\n")
        self.files += 1
        self.entries = 0

    def format(self, name: str, entry: AuditEntry) -> str:
        problems = [_terminal_safe(p) for p in entry.problems] or ["-"]
        row = self._ROW.format(
            entry.line_no,
            entry.status,
            _short_type(entry.key_type),
            "-" if entry.bits is None else entry.bits,
            entry.fingerprint or "-",  # made by us from parsed keys: already safe
            _short_comment(entry.comment),
            problems[0],
        )
        if len(problems) > 1:
            row += "".join(self._INDENT + more + "\n" for more in problems[1:])
        if not self.entries:
            row = self._ROW.format(*self._HEADER) + row
        self.entries += 1
        return row

    def end(self) -> None:
        if not self.entries:
            self.parts.append("no keys found\n")
        self.flush()

    def finish(self, counts: dict[str, int]) -> None:
        self.flush()
        self.out.write(_summary(counts) + "\n")


_WRITERS: dict[str, type[_Writer]] = {
    "table": _TableWriter,
    "csv": _CsvWriter,
    "json": _JsonWriter,
}


def _short_type(key_type: str | None) -> str:
    """The type as ``ssh-keygen -l`` names it (``ED25519``, ``ECDSA-SK-CERT``)."""
    if key_type is None:
        return "-"
    return _SHORT_TYPES.get(key_type, key_type)


def _short_comment(comment: str | None) -> str:
    text = "-" if comment is None else _terminal_safe(comment)
    return text if len(text) <= _COMMENT_WIDTH else text[: _COMMENT_WIDTH - 1] + "…"


class _OneLineErrors(argparse.ArgumentParser):
    """A wrong argument is one line and exit status 2, as under ``ccanalytics``."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERRORS, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ccanalytics.keys._cli``: the ``audit-keys`` command on its own."""
    parser = _OneLineErrors(
        prog=_PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

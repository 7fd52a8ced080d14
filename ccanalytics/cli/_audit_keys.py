"""``ccanalytics audit-keys``: check authorized_keys files before uploading them.

Opens and checks every FILE first (standard input for ``-`` or none; only regular
files otherwise, never binary ones), then judges entry by entry with
``keys.iter_rows`` and prints each as it comes (``keys.AUDIT_WRITERS``: table, CSV
or JSON),
so memory does not grow with the file. Exit status (``_exits``): 0 when every key is
fine, 1 on warnings with ``--strict``, 5 when a key has errors, 2 for an input that
cannot be read (one line on stderr, nothing on stdout, never a traceback) or bad usage.

It imports neither pandas nor matplotlib nor httpx (``tests/keys/test_keys_cli.py``
checks), so it starts fast and audits faster than ``ssh-keygen -lf`` fingerprints.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ccanalytics.cli._common import EXIT_USAGE, add_quiet_option, shows_progress
from ccanalytics.cli._exits import EXIT_KEY_ERRORS
from ccanalytics.errors import KeyFileError
from ccanalytics.keys import AUDIT_WRITERS, AuditWriter, is_utf16, open_regular, shown_name

__all__ = ["EXIT_ERRORS", "EXIT_OK", "EXIT_UNREADABLE", "EXIT_WARNINGS", "add_parser", "run"]

EXIT_OK = 0
EXIT_WARNINGS = 1  # only with --strict
EXIT_UNREADABLE = EXIT_USAGE  # a file that cannot be read: bad input, nothing audited
EXIT_ERRORS = EXIT_KEY_ERRORS

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
)


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
    add_quiet_option(parser, "progress bar while a large file written elsewhere is read")


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
            file = open_regular(name, shown_name(name))
        except KeyFileError as err:
            raise _Unusable(
                str(err).replace("as an open file instead", "as - on standard input")
            ) from None
    try:
        head = (
            file.peek(_SNIFF_BYTES)[:_SNIFF_BYTES] if isinstance(file, io.BufferedReader) else b""
        )
    except OSError as err:
        raise _Unusable(f"cannot read {shown_name(name)}: {err.strerror or err}") from None
    if b"\0" in head and not is_utf16(head):
        if file is not sys.stdin.buffer:
            file.close()
        raise _Unusable(
            f"{shown_name(name)} is not a text file (it holds binary data); no keys read"
        )
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
        return EXIT_UNREADABLE
    counts = {"ok": 0, "warning": 0, "error": 0}
    writer = AUDIT_WRITERS[args.format](sys.stdout, several=len(inputs) > 1)
    # A bar only when the rows go elsewhere (a file, a pipe): on the terminal they are
    # the progress, and a bar would be drawn between them.
    bar = _progress(inputs) if shows_progress(args) and not sys.stdout.isatty() else None
    try:
        with bar or contextlib.nullcontext():
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


#: A file smaller than this is read before a bar would be worth drawing.
_PROGRESS_MIN_BYTES = 1 << 20


@contextlib.contextmanager
def _progress(inputs: list[_Input]) -> Iterator[None]:
    """A tqdm bar of the bytes read from the inputs, on stderr, kept by a thread that
    reads each file's offset: the audit's loop itself pays nothing for it."""
    sizes = [_size(usable) for usable in inputs]
    if sum(sizes) < _PROGRESS_MIN_BYTES:
        yield
        return
    import threading

    from tqdm import tqdm

    done = threading.Event()
    name = shown_name(inputs[0].name) if len(inputs) == 1 else f"{len(inputs)} files"
    bar = tqdm(total=sum(sizes), desc=name, unit="B", unit_scale=True, file=sys.stderr)

    def follow() -> None:
        while not done.wait(0.2):
            bar.update(_read_so_far(inputs, sizes) - bar.n)

    watcher = threading.Thread(target=follow, name="audit-progress", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        bar.update(sum(sizes) - bar.n)
        bar.close()


def _size(usable: _Input) -> int:
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        return os.fstat(usable.file.fileno()).st_size
    return 0


def _read_so_far(inputs: list[_Input], sizes: list[int]) -> int:
    """Bytes read so far: the sizes of the files done, and the offset in the one being read."""
    total = 0
    for usable, size in zip(inputs, sizes, strict=True):
        if usable.file.closed:
            total += size
            continue
        with contextlib.suppress(OSError, ValueError):
            total += min(size, os.lseek(usable.file.fileno(), 0, os.SEEK_CUR))
    return total


_BYTES_PER_KEY = 100  # an Ed25519 line and its comment; other keys' lines are longer
_MOST_EXPECTED = 1 << 20  # room made for at most this many keys (48 MB); beyond, it grows


def _expected_keys(inputs: list[_Input]) -> int:
    """About how many keys the inputs hold, from their sizes (0 for a pipe)."""
    total = 0
    for usable in inputs:
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            total += os.fstat(usable.file.fileno()).st_size
    return min(total // _BYTES_PER_KEY, _MOST_EXPECTED)


def _audit_inputs(inputs: list[_Input], writer: AuditWriter, counts: dict[str, int]) -> None:
    """Judge and write each entry as it is read: memory does not grow with the file."""
    from ccanalytics.keys import Duplicates, PlainEntry, iter_rows

    duplicates = Duplicates(expected=_expected_keys(inputs))
    # Entries hold no reference cycles, so the cyclic collector would only rescan the
    # duplicate table (hundreds of thousands of objects) again and again: pause it.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for usable in inputs:
            duplicates.begin(usable.name)
            writer.begin(usable.name)
            name, plain, entry = usable.name, writer.plain, writer.entry
            plains = 0
            for row in iter_rows(usable.file, duplicates=duplicates):
                if isinstance(row, PlainEntry):  # ok, with nothing to say: most lines
                    plains += 1
                    plain(name, row)
                else:
                    counts[row.status] += 1
                    entry(name, row)
            counts["ok"] += plains
            writer.end()
    finally:
        if collecting:
            gc.enable()

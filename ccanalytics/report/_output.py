"""Where the report goes: checked before anything is loaded, then replaced atomically.

A cron job must never destroy what it is told to write, nor leave half a file:

- the output must be a regular file or a missing path; a symlink is followed and its
  *target* is replaced (the link stays a link), anything else (a directory, a device
  such as ``/dev/full``, a pipe) is refused with :class:`ReportOutputError`;
- :func:`_check_output` and :func:`_check_csv_dir` run before the first request, so a
  report that cannot be written costs no API call, and ``csv_dir`` may not hold the
  report itself;
- :func:`_write_atomic` writes a temporary file in the target's own directory and
  renames it over the target, so readers see the old file or the new, never a mix.

Messages name the paths the caller gave and the reason in words: no temporary file
names, no ``[Errno N]`` prefixes.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ccanalytics._files import write_atomic

# Defined with every other exception; importable from here and from ``report`` as before.
from ccanalytics.errors import ReportOutputError as ReportOutputError

__all__ = [
    "ReportOutputError",
    "_check_csv_dir",
    "_check_output",
    "_write_atomic",
]


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _reason(err: OSError) -> str:
    return err.strerror or type(err).__name__


def _probe_directory(directory: Path, shown: object) -> None:
    """Create and remove a file in ``directory``: the one test permissions, ACLs and
    read-only mounts all answer truthfully (``os.access`` does not, e.g. for root)."""
    if not directory.is_dir():
        raise ReportOutputError(f"the directory for {shown} does not exist: {directory}")
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".ccanalytics-probe.")
    except OSError as err:
        raise ReportOutputError(f"cannot write {shown}: {_reason(err)}") from None
    os.close(fd)
    os.unlink(probe)


def _resolve_file(path: str | os.PathLike[str]) -> Path:
    """The regular file (or missing path) that writing ``path`` should replace."""
    target = Path(os.path.realpath(path))  # follows symlinks, dangling ones included
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as err:
        raise ReportOutputError(f"cannot use {os.fspath(path)}: {_reason(err)}") from None
    if not stat.S_ISREG(mode):
        raise ReportOutputError(
            f"{os.fspath(path)} is {_kind(mode)}; the report only replaces a regular file "
            "or creates a missing one"
        )
    return target


def _check_output(path: str | os.PathLike[str]) -> Path:
    """The file to replace for ``path``, checked writable; raises :class:`ReportOutputError`."""
    target = _resolve_file(path)
    _probe_directory(target.parent, os.fspath(path))
    return target


def _check_csv_dir(
    csv_dir: str | os.PathLike[str], names: Iterable[str], report: Path | None
) -> Path:
    """The CSV directory, checked writable (or creatable) and not holding the report."""
    directory = Path(os.path.realpath(csv_dir))
    if directory.exists() and not directory.is_dir():
        raise ReportOutputError(f"the CSV directory {os.fspath(csv_dir)} is not a directory")
    if report is not None and (
        report == directory or report in {directory / name for name in names}
    ):
        raise ReportOutputError(
            f"the report {report} would be overwritten by the CSV files written to "
            f"{os.fspath(csv_dir)}; choose another file or directory"
        )
    existing = directory
    while not existing.exists():  # mkdir(parents=True) later creates the rest
        existing = existing.parent
    _probe_directory(existing, f"CSV files in {os.fspath(csv_dir)}")
    for name in names:
        _resolve_file(directory / name)
    return directory


def _write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` over ``path`` (through a symlink, to its target) atomically.

    :func:`ccanalytics._files.write_atomic`: a run that dies half-way leaves the
    previous file intact, never half a report.
    """
    target = _resolve_file(path)
    try:
        write_atomic(target, lambda sink: sink.write(text.encode("utf-8")))
    except OSError as err:
        raise ReportOutputError(f"cannot write {os.fspath(path)}: {_reason(err)}") from None

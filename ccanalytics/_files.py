"""Writing a file so that readers see the old content or the new, never half: one home.

Every file the package writes (store snapshots, compacted days, the report and its CSV
files, check's state) goes through :func:`write_atomic`: the bytes go to a hidden
temporary file in the target's own folder, are flushed and synced to disk, and only
then renamed over the target (``os.replace`` is atomic within a folder). After a crash
or a power cut the target holds the whole old file or the whole new one; a run that
fails or is interrupted before the rename removes its temporary file (only a killed
process leaves one behind, under a dot-name readers ignore).

This module imports nothing heavy: the caller passes a function that writes to the open
binary handle (``pq.write_table(table, handle)``, ``handle.write(text.encode())``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["fsync_dir", "write_atomic", "write_new"]

#: The mode of a new file: readable by all (mkstemp's own 0600 would hide a report).
NEW_FILE_MODE = 0o644


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_new(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Create ``path`` (never over an existing file: ``"xb"``), fill it, sync it to disk.

    The rename that publishes it is the caller's, who may have more to do between the
    two (compaction writes its marker first).
    """
    with open(path, "xb") as sink:
        write(sink)
        sink.flush()
        os.fsync(sink.fileno())


def write_atomic(
    path: Path,
    write: Callable[[BinaryIO], object],
    *,
    durable_rename: bool = False,
    temp_prefix: str | None = None,
    replace: bool = True,
) -> Path:
    """Replace (or create) ``path`` with what ``write`` puts in the handle, atomically.

    ``replace=False`` never replaces an existing ``path``: the finished file is published
    with a hard link, which fails with ``FileExistsError`` when the target exists (also
    one that appeared while the file was being written), and the target is untouched.
    Where the file system has no hard links, the target is checked just before the
    rename instead.

    ``durable_rename`` also syncs the folder, so the rename itself survives a power cut
    (ordering that depends on it, such as compaction's, needs it; an append can do
    without: that run is lost, nothing is torn). An existing target keeps its
    permission bits; a new one is ``0o644``. ``OSError`` from the file system
    propagates unchanged, for the caller to name in its own words.
    """
    prefix = temp_prefix if temp_prefix is not None else f".{path.name}."
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as sink:
            write(sink)
            sink.flush()
            os.fsync(sink.fileno())
        os.chmod(temp, _mode_to_keep(path))
        if replace:
            os.replace(temp, path)
        else:
            _publish_new(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    if durable_rename:
        fsync_dir(path.parent)
    return path


def _publish_new(temp: Path, path: Path) -> None:
    """Rename ``temp`` to ``path`` unless ``path`` exists (``FileExistsError``)."""
    try:
        os.link(temp, path)
    except FileExistsError:
        raise
    except OSError:  # no hard links here (some network or FAT file systems)
        if path.exists():
            raise FileExistsError(errno.EEXIST, "File exists", str(path)) from None
        os.replace(temp, path)
        return
    temp.unlink()


def _mode_to_keep(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return NEW_FILE_MODE

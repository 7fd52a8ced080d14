"""Appending rows to a store: new files only, each complete before anyone can see it.

Each file is written under a hidden temporary name in its partition folder, flushed to
disk, then renamed to its final name (``os.replace`` is atomic within a folder): a
reader sees the whole file or nothing. Names are unique per write (a uuid4), so two
collectors never touch each other's files and nothing existing is ever rewritten.

pyarrow's ``write_dataset`` would write the same layout, but straight to the final
names, where a reader could find a half-written file; hence one ``write_table`` per
partition here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq  # type: ignore[import-untyped]

from ccanalytics.history._layout import data_file_name, partition_dir, temp_path
from ccanalytics.history._schema import to_arrow

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["append_frame", "write_atomically"]


def _fsync_dir(folder: Path) -> None:
    """Make a rename durable (a no-op where folders cannot be opened, e.g. Windows)."""
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


def write_atomically(table: pa.Table, final: Path) -> Path:
    """Write ``table`` as Parquet to ``final`` via a hidden temporary file and a rename.

    If anything fails (or is interrupted) before the rename, the temporary file is
    removed and ``final`` never exists. Only a killed process leaves the temporary
    file behind, where readers ignore it.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path(final)
    try:
        with open(temp, "xb") as sink:
            pq.write_table(table, sink)
            sink.flush()
            os.fsync(sink.fileno())
        os.replace(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_dir(final.parent)
    return final


def append_frame(store: Path, table: str, frame: pd.DataFrame) -> list[Path]:
    """Append ``frame``'s rows (with ``observed_at``) to ``store/table``; the files written.

    One new file per UTC date present in ``observed_at``; an empty frame writes nothing.
    """
    if frame.empty:
        return []
    days = frame["observed_at"].dt.strftime("%Y-%m-%d")
    written = []
    for day, rows in frame.groupby(days, sort=True):
        name = data_file_name(rows["observed_at"].min().to_pydatetime())
        final = partition_dir(store, table, str(day)) / name
        written.append(write_atomically(to_arrow(rows), final))
    return written

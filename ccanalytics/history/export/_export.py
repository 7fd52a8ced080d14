"""``export_showback``: the store's showback written to a file, FOCUS 1.2, CSV or Parquet.

The file is written through the one atomic-write helper (:func:`ccanalytics._files.write_atomic`):
readers see no file or the whole file, never half. An existing output is never replaced
unless ``force=True``; that is checked before the store is read (and again, atomically,
when the file is published: one that appeared meanwhile is not replaced either).

Formats (:data:`EXPORT_FORMATS`):

- ``"focus"``: the FOCUS 1.2 columns of :func:`~ccanalytics.history.export._focus.to_focus`,
  as Parquet when the output's name ends in ``.parquet`` or ``.pq``, else as CSV;
- ``"csv"``, ``"parquet"``: :meth:`History.showback <ccanalytics.history.History.showback>`'s
  own columns (:data:`ccanalytics.history.SHOWBACK_COLUMNS`).

In CSV, times are ISO 8601 in UTC (``2026-11-02T14:00:00Z``), empty cells are nulls,
numbers are written in full (never rounded), and text a spreadsheet would run as a
formula (a pod called ``=HYPERLINK(...)``) has a single quote in front
(:mod:`ccanalytics._csv`); Parquet keeps the types and the values as they are (times as
UTC timestamps).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Literal

from ccanalytics._csv import frame_csv
from ccanalytics._files import write_atomic
from ccanalytics.errors import ExportOutputError, StoreError
from ccanalytics.history.export._focus import to_focus
from ccanalytics.history.queries import History, resolve_teams

if TYPE_CHECKING:
    import pandas as pd

    from ccanalytics.history.queries import DurationLike, Teams, TimeLike
    from ccanalytics.history.store import Location
    from ccanalytics.measures import Params

__all__ = ["EXPORT_FORMATS", "ExportResult", "export_showback", "write_showback"]

ExportFormat = Literal["focus", "csv", "parquet"]
#: The formats of :func:`export_showback`.
EXPORT_FORMATS: Final[tuple[ExportFormat, ...]] = ("focus", "csv", "parquet")
_PARQUET_SUFFIXES: Final = (".parquet", ".pq")
_TIME_FORMAT: Final = "%Y-%m-%dT%H:%M:%SZ"  # FOCUS's date/time format: UTC, seconds, 'Z'


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_showback` wrote."""

    path: Path
    format: str  #: "FOCUS 1.2 CSV", "FOCUS 1.2 Parquet", "CSV" or "Parquet"
    rows: int
    cost: float  #: USD: the sum of the rows' cost (unrounded)
    start: pd.Timestamp | None  #: the window, UTC (None: the store is empty there)
    end: pd.Timestamp | None

    def __str__(self) -> str:
        span = ""
        if self.start is not None and self.end is not None:
            span = f", {self.start:%Y-%m-%d %H:%M} to {self.end:%Y-%m-%d %H:%M} UTC"
        return (
            f"Wrote {self.rows:,} showback rows ({self.cost:,.2f} USD{span}) to {self.path} "
            f"as {self.format}."
        )


def export_showback(
    store: str | PathLike[str] | Location,
    output: str | PathLike[str],
    *,
    fmt: ExportFormat = "focus",
    since: TimeLike = None,
    until: TimeLike = None,
    by: Literal["hour", "day"] = "hour",
    teams: Teams | str | PathLike[str] | None = None,
    force: bool = False,
    params: Params | None = None,
    max_gap: DurationLike | None = None,
) -> ExportResult:
    """Write the showback of ``store`` over ``[since, until)`` to ``output``.

    One row per pod per UTC ``by`` (``"hour"`` or ``"day"``), as
    :meth:`History.showback <ccanalytics.history.History.showback>` gives it, in ``fmt``
    (see the module: ``"focus"``, ``"csv"``, ``"parquet"``).

    Raises :class:`~ccanalytics.errors.ExportOutputError` when ``output`` exists (and
    ``force`` is false) or cannot be written, :class:`~ccanalytics.errors.TeamsError` for
    a bad team mapping (both before the store is read) and
    :class:`~ccanalytics.errors.StoreError` when the store cannot be read or holds no
    snapshot.
    """
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(EXPORT_FORMATS)}, not {fmt!r}")
    path = Path(output)
    _check_output(path, force=force)
    mapping = resolve_teams(teams)
    with History(store) as history:
        if history.window_bounds(timedelta(0))[0] is None:  # the newest snapshot: none
            raise StoreError(f"the store {history.store} holds no snapshot", history.store)
        start, end = history.window_bounds(since, until)
        rows = history.showback(since, until, by=by, teams=mapping, params=params, max_gap=max_gap)
    written = write_showback(rows, path, fmt=fmt, force=force)
    if len(rows):  # an open bound is where the rows start or end
        start = rows["period_start"].min() if start is None else start
        end = rows["period_end"].max() if end is None else end
    return ExportResult(path, written, len(rows), float(rows["cost"].sum()), start, end)


def write_showback(
    rows: pd.DataFrame, output: str | PathLike[str], *, fmt: ExportFormat, force: bool = False
) -> str:
    """Write showback ``rows`` to ``output`` in ``fmt``, atomically; the format's name.

    :class:`~ccanalytics.errors.ExportOutputError` when ``output`` exists (and ``force``
    is false) or cannot be written.
    """
    path = Path(output)
    parquet = fmt == "parquet" or (fmt == "focus" and path.suffix.lower() in _PARQUET_SUFFIXES)
    frame = to_focus(rows) if fmt == "focus" else rows
    name = ("FOCUS 1.2 " if fmt == "focus" else "") + ("Parquet" if parquet else "CSV")

    def write(sink: BinaryIO) -> None:
        if parquet:
            _write_parquet(frame, sink)
        else:
            sink.write(_csv_text(frame).encode("utf-8"))

    try:
        write_atomic(path, write, replace=force)
    except FileExistsError:
        raise _exists(path) from None
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise ExportOutputError(f"cannot write {path}: {reason}", path) from None
    return name


def _check_output(path: Path, *, force: bool) -> None:
    """Fail before any work: an existing output (without force), a missing folder."""
    if path.is_dir():
        raise ExportOutputError(f"cannot write {path}: it is a folder", path)
    if path.exists() and not force:
        raise _exists(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ExportOutputError(f"cannot write {path}: the folder {folder} does not exist", path)
    if not os.access(folder, os.W_OK):
        raise ExportOutputError(f"cannot write {path}: the folder {folder} is not writable", path)


def _exists(path: Path) -> ExportOutputError:
    return ExportOutputError(f"{path} exists; pass force=True (--force) to replace it", path)


def _csv_text(frame: pd.DataFrame) -> str:
    """CSV with times as ISO 8601 UTC ('Z'), every number in full, formulas made text."""
    out = frame.copy()
    for column in out.columns:
        if hasattr(out[column], "dt") and str(out[column].dtype).startswith("datetime64"):
            out[column] = out[column].dt.strftime(_TIME_FORMAT)
    return frame_csv(out, lineterminator="\n")


def _write_parquet(frame: pd.DataFrame, sink: Any) -> None:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    table = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(table, sink)

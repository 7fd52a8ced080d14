"""Writing a frame as a table, CSV, JSON or Parquet: the ``--format`` of every command."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ccanalytics._csv import frame_csv
from ccanalytics.cli._common import UsageError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["write_frame"]


def write_frame(frame: pd.DataFrame, fmt: str, output: str | None, *, replace: bool = True) -> None:
    """Write ``frame`` to ``output`` (``None`` or ``-``: standard output) in ``fmt``.

    ``replace=False`` creates the file or fails (``FileExistsError``): never over one that
    appeared meanwhile.

    ``table`` is for people (aligned, units, ``no rows`` in words: ``_table``); ``csv``
    and ``json`` (records, ISO dates) for programs; ``parquet`` keeps dtypes and needs
    ``pyarrow`` and a file. In ``csv``, text a spreadsheet would run as a formula has a
    single quote in front.
    """
    to_stdout = output in (None, "-")
    mode = "w" if replace else "x"
    if fmt == "parquet":
        if to_stdout:
            raise UsageError("--format parquet needs --output FILE (it is binary)")
        try:
            with open(output, mode + "b") as sink:  # type: ignore[arg-type]
                frame.to_parquet(sink, index=False)
        except ImportError as err:
            raise ValueError(
                "--format parquet needs pyarrow: pip install 'ccanalytics[parquet]'"
            ) from err
        return
    if fmt == "table":
        from ccanalytics.cli._table import format_table

        text = format_table(frame)
    elif fmt == "csv":
        text = frame_csv(frame)
    elif fmt == "json":
        text = frame.to_json(orient="records", date_format="iso", indent=2) + "\n"
    else:
        raise ValueError(f"unknown format {fmt!r}")
    if to_stdout:
        sys.stdout.write(text)
    else:
        with open(output, mode, encoding="utf-8") as fh:  # type: ignore[arg-type]
            fh.write(text)

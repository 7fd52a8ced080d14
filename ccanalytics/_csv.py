"""CSV cells a spreadsheet would run, written as text instead: one rule for every CSV we write.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (or the
full-width ``＝ ＋ － ＠`` that some spreadsheets fold to ASCII) is read as a formula by
Excel, LibreOffice Calc and Google Sheets when the file is opened: a pod called
``=HYPERLINK("http://evil.invalid","x")`` would become a link, and ``+cmd|' /C calc'!A0``
a command (OWASP, "CSV Injection"). As OWASP recommends, such a cell is written with a
single quote in front, which spreadsheets take as "this is text" and do not show as
part of the value. Every cell holding a comma, a double quote or a line break is quoted
(the quotes inside doubled), so no cell's text reaches the next cell or row: a carriage
return too, which ``csv`` before Python 3.13 leaves bare when rows end in ``"\n"`` (a reader
then starts a new row there, with whatever formula follows), so a CSV holding one is
written by a writer whose rows end in ``"\r\n"``, then given the caller's ends again.

Only text is touched: numbers stay numbers (``-3.5`` in a float column is ``-3.5``), and
so does text that is a plain number, which no spreadsheet runs. Parquet and JSON keep
every value as it is: only CSV is opened by spreadsheets.

Imports nothing heavy: pandas only when given a frame (the key audit's writer needs none).
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FORMULA_STARTS", "csv_row", "frame_csv", "safe_cell", "safe_text"]

#: The first characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")

# A plain decimal number ("-3.5", "+1", "-1e-05"): a spreadsheet reads it as that number.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(text: str) -> str:
    """``text`` with a single quote in front if a spreadsheet would run it as a formula."""
    if text.startswith(FORMULA_STARTS) and _PLAIN_NUMBER.fullmatch(text) is None:
        return "'" + text
    return text


def safe_text(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell made safe by :func:`safe_cell` (a copy, if one changed).

    Text is what object, string and categorical columns hold as ``str``; numbers,
    times, booleans and missing values are left as they are.
    """
    safe = None
    for name, column in frame.items():
        made = _safe_column(column)
        if made is not column:
            if safe is None:
                safe = frame.copy()
            safe[name] = made
    return frame if safe is None else safe


def frame_csv(frame: pd.DataFrame, *, lineterminator: str = os.linesep, **options: Any) -> str:
    """``frame.to_csv(index=False, **options)`` with its text cells made safe and quoted."""
    safe = safe_text(frame)
    if not _holds_carriage_return(safe):
        text: str = safe.to_csv(index=False, lineterminator=lineterminator, **options)
        return text
    text = safe.to_csv(index=False, lineterminator="\r\n", **options)
    return _ROW_OR_QUOTED.sub(lambda m: lineterminator if m.group() == "\r\n" else m.group(), text)


def csv_row(cells: Sequence[object], lineterminator: str = "\n") -> str:
    """One CSV row, ending in ``lineterminator``: cells as given (make them safe first),
    any holding a carriage return quoted like the rest."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerow(cells)  # quotes a carriage return
    return buffer.getvalue()[:-2] + lineterminator


# Unquoted cells hold no double quote (the writer quotes those): outside a quoted cell, a
# "\r\n" is a row's end.
_ROW_OR_QUOTED = re.compile(r'"(?:[^"]|"")*"|\r\n')


def _holds_carriage_return(frame: pd.DataFrame) -> bool:
    """Whether a text cell of ``frame`` holds a carriage return."""
    for _, column in frame.items():
        text = _text_column(column)
        if text is not None and text.str.contains("\r", regex=False, na=False).any():
            return True
    return False


def _text_column(column: pd.Series[Any]) -> pd.Series[Any] | None:
    """``column`` as a column of text (categories as their values), or None if it holds none."""
    import pandas as pd

    if isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype(object)
    elif not pd.api.types.is_string_dtype(column.dtype):  # object, string, Arrow strings
        return None
    try:
        column.str  # noqa: B018 - pandas refuses the accessor on a column without text
    except AttributeError:
        return None
    return column


def _safe_column(column: pd.Series[Any]) -> pd.Series[Any]:
    """``column`` with its formula-like text cells made safe, or itself when none is."""
    text = _text_column(column)
    if text is None:
        return column
    flagged = text.str.startswith(FORMULA_STARTS, na=False)
    if not flagged.any():
        return column
    safe = text.copy()
    safe[flagged] = text[flagged].map(safe_cell)
    return safe

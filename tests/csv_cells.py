"""Cells a spreadsheet would run as formulas, and the check that a CSV holds them inert.

OWASP's CSV injection list: a cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return is read as a formula by Excel, LibreOffice or Google Sheets; so are
the full-width ``＝ ＋ － ＠`` some of them fold to ASCII. Written safely, each is the
same text after a single quote (which spreadsheets show as text and do not keep).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

HOSTILE = (
    '=HYPERLINK("http://evil.invalid","x")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "\t=1+1",
    "\r=1+1",
    "＝1+1",
    "＋1",
    "－1",
    "＠SUM(1)",
)


def rows(text: str) -> list[dict[str, str]]:
    """The CSV's rows as read by the ``csv`` module: what a spreadsheet's import sees."""
    return list(csv.DictReader(io.StringIO(text, newline="")))


def file_rows(path: Path) -> list[dict[str, str]]:
    """``rows`` of a file, read without newline translation (a "\\r" in a cell stays)."""
    with open(path, encoding="utf-8", newline="") as file:
        return rows(file.read())


def assert_inert(cells: list[str], expected: list[str]) -> None:
    """Each written cell is its value made inert: a quote in front of a formula's start."""
    want = [inert(value) for value in expected]
    assert cells == want, f"written {cells!r}, not {want!r}"  # a helper: no assert rewriting
    assert not any(
        cell.startswith(("=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠")) for cell in cells
    )


def inert(value: str) -> str:
    """``value`` as the test expects it written (hand-made, not the package's helper)."""
    return "'" + value if value in HOSTILE else value

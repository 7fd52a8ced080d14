"""An audit written as it comes: an aligned table, CSV or JSON (``audit-keys``' output).

Each writer gets ``begin`` (a file), ``entry`` (each judged entry, as it comes),
``end`` and ``finish`` (the counts), and writes in chunks of ``_CHUNK`` entries, so
memory does not grow with the input. Everything printed from the input (comments,
problems, file names) is made safe for a terminal; CSV escapes lone surrogates; JSON
is ASCII; a CSV cell a spreadsheet would run as a formula has a single quote in front
(:mod:`ccanalytics._csv`). The columns are :data:`~ccanalytics.keys.AUDIT_COLUMNS`, the key types'
short names ``_sshbuf``'s: this module spells neither.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from ccanalytics._csv import csv_row, safe_cell
from ccanalytics._visible import visible
from ccanalytics.keys._audit import AUDIT_COLUMNS
from ccanalytics.keys._sshbuf import short_type_name

if TYPE_CHECKING:
    from ccanalytics.keys._audit import AuditEntry, PlainEntry

__all__ = ["AUDIT_WRITERS", "AuditWriter", "shown_name"]

_COLUMNS = tuple(AUDIT_COLUMNS)
_COMMENT_WIDTH = 32

# json's own string escaper (its C version when built): ASCII out, any str in.
_JSON_STRING: Callable[[str], str] = json.encoder.encode_basestring_ascii


# --------------------------------------------------------------------------- output


def _terminal_safe(text: str) -> str:
    """Escape what could move the cursor, reorder text or not encode (the one rule)."""
    return visible(text)


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


class AuditWriter:
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

    def plain(self, name: str, row: PlainEntry) -> None:
        """An entry ``ok`` with nothing to say (no problems, no options, valid)."""
        self.parts.append(self.format_plain(name, row))
        if len(self.parts) >= _CHUNK:
            self.flush()

    def format(self, name: str, entry: AuditEntry) -> str:
        raise NotImplementedError

    def format_plain(self, name: str, row: PlainEntry) -> str:
        raise NotImplementedError

    def end(self) -> None:
        self.flush()

    def flush(self) -> None:
        self.out.write("".join(self.parts))
        self.parts.clear()

    def finish(self, counts: dict[str, int]) -> None:
        self.flush()


class _JsonWriter(AuditWriter):
    """One JSON array, one entry per line, written as the entries come.

    Each object is spelled out from the entry's fields (strings through ``json``'s C
    escaper, ASCII only: safe for any text): ``json.dumps`` of a dict per entry took
    1.2 times as long as the whole table.
    """

    def __init__(self, out: TextIO, *, several: bool) -> None:
        super().__init__(out, several=several)
        self.separator = "[\n"
        self.file = ""

    def begin(self, name: str) -> None:
        self.file = '{"file": ' + _json_string(name) + ", "

    def format(self, name: str, entry: AuditEntry) -> str:
        key = entry.key
        text = (
            self.separator
            + self.file
            + _JSON_OBJECT
            % {
                "line_no": entry.line_no,
                "status": '"' + entry.status + '"',  # ok, warning or error
                "key_type": _json_or_null(key.key_type),
                "bits": "null" if key.bits is None else str(key.bits),
                "fingerprint": _json_or_null(key.fingerprint),
                "comment": _json_or_null(key.comment),
                "api_valid": "true" if key.api_valid else "false",
                "key_valid": "true" if key.key_valid else "false",
                "problems": "[" + ", ".join(map(_json_string, entry.problems)) + "]",
                "options": "[" + ", ".join(map(_json_string, entry.options)) + "]",
            }
        )
        self.separator = ",\n"
        return text

    def format_plain(self, name: str, row: PlainEntry) -> str:
        text = (
            self.separator
            + self.file
            + _PLAIN_OBJECT
            % {
                "line_no": row.line_no,
                "key_type": row.key_type,  # an OpenSSH name: nothing to escape
                "bits": row.bits,
                "fingerprint": row.fingerprint,  # base64: nothing to escape
                "comment": _json_or_null(row.comment),
            }
        )
        self.separator = ",\n"
        return text

    def finish(self, counts: dict[str, int]) -> None:
        self.flush()
        self.out.write("[]\n" if self.separator == "[\n" else "\n]\n")


def _object_template(values: dict[str, str]) -> str:
    """A JSON object's text after its ``"file"`` member: every column, in order, each
    as ``values`` gives it (a %-placeholder, or a constant)."""
    return ", ".join(f'"{column}": {values[column]}' for column in _COLUMNS) + "}"


_JSON_OBJECT = _object_template({column: f"%({column})s" for column in _COLUMNS})
#: An ok entry with nothing to say: the values every such entry shares are constants.
_PLAIN_OBJECT = _object_template(
    {
        **{column: f"%({column})s" for column in _COLUMNS},
        "status": '"ok"',
        "key_type": '"%(key_type)s"',
        "fingerprint": '"%(fingerprint)s"',
        "api_valid": "true",
        "key_valid": "true",
        "problems": "[]",
        "options": "[]",
    }
)


def _json_string(text: str) -> str:
    return _JSON_STRING(text)


def _json_or_null(text: str | None) -> str:
    return "null" if text is None else _JSON_STRING(text)


class _CsvWriter(AuditWriter):
    """A header, then one row per entry (lists joined with `` | ``)."""

    def __init__(self, out: TextIO, *, several: bool) -> None:
        super().__init__(out, several=several)
        self.buffer = io.StringIO()
        self.rows = csv.writer(self.buffer, lineterminator="\n")
        self.rows.writerow(("file", *_COLUMNS))

    def format(self, name: str, entry: AuditEntry) -> str:
        row = entry.as_dict()
        self.write_row([safe_cell(name), *(_csv_cell(row[column]) for column in _COLUMNS)])
        return ""

    def format_plain(self, name: str, row: PlainEntry) -> str:
        # A plain entry's comment is printable ASCII (see PlainEntry): no carriage return.
        comment = "" if row.comment is None else safe_cell(row.comment)
        cells = (safe_cell(name), row.line_no, "ok", row.key_type, row.bits, row.fingerprint)
        if "\r" in name:
            self.write_row((*cells, comment, "true", "true", "", ""))
        else:
            self.rows.writerow((*cells, comment, "true", "true", "", ""))
        return ""

    def write_row(self, cells: Sequence[object]) -> None:
        """A row, a cell holding a carriage return quoted (``csv_row``: this writer would not
        before Python 3.13)."""
        if any(isinstance(cell, str) and "\r" in cell for cell in cells):
            self.buffer.write(csv_row(cells))
        else:
            self.rows.writerow(cells)

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
        return safe_cell(" | ".join(value))
    if isinstance(value, str):
        return safe_cell(value)
    return value


class _TableWriter(AuditWriter):
    """Fixed-width columns, so each entry is printed as soon as it is judged."""

    _HEADER = ("LINE", "STATUS", "TYPE", "BITS", "FINGERPRINT", "COMMENT", "PROBLEMS")
    # LINE and BITS right-aligned; TYPE as ssh-keygen -l names it; a fingerprint is 50 wide.
    _ROW = "{:>6}  {:<7}  {:<15}  {:>5}  {:<50}  {:<" + str(_COMMENT_WIDTH) + "}  {}\n"
    _INDENT = " " * (6 + 7 + 15 + 5 + 50 + _COMMENT_WIDTH + 2 * 6)

    def __init__(self, out: TextIO, *, several: bool) -> None:
        super().__init__(out, several=several)
        self.files = 0
        self.entries = 0
        self._middles: dict[tuple[str, int], str] = {}

    def begin(self, name: str) -> None:
        if self.several:
            self.parts.append(("\n" if self.files else "") + f"==> {shown_name(name)} <==\n")
        self.files += 1
        self.entries = 0

    def format(self, name: str, entry: AuditEntry) -> str:
        problems = [_terminal_safe(p) for p in entry.problems] or ["-"]
        row = self._ROW.format(
            entry.line_no,
            entry.status,
            short_type_name(entry.key_type),
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

    def plain(self, name: str, row: PlainEntry) -> None:
        # Writer.plain, with format_plain's common case inline: a tenth of a line's time.
        comment = row.comment
        middle = self._middles.get((row.key_type, row.bits))
        if middle is None or comment is None or len(comment) > _COMMENT_WIDTH or not self.entries:
            super().plain(name, row)
            return
        self.entries += 1
        parts = self.parts
        parts.append(f"{row.line_no:>6}{middle}{row.fingerprint}  {comment:<{_COMMENT_WIDTH}}  -\n")
        if len(parts) >= _CHUNK:
            self.flush()

    def format_plain(self, name: str, row: PlainEntry) -> str:
        # The comment is printable ASCII (see PlainEntry): safe for a terminal as it is.
        comment = row.comment
        if comment is None:
            comment = "-"
        elif len(comment) > _COMMENT_WIDTH:
            comment = comment[: _COMMENT_WIDTH - 1] + "…"
        middle = self._middles.get((row.key_type, row.bits))
        if middle is None:  # the columns between LINE and FINGERPRINT, once per type
            cells = self._ROW.format(0, "ok", short_type_name(row.key_type), row.bits, "\0", "", "")
            middle = self._middles[row.key_type, row.bits] = cells[6 : cells.index("\0")]
        # A SHA256 fingerprint is always 50 characters: the FINGERPRINT column's width.
        text = f"{row.line_no:>6}{middle}{row.fingerprint}  {comment:<{_COMMENT_WIDTH}}  -\n"
        if not self.entries:
            text = self._ROW.format(*self._HEADER) + text
        self.entries += 1
        return text

    def end(self) -> None:
        if not self.entries:
            self.parts.append("no keys found\n")
        self.flush()

    def finish(self, counts: dict[str, int]) -> None:
        self.flush()
        self.out.write(_summary(counts) + "\n")


#: The writer of each ``--format``.
AUDIT_WRITERS: dict[str, type[AuditWriter]] = {
    "table": _TableWriter,
    "csv": _CsvWriter,
    "json": _JsonWriter,
}


def _short_comment(comment: str | None) -> str:
    text = "-" if comment is None else _terminal_safe(comment)
    return text if len(text) <= _COMMENT_WIDTH else text[: _COMMENT_WIDTH - 1] + "…"


def shown_name(name: str) -> str:
    """A file name fit for a terminal: escapes, not control characters."""
    return _terminal_safe(_encodable(name))

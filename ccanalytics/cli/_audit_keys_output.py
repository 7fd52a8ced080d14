"""``audit-keys`` output: an aligned table, CSV or JSON, written entry by entry.

Each writer gets ``begin`` (a file), ``entry`` (each judged entry, as it comes),
``end`` and ``finish`` (the counts), and writes in chunks of ``_CHUNK`` entries, so
memory does not grow with the input. Everything printed from the input (comments,
problems, file names) is made safe for a terminal; CSV escapes lone surrogates; JSON
is ASCII.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ccanalytics.keys import AuditEntry, PlainEntry

__all__ = ["WRITERS", "Writer", "shown_name"]

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
# json's own string escaper (its C version when built): ASCII out, any str in.
_JSON_STRING: Callable[[str], str] = json.encoder.encode_basestring_ascii


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


class Writer:
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


class _JsonWriter(Writer):
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
        self.file = '{"file": ' + _json_string(name) + ', "line_no": '

    def format(self, name: str, entry: AuditEntry) -> str:
        key = entry.key
        text = "".join(
            (
                self.separator,
                self.file,
                str(entry.line_no),
                ', "status": "',
                entry.status,
                '", "key_type": ',
                _json_or_null(key.key_type),
                ', "bits": ',
                "null" if key.bits is None else str(key.bits),
                ', "fingerprint": ',
                _json_or_null(key.fingerprint),
                ', "comment": ',
                _json_or_null(key.comment),
                ', "api_valid": ',
                "true" if key.api_valid else "false",
                ', "key_valid": ',
                "true" if key.key_valid else "false",
                ', "problems": [',
                ", ".join(map(_json_string, entry.problems)),
                '], "options": [',
                ", ".join(map(_json_string, entry.options)) if key.options else "",
                "]}",
            )
        )
        self.separator = ",\n"
        return text

    def format_plain(self, name: str, row: PlainEntry) -> str:
        text = "".join(
            (
                self.separator,
                self.file,
                str(row.line_no),
                ', "status": "ok", "key_type": "',
                row.key_type,  # an OpenSSH name: nothing to escape
                '", "bits": ',
                str(row.bits),
                ', "fingerprint": "',
                row.fingerprint,  # base64: nothing to escape
                '", "comment": ',
                _json_or_null(row.comment),
                ', "api_valid": true, "key_valid": true, "problems": [], "options": []}',
            )
        )
        self.separator = ",\n"
        return text

    def finish(self, counts: dict[str, int]) -> None:
        self.flush()
        self.out.write("[]\n" if self.separator == "[\n" else "\n]\n")


def _json_string(text: str) -> str:
    return _JSON_STRING(text)


def _json_or_null(text: str | None) -> str:
    return "null" if text is None else _JSON_STRING(text)


class _CsvWriter(Writer):
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

    def format_plain(self, name: str, row: PlainEntry) -> str:
        comment = "" if row.comment is None else row.comment
        cells = (name, row.line_no, "ok", row.key_type, row.bits, row.fingerprint, comment)
        self.rows.writerow((*cells, "true", "true", "", ""))
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


class _TableWriter(Writer):
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
            cells = self._ROW.format(0, "ok", _SHORT_TYPES[row.key_type], row.bits, "\0", "", "")
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


WRITERS: dict[str, type[Writer]] = {
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


def shown_name(name: str) -> str:
    """A file name fit for a terminal: escapes, not control characters."""
    return _terminal_safe(_encodable(name))

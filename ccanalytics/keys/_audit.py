"""Audit SSH public keys before they replace the account's keys: the public API.

Each authorized_keys entry is judged twice, because two different programs will
read it: the API (``api_valid``: the spec's pattern, judged as an ECMA-262 engine
judges it, see ``api_rule``) and OpenSSH on the pods (``key_valid``: the key
material is a key ``sshd`` accepts, judged as ``sshkey_read`` does, see
``_sshwire``). Everything else is advice: each problem is one sentence, and its
severity decides the entry's ``status`` (``ok``, ``warning`` or ``error``).

Secrets never leave the audit: a pasted private key is recognised and reported
as such without its text being kept, printed or put in a frame, and problem
messages never quote key material or unrecognised text.

This module audits sources entry by entry (``iter_audit``, so a file of any size
is judged in constant memory, duplicates aside); ``_line`` judges one line and
``_source`` reads paths, text, bytes and lines into entries, joining blocks.

Only the standard library is imported here; ``audit_keys`` imports pandas when
called, so the command line (``_cli``) stays fast.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from ccanalytics.keys._blocks import _RFC4716_BEGIN, _private_key, _private_key_kind, _rfc4716

# Re-exported: a public constant of this module before the split.
from ccanalytics.keys._line import (
    RECOMMENDED_RSA_BITS as RECOMMENDED_RSA_BITS,
    AuthorizedKey,
    PlainEntry,
    Status,
    _judge_line,
)
from ccanalytics.keys._seen import Duplicates
from ccanalytics.keys._source import KeySource, _entries, key_files

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "AUDIT_COLUMNS",
    "AuditEntry",
    "AuthorizedKey",
    "Duplicates",
    "KeySource",
    "PlainEntry",
    "audit_keys",
    "audit_lines",
    "iter_audit",
    "iter_rows",
    "parse_authorized_key",
]

_REDACTED = "<redacted>"

#: The columns of an audit, in order, and each one's pandas dtype: ``audit_keys``' frame,
#: :meth:`AuditEntry.as_dict` and ``audit-keys``' CSV and JSON (``_writers``) all follow it.
AUDIT_COLUMNS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "line_no": "Int64",
        "status": "string",
        "key_type": "string",
        "bits": "Int64",
        "fingerprint": "string",
        "comment": "python",  # a comment read with surrogateescape may hold lone surrogates
        "api_valid": "boolean",
        "key_valid": "boolean",
        "problems": "object",  # lists of str
        "options": "object",
    }
)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class AuditEntry:
    """One row of an audit: the entry at ``line_no`` plus file-level findings.

    ``file`` names the file it is in when the source was a list of files.
    """

    line_no: int
    key: AuthorizedKey = field(repr=False)
    problems: list[str]
    status: Status
    file: str | None = None

    @property
    def key_type(self) -> str | None:
        return self.key.key_type

    @property
    def comment(self) -> str | None:
        return self.key.comment

    @property
    def fingerprint(self) -> str | None:
        return self.key.fingerprint

    @property
    def bits(self) -> int | None:
        return self.key.bits

    @property
    def api_valid(self) -> bool:
        return self.key.api_valid

    @property
    def key_valid(self) -> bool:
        return self.key.key_valid

    @property
    def options(self) -> list[str]:
        """The options as written, with ``environment`` values redacted."""
        return [_show_option(name, value) for name, value in self.key.options]

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready row (the same columns as ``audit_keys``)."""
        row = {name: getattr(self, name) for name in AUDIT_COLUMNS}
        row["problems"] = list(self.problems)  # a copy: the entry is frozen
        return row


def _show_option(name: str, value: str | None) -> str:
    if value is None:
        return name
    if name.lower() == "environment":
        var = value.split("=", 1)[0]
        value = f"{var}={_REDACTED}"
    return f'{name}="{value}"'


# --------------------------------------------------------------------------- auditing


def parse_authorized_key(line: str) -> AuthorizedKey:
    """Judge one authorized_keys entry exactly as given; never raises for a ``str``.

    A trailing ``"\\n"`` is part of the entry (and makes it ``api_valid=False``), as
    is a ``"\\r"`` left by CRLF line endings. An RFC 4716 public key block is also
    understood (it is a valid key the API cannot take as it is).
    """
    if not isinstance(line, str):
        raise TypeError(f"parse_authorized_key() takes a str, not {type(line).__name__}")
    kind = _private_key_kind(line)
    if kind is not None:
        return _private_key(kind, "")
    if line.lstrip().startswith(_RFC4716_BEGIN):
        return _rfc4716(line.split("\n"), "")
    return _judge_line(line)


def audit_lines(source: KeySource) -> list[AuditEntry]:
    """Judge every entry of ``source``; the pandas-free core of ``audit_keys``.

    ``source`` is a path (``os.PathLike``, or a ``str`` naming a file), a list or tuple
    of paths (read in turn, each entry's ``file`` naming its file, line numbers counted
    per file), the text of a file, its bytes, or an iterable of lines.

    A ``str`` is key text when it holds a line feed or its one line reads as an entry
    (a key type, options then a key, a ``#`` comment, a private key, base64 key
    material); any other ``str`` is a file's name if it is one word, has a path's shape
    (``/``, ``~``, ``./``, ``.pub``, ``authorized_keys``) or names something that exists,
    and is audited as a line otherwise. ``~`` is the home folder. A list is of files
    when its first item is a path, and then all its items must be. A file that cannot be
    read (missing, a directory, a pipe, not permitted) is a :class:`KeyFileError`,
    however it was spelled.

    Line feeds separate entries; a ``\\r`` before one is kept (and reported). Blank and
    ``#`` lines are skipped. Later copies of a key (same type and fingerprint) get a
    warning naming the first line (and its file).
    """
    return list(iter_audit(source))


def iter_audit(
    source: KeySource, *, drop_bom: bool = False, duplicates: Duplicates | None = None
) -> Iterator[AuditEntry]:
    """``audit_lines``, one entry at a time; ``duplicates`` spans several sources."""
    for row in iter_rows(source, drop_bom=drop_bom, duplicates=duplicates, plain=False):
        if isinstance(row, PlainEntry):  # not made without plain=True; for the type
            key = _judge_line(row.line)
            row = AuditEntry(row.line_no, key, key.problems, key.status)
        yield row


def iter_rows(
    source: KeySource,
    *,
    drop_bom: bool = False,
    duplicates: Duplicates | None = None,
    plain: bool = True,
) -> Iterator[AuditEntry | PlainEntry]:
    """``iter_audit``, where a line with nothing to say is a ``PlainEntry`` (with ``plain``).

    For ``audit-keys``, which prints most lines of a large file as ``ok`` and nothing
    else: building an ``AuditEntry`` and its keys took more time than the judgement.
    A plain line that repeats a key is judged in full, to say so.
    """
    seen = Duplicates() if duplicates is None else duplicates
    files = key_files(source)
    if files is None or not isinstance(source, list | tuple):
        yield from _source_rows(source, drop_bom, seen, plain)
        return
    for file in files:
        name = os.fspath(file)
        seen.begin(name)
        for row in _source_rows(file, drop_bom, seen, plain):
            yield row if isinstance(row, PlainEntry) else replace(row, file=name)


def _source_rows(
    source: KeySource, drop_bom: bool, seen: Duplicates, plain: bool
) -> Iterator[AuditEntry | PlainEntry]:
    """``iter_rows`` over one source (a file, text, bytes or lines)."""
    earlier_digest = seen.earlier_digest
    for item in _entries(source, drop_bom=drop_bom, plain=plain):
        if type(item) is PlainEntry:
            line_no, utf8 = item.line_no, True
            earlier = earlier_digest(item.digest, line_no)
            if earlier is None:
                yield item
                continue
            key = _judge_line(item.line)
        else:
            assert not isinstance(item, PlainEntry)  # for the type: ``type`` did not narrow
            line_no, key, utf8 = item
            earlier = seen.earlier(key, line_no)
        extra = []
        if not utf8:
            extra.append("The line is not valid UTF-8; the undecodable bytes are shown as U+FFFD.")
        if earlier is not None:
            extra.append(f"Duplicate key: the same key is already on {earlier}.")
        if not extra:
            yield AuditEntry(line_no, key, key.problems, key.status)
        else:
            status: Status = "error" if key.status == "error" else "warning"
            yield AuditEntry(line_no, key, [*key.problems, *extra], status)


def audit_keys(source: KeySource) -> pd.DataFrame:
    """One row per authorized_keys entry of ``source`` (see ``audit_lines``).

    Columns: ``line_no`` (Int64), ``status`` (string: ok, warning, error),
    ``key_type``, ``bits`` (Int64), ``fingerprint`` (``SHA256:...`` as ``ssh-keygen
    -l`` prints it), ``comment``, ``api_valid`` and ``key_valid`` (boolean),
    ``problems`` (list of str) and ``options`` (list of str, environment values
    redacted). Missing values are ``<NA>``. A list of files (see ``audit_lines``) adds a
    first column, ``file``: the path as given.
    """
    import pandas as pd

    entries = audit_lines(source)
    rows = [entry.as_dict() for entry in entries]
    columns = dict(AUDIT_COLUMNS)
    if isinstance(source, list | tuple) and key_files(source) is not None:
        columns = {"file": "python", **columns}
        for entry, row in zip(entries, rows, strict=True):
            row["file"] = entry.file

    def column(name: str, dtype: str) -> Any:
        values = [row[name] for row in rows]
        if dtype == "object":
            return pd.Series(values, dtype=object)
        if dtype == "python":
            return pd.array(values, dtype=pd.StringDtype("python"))
        return pd.array(values, dtype=dtype)  # type: ignore[call-overload]

    return pd.DataFrame({name: column(name, dtype) for name, dtype in columns.items()})

"""Audit SSH public keys before they replace the account's keys: the public API.

Each authorized_keys entry is judged twice, because two different programs will
read it: the API (``api_valid``: the spec's pattern, judged as an ECMA-262 engine
judges it, see ``_api_rule``) and OpenSSH on the pods (``key_valid``: the key
material is a key ``sshd`` accepts, judged as ``sshkey_read`` does, see
``_sshwire``). Everything else is advice: each problem is one sentence, and its
severity decides the entry's ``status`` (``ok``, ``warning`` or ``error``).

Secrets never leave the audit: a pasted private key is recognised and reported
as such without its text being kept, printed or put in a frame, and problem
messages never quote key material or unrecognised text.

This module audits, normalizes and diffs sets of entries; the parts live in private
modules: ``_authorized_line`` judges one line (sshd's reading of it, its options,
why the API's pattern fails) and defines ``AuthorizedKey``; ``_keysource`` reads
paths, text, bytes and lines into entries, joining multi-line blocks.

Only the standard library is imported here; ``audit_keys`` imports pandas when
called, so the command line (``_keys_cli``) stays fast.
"""

from __future__ import annotations

import binascii
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ccanalytics.errors import KeyNormalizationError
from ccanalytics.keys._line import _REJECT, AuthorizedKey, Status, _judge_line

# Re-exported: a public constant of this module before the split.
from ccanalytics.keys._line import RECOMMENDED_RSA_BITS as RECOMMENDED_RSA_BITS
from ccanalytics.keys._source import (
    _RFC4716_BEGIN,
    KeySource,
    _entries,
    _private_key,
    _private_key_kind,
    _rfc4716,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "AuditEntry",
    "AuthorizedKey",
    "KeptKey",
    "KeyChange",
    "KeyNormalizationError",
    "KeyOptionsDroppedWarning",
    "KeyRef",
    "KeySource",
    "audit_keys",
    "audit_lines",
    "diff_ssh_keys",
    "normalize_key_lines",
    "parse_authorized_key",
]

_REDACTED = "<redacted>"


class KeyOptionsDroppedWarning(UserWarning):
    """``normalize_key_lines`` dropped sshd options the API cannot store."""


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class AuditEntry:
    """One row of an audit: the entry at ``line_no`` plus file-level findings."""

    line_no: int
    key: AuthorizedKey = field(repr=False)
    problems: list[str]
    status: Status

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
        return {
            "line_no": self.line_no,
            "status": self.status,
            "key_type": self.key_type,
            "bits": self.bits,
            "fingerprint": self.fingerprint,
            "comment": self.comment,
            "api_valid": self.api_valid,
            "key_valid": self.key_valid,
            "problems": list(self.problems),
            "options": self.options,
        }


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

    ``source`` is a path (``str`` or ``os.PathLike``), the text of a file, its bytes,
    or an iterable of lines. A ``str`` without a line feed that names an existing
    file is read as that file. Line feeds separate entries; a ``\\r`` before one is
    kept (and reported). Blank and ``#`` lines are skipped. Later copies of a key
    (same type and fingerprint) get a warning naming the first line.
    """
    return _audit(source, drop_bom=False)


def _audit(source: KeySource, *, drop_bom: bool) -> list[AuditEntry]:
    entries: list[AuditEntry] = []
    first_seen: dict[tuple[str, str], int] = {}
    for line_no, key, utf8 in _entries(source, drop_bom=drop_bom):
        problems = list(key.problems)
        status = key.status
        extra = []
        if not utf8:
            extra.append("The line is not valid UTF-8; the undecodable bytes are shown as U+FFFD.")
        if key.fingerprint is not None and key.key_type is not None:
            ident = (key.key_type, key.fingerprint)
            earlier = first_seen.setdefault(ident, line_no)
            if earlier != line_no:
                extra.append(f"Duplicate key: the same key is already on line {earlier}.")
        if extra:
            problems += extra
            status = "error" if status == "error" else "warning"
        entries.append(AuditEntry(line_no, key, problems, status))
    return entries


def audit_keys(source: KeySource) -> pd.DataFrame:
    """One row per authorized_keys entry of ``source`` (see ``audit_lines``).

    Columns: ``line_no`` (Int64), ``status`` (string: ok, warning, error),
    ``key_type``, ``bits`` (Int64), ``fingerprint`` (``SHA256:...`` as ``ssh-keygen
    -l`` prints it), ``comment``, ``api_valid`` and ``key_valid`` (boolean),
    ``problems`` (list of str) and ``options`` (list of str, environment values
    redacted). Missing values are ``<NA>``.
    """
    import pandas as pd

    rows = [entry.as_dict() for entry in audit_lines(source)]

    def column(name: str) -> list[Any]:
        return [row[name] for row in rows]

    return pd.DataFrame(
        {
            "line_no": pd.array(column("line_no"), dtype="Int64"),
            "status": pd.array(column("status"), dtype="string"),
            "key_type": pd.array(column("key_type"), dtype="string"),
            "bits": pd.array(column("bits"), dtype="Int64"),
            "fingerprint": pd.array(column("fingerprint"), dtype="string"),
            "comment": pd.array(column("comment"), dtype="string"),
            "api_valid": pd.array(column("api_valid"), dtype="boolean"),
            "key_valid": pd.array(column("key_valid"), dtype="boolean"),
            "problems": pd.Series(column("problems"), dtype=object),
            "options": pd.Series(column("options"), dtype=object),
        }
    )


# --------------------------------------------------------------------------- replacing keys


def _api_line(key: AuthorizedKey) -> str:
    """``<type> <base64> [comment]`` for a key OpenSSH accepted: same bytes, API form."""
    assert key.public_key is not None
    blob = binascii.b2a_base64(key.public_key.blob, newline=False).decode("ascii")
    comment = " ".join((key.comment or "").replace("\r", " ").split())
    return f"{key.public_key.key_type} {blob}" + (f" {comment}" if comment else "")


def _why_unusable(key: AuthorizedKey) -> str:
    if key.is_private_key:
        return "it is a private key (not copied; remove it and replace that key pair)"
    reasons = [p for p in key.problems if not p.startswith(_REJECT)] or key.problems
    return "no valid public key: " + " ".join(reasons)


class _NoKeysError(KeyNormalizationError):
    """``normalize_key_lines`` found no key at all, and the caller did not allow that."""

    def __init__(self) -> None:
        reason = (
            "the input has no keys (it is empty, or only blank and # lines); passed to"
            " update_ssh_keys that would remove every key on the account"
        )
        self.errors = [reason]
        Exception.__init__(self, reason + ": pass allow_empty=True if that is what you want")


def normalize_key_lines(lines: KeySource, *, allow_empty: bool = False) -> list[str]:
    """The keys of ``lines`` rewritten in the form the API accepts, without changing a key.

    Options, line endings, extra spaces and tabs, leading whitespace, blank and
    ``#`` lines go; a key written as ``rsa-sha2-256`` becomes ``ssh-rsa``; RFC 4716
    blocks become one line; later copies of a key are dropped. Dropping sshd
    options (``from=``, ``command=``...) loosens access, so it is announced with a
    ``KeyOptionsDroppedWarning``. Raises ``KeyNormalizationError`` listing every
    entry that is not a valid public key (private keys included, never quoted).

    An input with no key at all (empty, or only blank and ``#`` lines) also raises
    ``KeyNormalizationError``: its ``[]``, passed to ``update_ssh_keys``, would remove
    every key on the account. Pass ``allow_empty=True`` to get ``[]`` on purpose.
    """
    out: list[str] = []
    failures: list[str] = []
    dropped: list[str] = []
    seen: set[tuple[str, str]] = set()
    for entry in _audit(lines, drop_bom=True):
        key = entry.key
        if key.public_key is None or key.fingerprint is None or key.key_type is None:
            failures.append(f"line {entry.line_no}: {_why_unusable(key)}")
            continue
        if (key.key_type, key.fingerprint) in seen:
            continue
        seen.add((key.key_type, key.fingerprint))
        out.append(_api_line(key))
        if key.options:
            names = ", ".join(name for name, _ in key.options)
            dropped.append(f"line {entry.line_no} ({names})")
    if failures:
        raise KeyNormalizationError(failures)
    if not out and not allow_empty:
        raise _NoKeysError()
    if dropped:
        warnings.warn(
            "sshd options were dropped (the API cannot store them, so pods will not"
            " enforce them): " + "; ".join(dropped),
            KeyOptionsDroppedWarning,
            stacklevel=2,
        )
    return out


@dataclass(frozen=True)
class KeyRef:
    """A key identified by fingerprint, with what a reader needs to recognise it."""

    fingerprint: str
    key_type: str
    comment: str | None
    bits: int | None

    def __str__(self) -> str:
        return f"{self.key_type} {self.fingerprint} {self.comment or '(no comment)'}"


@dataclass(frozen=True)
class KeptKey(KeyRef):
    """A key in both sets; ``previous_comment`` is its comment in the current set."""

    previous_comment: str | None = None

    @property
    def comment_changed(self) -> bool:
        return self.comment != self.previous_comment


@dataclass(frozen=True)
class KeyChange:
    """What replacing the current keys with the proposed ones would change."""

    added: list[KeyRef]
    removed: list[KeyRef]
    kept: list[KeptKey]
    unidentified: list[str] = field(default_factory=list)

    @property
    def is_destructive(self) -> bool:
        """True when a key that works today would stop working."""
        return bool(self.removed)

    @property
    def has_changes(self) -> bool:
        return bool(self.added or self.removed or any(k.comment_changed for k in self.kept))

    def __str__(self) -> str:
        renamed = sum(k.comment_changed for k in self.kept)
        head = f"{len(self.added)} added, {len(self.removed)} removed, {len(self.kept)} kept" + (
            f" ({renamed} with a new comment)" if renamed else ""
        )
        lines = [head]
        lines += [f"  + {ref}" for ref in self.added]
        lines += [f"  - {ref}" for ref in self.removed]
        for kept in self.kept:
            if kept.comment_changed:
                lines.append(
                    f"  ~ {kept.key_type} {kept.fingerprint} comment"
                    f" {kept.previous_comment or '(none)'!r} -> {kept.comment or '(none)'!r}"
                )
        lines += [f"  ? {note}" for note in self.unidentified]
        return "\n".join(lines)


def _refs(source: KeySource, side: str, notes: list[str]) -> dict[tuple[str, str], KeyRef]:
    refs: dict[tuple[str, str], KeyRef] = {}
    for entry in audit_lines(source):
        key = entry.key
        if key.fingerprint is None or key.key_type is None:
            notes.append(f"{side} line {entry.line_no}: {_why_unusable(key)}")
            continue
        ref = KeyRef(key.fingerprint, key.key_type, key.comment, key.bits)
        refs.setdefault((key.key_type, key.fingerprint), ref)
    return refs


def diff_ssh_keys(current: KeySource, proposed: KeySource) -> KeyChange:
    """What a replacement of ``current`` by ``proposed`` would change, key by key.

    Keys are matched by type and fingerprint, so the same key with another comment
    is kept (``KeptKey.comment_changed``). Entries that are not valid keys cannot
    be matched and are listed in ``unidentified``. Sources are read as by
    ``audit_lines`` (pass ``ssh_keys.keys`` for the API's current set).
    """
    notes: list[str] = []
    before = _refs(current, "current", notes)
    after = _refs(proposed, "proposed", notes)
    kept = [
        KeptKey(ref.fingerprint, ref.key_type, ref.comment, ref.bits, before[ident].comment)
        for ident, ref in after.items()
        if ident in before
    ]
    return KeyChange(
        added=[ref for ident, ref in after.items() if ident not in before],
        removed=[ref for ident, ref in before.items() if ident not in after],
        kept=kept,
        unidentified=notes,
    )

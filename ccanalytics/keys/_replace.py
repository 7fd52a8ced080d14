"""Replacing the account's keys safely: ``normalize_key_lines`` and ``diff_ssh_keys``.

``update_ssh_keys`` replaces the whole set, so both steps before it are careful:
normalizing never changes a key, announces dropped options and refuses an input
with no keys; diffing shows, key by key, what a replacement would add and remove.
"""

from __future__ import annotations

import binascii
import warnings
from dataclasses import dataclass, field

from ccanalytics.errors import KeyNormalizationError
from ccanalytics.keys._audit import audit_lines, iter_audit
from ccanalytics.keys._line import AuthorizedKey
from ccanalytics.keys._reasons import REJECT
from ccanalytics.keys._source import KeySource

__all__ = [
    "KeptKey",
    "KeyChange",
    "KeyNormalizationError",
    "KeyOptionsDroppedWarning",
    "KeyRef",
    "diff_ssh_keys",
    "normalize_key_lines",
]


class KeyOptionsDroppedWarning(UserWarning):
    """``normalize_key_lines`` dropped sshd options the API cannot store."""


def _api_line(key: AuthorizedKey) -> str:
    """``<type> <base64> [comment]`` for a key OpenSSH accepted: same bytes, API form."""
    assert key.public_key is not None
    blob = binascii.b2a_base64(key.public_key.blob, newline=False).decode("ascii")
    comment = " ".join((key.comment or "").replace("\r", " ").split())
    return f"{key.public_key.key_type} {blob}" + (f" {comment}" if comment else "")


def _why_unusable(key: AuthorizedKey) -> str:
    if key.is_private_key:
        return "it is a private key (not copied; remove it and replace that key pair)"
    reasons = [p for p in key.problems if not p.startswith(REJECT)] or key.problems
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
    for entry in iter_audit(lines, drop_bom=True):
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

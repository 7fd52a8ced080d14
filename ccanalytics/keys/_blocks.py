"""Entries of several lines: RFC 4716 (SSH2) public key blocks, PEM and PuTTY blocks, and
pasted private keys, which are recognised and reported without their text being kept.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Iterator
from typing import TypeAlias

from ccanalytics.keys._line import AuthorizedKey, _Findings, _key_advice, _strcspn
from ccanalytics.keys._reasons import API_FORM as _API_FORM, REJECT as _REJECT
from ccanalytics.keys._sshwire import (
    KEY_TYPE_NAMES,
    KeyFormatError,
    PublicKey,
    decode_base64,
    parse_public_key_blob,
)

# Underscored names are for ``keys``, not public API.
__all__ = [
    "_MARKER_WORDS",
    "_RFC4716_BEGIN",
    "Line",
    "_Lines",
    "_pem_block",
    "_private_key",
    "_private_key_body",
    "_private_key_kind",
    "_rfc4716",
    "_rfc4716_lines",
    "_span",
]

#: What a line of a source is: its text, and whether its bytes were valid UTF-8.
Line: TypeAlias = tuple[str, bool]


# --------------------------------------------------------------------------- private keys

_PRIVATE_MARKERS = (
    ("PRIVATE KEY-----", "a PEM private key"),
    ("PuTTY-User-Key-File-", "a PuTTY private key (.ppk)"),
    ("b3BlbnNzaC1rZXktdjE", "the body of an OpenSSH private key"),  # base64("openssh-key-v1")
    ("SSH PRIVATE KEY FILE FORMAT", "an SSH1 private key"),
    ("BEGIN SSH2 ENCRYPTED PRIVATE KEY", "an SSH.com private key"),
)
# A base64 token that could be DER: SEQUENCE with a 1- or 2-byte length, 64+ chars.
_DER_PRIVATE = re.compile(r"(?<![A-Za-z0-9+/])M[IHG][A-Za-z0-9+/]{62,}")


# Every marker holds one of these: a line without them holds no marker (three searches).
_MARKER_WORDS = ("PRIVATE", "PuTTY-User-Key-File-", "b3BlbnNzaC1rZXktdjE")
assert all(any(word in marker for word in _MARKER_WORDS) for marker, _ in _PRIVATE_MARKERS)


def _private_key_kind(text: str) -> str | None:
    """What kind of private key ``text`` contains, if any (never what it says)."""
    for marker, kind in _PRIVATE_MARKERS:
        if marker in text:
            return kind
    for match in _DER_PRIVATE.finditer(text):
        if _is_der_private(match.group()):
            return "the body of a PEM private key"
    return None


def _is_der_private(token: str) -> bool:
    """DER ``SEQUENCE { INTEGER 0|1, ...}``: PKCS#1, SEC 1 and PKCS#8 private keys."""
    try:
        head = binascii.a2b_base64(token[:16])
    except ValueError:
        return False
    if len(head) < 7 or head[0] != 0x30:
        return False
    skip = 2 + (head[1] & 0x7F if head[1] & 0x80 else 0)
    return head[skip : skip + 3] in (b"\x02\x01\x00", b"\x02\x01\x01")


def _private_key(kind: str, lines: str) -> AuthorizedKey:
    message = (
        f"This is a private key ({kind}{lines}), not a public key: never paste or upload it."
        " Remove it, treat it as exposed (replace the key pair), and use the public half"
        " (the .pub file, or the output of 'ssh-keygen -y -f KEYFILE')."
    )
    return AuthorizedKey("", (), None, None, None, None, False, False, [message], "error", True)


# --------------------------------------------------------------------------- blocks

_RFC4716_BEGIN = "---- BEGIN SSH2 PUBLIC KEY ----"
_RFC4716_END = "---- END SSH2 PUBLIC KEY ----"


def _rfc4716(lines: list[str], span: str) -> AuthorizedKey:
    """An RFC 4716 (SSH2) public key block: a real key, in a form the API cannot take."""
    found = _Findings()
    found.error(
        _REJECT + f"it is an RFC 4716 (SSH2) public key block{span}; the API needs one line"
        f" {_API_FORM} (convert it with 'ssh-keygen -i -f FILE')."
    )
    body, comment, continued = [], None, False
    for raw in lines[1:]:
        line = raw.strip()
        if line == _RFC4716_END:
            break
        if continued or ":" in line:
            continued = line.endswith("\\")
            tag, _, value = line.partition(":")
            if tag.strip().lower() == "comment":
                comment = value.strip().strip('"') or None
            continue
        body.append(line)
    key: PublicKey | None = None
    try:
        key = parse_public_key_blob(decode_base64("".join(body)))
    except KeyFormatError as err:
        found.error(f"OpenSSH would refuse this key: {err}.")
    if key is not None:
        _key_advice(found, key)
    return AuthorizedKey(
        line="\n".join(lines),
        options=(),
        key_type=key.key_type if key else None,
        comment=comment,
        fingerprint=key.fingerprint if key else None,
        bits=key.bits if key else None,
        api_valid=False,
        key_valid=key is not None,
        problems=found.messages,
        status=found.status,
        public_key=key,
    )


def _pem_public(kind: str, span: str) -> AuthorizedKey:
    message = (
        _REJECT + f"it is a PEM {kind} block{span}, not an OpenSSH public key"
        " (convert a PEM public key with 'ssh-keygen -i -m PKCS8 -f FILE')."
    )
    return AuthorizedKey("", (), None, None, None, None, False, False, [message], "error")


class _Lines:
    """A source's lines, numbered from 1, with a look at the next one (blocks need it)."""

    __slots__ = ("_ahead", "_lines", "line_no")

    def __init__(self, lines: Iterator[Line]) -> None:
        self._lines = lines
        self._ahead: Line | None = None
        self.line_no = 0

    def peek(self) -> Line | None:
        if self._ahead is None:
            self._ahead = next(self._lines, None)
        return self._ahead

    def idle(self) -> bool:
        """Whether no line was looked at ahead: the next line is the source's next."""
        return self._ahead is None

    def put_back(self, line: Line) -> None:
        """``line``, taken from the source directly, is the next one ``take`` gives."""
        self._ahead = line

    def take(self) -> Line | None:
        line = self._ahead
        if line is None:
            line = next(self._lines, None)
            if line is None:
                return None
        else:
            self._ahead = None
        self.line_no += 1
        return line


def _is_key_line(text: str) -> bool:
    return text.lstrip(" \t")[: _strcspn(text.lstrip(" \t"))] in KEY_TYPE_NAMES


def _span(first: int, last: int) -> str:
    return f", lines {first}-{last}" if last > first else ""


def _pem_block(lines: _Lines, stripped: str, kind: str | None) -> AuthorizedKey:
    """A PEM or PuTTY block, up to its end line or the next key line."""
    first = lines.line_no
    stop = "-----END" if stripped.startswith("-----") else "Private-MAC:"
    while (ahead := lines.peek()) is not None and not _is_key_line(ahead[0]):
        lines.take()
        if ahead[0].strip().startswith(stop):
            break
    span = _span(first, lines.line_no)
    if kind is not None:
        return _private_key(kind, span)
    label = stripped.strip("-").removeprefix("BEGIN").strip()
    shown = label.lower() if re.fullmatch(r"[A-Z0-9 ]{1,40}", label) else "data"
    return _pem_public(shown, span)


_BASE64_LINE = re.compile(r"[A-Za-z0-9+/=]+")


def _private_key_body(lines: _Lines, kind: str) -> AuthorizedKey:
    """A pasted private key line, and the rest of its base64 body."""
    first = lines.line_no
    while (ahead := lines.peek()) is not None and _BASE64_LINE.fullmatch(ahead[0].strip()):
        lines.take()
    return _private_key(kind, _span(first, lines.line_no))


def _rfc4716_lines(lines: _Lines, text: str, utf8: bool) -> tuple[list[str], bool]:
    """An RFC 4716 block's lines, up to and including its end line."""
    block = [text]
    while (line := lines.take()) is not None:
        block.append(line[0])
        utf8 = utf8 and line[1]
        if line[0].strip() == _RFC4716_END:
            break
    return block, utf8

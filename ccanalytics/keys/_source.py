"""Key sources: a path, the text of a file, its bytes or its lines, read as entries.

``_entries`` splits a ``KeySource`` at line feeds (a ``str`` without one that names
an existing file is read as that file; bytes are decoded as UTF-8, noting lines that
are not) and judges each entry with ``_authorized_line``. Multi-line blocks become one
entry: RFC 4716 (SSH2) public key blocks, PEM blocks, and pasted private keys, which
are recognised and reported without their text being kept.
"""

from __future__ import annotations

import binascii
import os
import re
from collections.abc import Iterable, Iterator
from typing import TypeAlias

from ccanalytics.keys._line import (
    _API_FORM,
    _REJECT,
    AuthorizedKey,
    _Findings,
    _judge_line,
    _key_advice,
    _strcspn,
)
from ccanalytics.keys._sshwire import (
    KEY_TYPE_NAMES,
    KeyFormatError,
    PublicKey,
    decode_base64,
    parse_public_key_blob,
)

# Underscored names are for ``keys``, not public API.
__all__ = [
    "_RFC4716_BEGIN",
    "KeySource",
    "_entries",
    "_private_key",
    "_private_key_kind",
    "_rfc4716",
]


#: A path, the text of a file, its bytes, or the lines themselves.
KeySource: TypeAlias = str | os.PathLike[str] | bytes | bytearray | Iterable[str | bytes]


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


# --------------------------------------------------------------------------- sources


def _decode(raw: bytes) -> tuple[str, bool]:
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), False


def _source_lines(source: KeySource) -> Iterator[tuple[str, bool]]:
    """The entries of ``source`` as (text, was valid UTF-8), split at line feeds."""
    if isinstance(source, os.PathLike) or (
        isinstance(source, str) and "\n" not in source and os.path.isfile(source)
    ):
        with open(source, "rb") as file:
            yield from _source_lines(file.read())
        return
    if isinstance(source, str):
        for line in source.split("\n"):
            yield line, True
        return
    if isinstance(source, bytes | bytearray | memoryview):
        for raw in bytes(source).split(b"\n"):
            yield _decode(raw)
        return
    if not isinstance(source, Iterable):
        raise TypeError(
            "expected a path, text, bytes or an iterable of lines, not " + type(source).__name__
        )
    for item in source:
        if isinstance(item, bytes | bytearray):
            text, ok = _decode(bytes(item))
        elif isinstance(item, str):
            text, ok = item, True
        else:
            raise TypeError(f"lines must be str or bytes, not {type(item).__name__}")
        if text.endswith("\n"):
            text = text[:-1]
        for part in text.split("\n"):
            yield part, ok


def _is_key_line(text: str) -> bool:
    return text.lstrip(" \t")[: _strcspn(text.lstrip(" \t"))] in KEY_TYPE_NAMES


def _entries(
    source: KeySource, *, drop_bom: bool = False
) -> Iterator[tuple[int, AuthorizedKey, bool]]:
    """(line number, judgement, was valid UTF-8) for every entry; blocks become one.

    ``drop_bom`` removes a byte order mark that starts the input (normalizing does;
    auditing reports it, since sshd does not skip it either).
    """
    lines = list(_source_lines(source))
    if drop_bom and lines and lines[0][0].startswith("\ufeff"):
        lines[0] = (lines[0][0][1:], lines[0][1])
    i = 0
    while i < len(lines):
        text, utf8 = lines[i]
        line_no = i + 1
        probe = text.lstrip("\ufeff") if i == 0 else text
        stripped = probe.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        kind = _private_key_kind(text)
        if stripped.startswith("-----BEGIN") or stripped.startswith("PuTTY-User-Key-File-"):
            stop = "-----END" if stripped.startswith("-----") else "Private-MAC:"
            j = i + 1
            while j < len(lines) and not _is_key_line(lines[j][0]):
                j += 1
                if lines[j - 1][0].strip().startswith(stop):
                    break
            span = f", lines {line_no}-{j}" if j > i + 1 else ""
            if kind is not None:
                yield line_no, _private_key(kind, span), True
            else:
                label = stripped.strip("-").removeprefix("BEGIN").strip()
                shown = label.lower() if re.fullmatch(r"[A-Z0-9 ]{1,40}", label) else "data"
                yield line_no, _pem_public(shown, span), True
            i = j
            continue
        if kind is not None:
            j = i + 1  # swallow the rest of a pasted base64 body
            while j < len(lines) and re.fullmatch(r"[A-Za-z0-9+/=]+", lines[j][0].strip()):
                j += 1
            span = f", lines {line_no}-{j}" if j > i + 1 else ""
            yield line_no, _private_key(kind, span), True
            i = j
            continue
        if stripped == _RFC4716_BEGIN:
            j = i + 1
            while j < len(lines) and lines[j][0].strip() != _RFC4716_END:
                j += 1
            j = min(j + 1, len(lines))
            block = [t for t, _ in lines[i:j]]
            yield line_no, _rfc4716(block, f", lines {line_no}-{j}"), all(u for _, u in lines[i:j])
            i = j
            continue
        yield line_no, _judge_line(text), utf8
        i += 1

"""One authorized_keys line, read as sshd reads it and as the API's pattern reads it.

``_judge_line`` turns a line into an ``AuthorizedKey``: sshd's reading of it
(``auth_check_authkeys_line``: a key, else options followed by a key, each key read
as ``sshkey_read`` reads it), the syntax of its options (``sshauthopt_parse``), the
reasons the API's pattern rejects it (in words, never quoting the line), and advice
on keys OpenSSH accepts but nobody should still use. ``AuthorizedKey``, the result
every judgement builds, is defined here and re-exported by ``keys``.
"""

from __future__ import annotations

import binascii
import hashlib
import re
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, NamedTuple, TypeAlias

from ccanalytics.keys._options import advance_past_options, options_advice, parse_options
from ccanalytics.keys._reasons import (
    BOTH_REJECT,
    REJECT,
    Reason,
    api_reasons,
    described_word,
    newer_key_type,
)
from ccanalytics.keys._sshwire import (
    KEY_TYPE_NAMES,
    Certificate,
    KeyFormatError,
    PublicKey,
    read_public_key,
)
from ccanalytics.keys.api_rule import ECMA_WHITESPACE, matches_api_pattern

# Underscored names are for ``_keysource`` and ``keys``, not public API.
__all__ = [
    "RECOMMENDED_RSA_BITS",
    "AuthorizedKey",
    "PlainEntry",
    "Status",
    "_Findings",
    "_judge_line",
    "_key_advice",
    "_openssh_view",
    "_plain_entry",
    "_read_line",
    "_strcspn",
    "looks_like_path",
]


Status: TypeAlias = Literal["ok", "warning", "error"]

RECOMMENDED_RSA_BITS = 3072  # NIST SP 800-57 Part 1: 128-bit security from 2031 on


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class AuthorizedKey:
    """One authorized_keys entry as the API and OpenSSH would judge it.

    ``line`` is the text judged, except for a private key, whose text is not kept
    (``line`` is then empty). ``repr`` shows neither the line nor option values.
    """

    line: str
    options: tuple[tuple[str, str | None], ...]
    key_type: str | None
    comment: str | None
    fingerprint: str | None
    bits: int | None
    api_valid: bool
    key_valid: bool
    problems: list[str]
    status: Status
    is_private_key: bool = False
    public_key: PublicKey | None = None

    @property
    def certificate(self) -> Certificate | None:
        return None if self.public_key is None else self.public_key.certificate

    def __repr__(self) -> str:
        names = tuple(name for name, _ in self.options)
        return (
            f"AuthorizedKey(status={self.status!r}, key_type={self.key_type!r},"
            f" bits={self.bits!r}, fingerprint={self.fingerprint!r}, comment={self.comment!r},"
            f" options={names!r}, api_valid={self.api_valid!r}, key_valid={self.key_valid!r},"
            f" problems={self.problems!r})"
        )


class _Findings:
    """Problems in the order found, each with its severity."""

    __slots__ = ("errors", "messages")

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.errors = 0

    def error(self, message: str) -> None:
        self.messages.append(message)
        self.errors += 1

    def warning(self, message: str) -> None:
        self.messages.append(message)

    @property
    def status(self) -> Status:
        if self.errors:
            return "error"
        return "warning" if self.messages else "ok"


class PlainEntry(NamedTuple):
    """A line ``_judge_line`` finds ``ok`` with nothing to say, judged without objects.

    What a file is mostly made of: a plain key (no certificate, no options) whose type
    is written as OpenSSH writes it, a short printable comment and no advice. Its
    ``AuthorizedKey`` would say ``api_valid``, ``key_valid``, status ``ok``, no
    problems and no options; ``_judge_line(line)`` builds it when one is wanted.
    """

    line_no: int
    line: str
    key_type: str
    bits: int
    fingerprint: str
    comment: str | None
    digest: bytes  # the fingerprint's SHA-256 digest (what duplicates are found by)


# --------------------------------------------------------------------------- one line

_ECMA_SPACE = frozenset(ECMA_WHITESPACE)


def _strcspn(text: str, start: int = 0) -> int:
    """Index of the first space or tab at or after ``start`` (``len`` if none)."""
    space, tab = text.find(" ", start), text.find("\t", start)
    if space == -1:
        return len(text) if tab == -1 else tab
    return space if tab == -1 else min(space, tab)


@lru_cache(maxsize=1024)
def _read_key(type_name: str, key_text: str) -> PublicKey | KeyFormatError:
    """``read_public_key``, remembered: files repeat the same keys with other comments."""
    try:
        return read_public_key(type_name, key_text)
    except KeyFormatError as err:
        return err


@dataclass(frozen=True, slots=True)
class _Read:
    """One ``sshkey_read`` attempt on a line: ``word`` is its first, known type or not."""

    word: str
    type_token: str | None
    key_token: str | None
    comment: str | None
    result: PublicKey | KeyFormatError


def _sshkey_read(text: str) -> _Read:
    """``sshkey_read`` on ``text``: type, blank, base64, blank, comment."""
    end = _strcspn(text)
    type_token = text[:end]
    if type_token not in KEY_TYPE_NAMES:
        return _Read(type_token, None, None, None, KeyFormatError("no key type", "unknown-type"))
    rest = text[end:].lstrip(" \t")
    if end == len(text) or not rest:
        missing = KeyFormatError("nothing follows the key type", "truncated")
        return _Read(type_token, type_token, None, None, missing)
    end = _strcspn(rest)
    comment = rest[end:].lstrip(" \t").rstrip() or None
    key = _read_key(type_token, rest[:end])
    return _Read(type_token, type_token, rest[:end], comment, key)


def _key_advice(found: _Findings, key: PublicKey, *, cert_authority: bool = False) -> None:
    """Warnings about keys OpenSSH accepts but nobody should still use.

    With ``cert_authority`` the options' advice speaks for a certificate instead.
    """
    plain = key.plain_type
    if plain == "ssh-rsa":
        if key.bits < RECOMMENDED_RSA_BITS:
            found.warning(
                f"This RSA key is only {key.bits} bits; {RECOMMENDED_RSA_BITS} bits is the"
                " minimum recommended today. Replace it with an ed25519 key."
            )
        e = key.rsa_exponent or 0
        if e < 3:
            found.error(f"The RSA public exponent is {e}: such a key accepts forged signatures.")
        elif not e & 1:
            found.warning("The RSA public exponent is even: this key cannot verify a signature.")
    elif plain == "ssh-dss":
        found.warning(
            "DSA (ssh-dss) keys are deprecated: OpenSSH disables them by default since 7.0"
            " and removed them in 10.0. Replace it with an ed25519 key."
        )
    cert = key.certificate
    if cert is not None and not cert_authority:
        found.warning(
            "This is an OpenSSH certificate, not a plain public key: sshd never authorizes"
            " a certificate listed in authorized_keys (list its CA key with cert-authority)."
        )
    if cert is not None and cert.valid_before < time.time():
        expired = time.strftime("%Y-%m-%d", time.gmtime(min(cert.valid_before, 2**37)))
        found.warning(f"The certificate expired on {expired}.")


# A plain line as ``_plain_entry`` takes it: type, one space, base64, and perhaps one
# space and a comment of printable ASCII that neither starts nor ends with a blank, and
# is under 64 characters (so it cannot hold the body of a private key: _source).
_COMMENT = r"(?: ([!-~](?:[ !-~]{0,61}[!-~])?))?"
# Ed25519, the commonest, in the only form OpenSSH writes: the 51-byte blob's base64
# (68 characters, no padding) starts with its type and length; the 26th character
# holds the length's last 2 bits (zero: A to P) and the key's first 4. Any 32 bytes
# are an Ed25519 key to OpenSSH, so the form alone makes the key valid.
_ED25519_LINE = re.compile(
    r"ssh-ed25519 (AAAAC3NzaC1lZDI1NTE5AAAAI[A-P][A-Za-z0-9+/]{42})" + _COMMENT
)
_PLAIN_TYPES = (
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "ssh-dss",
)
_PLAIN_LINE = re.compile(
    "(" + "|".join(map(re.escape, _PLAIN_TYPES)) + r") ([A-Za-z0-9+/]+={0,2})" + _COMMENT
)


# NamedTuple's own __new__ is a Python function: a tenth of a plain line's time.
_new_plain = tuple.__new__
_a2b_base64, _b2a_base64, _sha256 = binascii.a2b_base64, binascii.b2a_base64, hashlib.sha256
_ed25519_match = _ED25519_LINE.fullmatch


def _plain_entry(line_no: int, text: str) -> PlainEntry | None:
    """``text`` as a ``PlainEntry``, if ``_judge_line`` would find nothing to say about it.

    Only the key is read (cached like any line's); the rest follows from the line's
    form: it matches the API's pattern, OpenSSH reads it as a key with no options and
    this comment, and there is no blank or NUL to warn about. A private key's marker
    in the line is for the caller to rule out (``_source``).
    """
    match = _ed25519_match(text)
    if match is not None:
        key_text, comment = match.groups()
        digest = _sha256(_a2b_base64(key_text)).digest()
        fingerprint = "SHA256:" + _b2a_base64(digest, newline=False)[:-1].decode()
        return _new_plain(
            PlainEntry, (line_no, text, "ssh-ed25519", 256, fingerprint, comment, digest)
        )
    match = _PLAIN_LINE.fullmatch(text)
    if match is None:
        return None
    key = _read_key(match[1], match[2])
    if not isinstance(key, PublicKey) or key.key_type != match[1]:
        return None
    advice = _Findings()
    _key_advice(advice, key)
    if advice.messages:
        return None
    digest = binascii.a2b_base64(key.fingerprint[7:] + "=")
    return PlainEntry(line_no, text, key.key_type, key.bits, key.fingerprint, match[3], digest)


@dataclass(frozen=True, slots=True)
class _LineRead:
    """What sshd makes of a line: the key read, and the options in front of it."""

    read: _Read
    options: tuple[tuple[str, str | None], ...] = ()
    options_error: str | None = None
    has_options: bool = False


def _read_line(view: str) -> _LineRead:
    """sshd's ``auth_check_authkeys_line``: a key, else options followed by a key."""
    first = _sshkey_read(view)
    if isinstance(first.result, PublicKey):
        return _LineRead(first)
    end = advance_past_options(view)
    if end is None:
        return _LineRead(first, options_error="an option has an unterminated double quote")
    second = _sshkey_read(view[end:].lstrip(" \t"))
    # Options explain the line if a key follows them, or if no key type led the line
    # and one follows them (known, or newer than this audit).
    explained = second.type_token or newer_key_type(second.word)
    if isinstance(second.result, PublicKey) or (first.type_token is None and explained):
        options, error = parse_options(view[:end])
        return _LineRead(second, tuple(options), error, True)
    return _LineRead(first)


@dataclass(frozen=True, slots=True)
class _Refusal:
    """Why OpenSSH refuses a line: ``text`` alone, or ``both`` when the API refuses it too.

    ``both`` is None when the API's own words for the shared fault say it better.
    """

    cause: str
    text: str
    both: str | None = None


# (API cause, OpenSSH cause) pairs that are one fault seen by both programs.
_SAME_FAULT = frozenset(
    {
        ("bom", "bom"),
        ("no-key", "no-key"),
        ("type", "type"),
        ("after-key", "base64"),
        ("separator", "type"),
    }
)
# OpenSSH causes that make these API reasons mere consequences of them.
_CONSEQUENCES = {"type": {"no-key"}, "path": {"no-key", "type"}}


def _judge_line(text: str) -> AuthorizedKey:
    """Judge a single authorized_keys line (any ``str``): read it, find faults, build."""
    api_valid = matches_api_pattern(text)
    view, truncated = _openssh_view(text)
    line = _read_line(view)
    key, refusal = _openssh_verdict(text, view, line)
    found = _Findings()
    api = [] if api_valid else api_reasons(text, line.has_options)
    api_messages, refusal_message = _one_message_per_fault(api, refusal)
    for message in api_messages:
        found.error(message)
    if truncated:
        found.warning("The line contains a NUL character; OpenSSH ignores everything after it.")
    if line.options_error is not None:
        found.error(f"sshd will ignore this line: {line.options_error}.")
    if refusal_message is not None:
        found.error(refusal_message)
    _advice(found, text, line, key)
    read = line.read
    return AuthorizedKey(
        line=text,
        options=line.options,
        key_type=key.key_type if key else read.type_token,
        comment=read.comment if read.type_token else None,
        fingerprint=key.fingerprint if key else None,
        bits=key.bits if key else None,
        api_valid=api_valid,
        key_valid=key is not None,
        problems=found.messages,
        status=found.status,
        public_key=key,
    )


def _openssh_verdict(
    text: str, view: str, line: _LineRead
) -> tuple[PublicKey | None, _Refusal | None]:
    """The key sshd would accept on the line, or why it refuses the line."""
    read = line.read
    key = read.result if isinstance(read.result, PublicKey) else None
    if key is not None and text.lstrip(" \t").startswith("\ufeff"):
        # sshd sees the mark's bytes glued to the key type.
        return None, _Refusal(
            "bom",
            "OpenSSH would refuse this key: the byte order mark hides its type.",
            "it starts with an invisible byte order mark (U+FEFF), as some Windows editors"
            " write, which also hides the key type from OpenSSH",
        )
    if key is None and (line.options_error is None or line.has_options):
        return None, _key_problem(view, read)
    return key, None


def _advice(found: _Findings, text: str, line: _LineRead, key: PublicKey | None) -> None:
    """Warnings on a line sshd accepts: the key, its options, its type's spelling, a blank end."""
    read = line.read
    if key is not None:
        names = {name.lower() for name, _ in line.options}
        _key_advice(found, key, cert_authority="cert-authority" in names)
        if line.options_error is None:
            for warning in options_advice(line.options, certificate=key.certificate is not None):
                found.warning(warning)
        if read.type_token is not None and read.type_token != key.key_type:
            found.warning(f"OpenSSH writes this key type as {key.key_type}, not {read.type_token}.")
    stripped = text.rstrip("\r\n")
    ends_blank = stripped and (stripped[-1].isspace() or stripped[-1] in _ECMA_SPACE)
    if ends_blank and read.key_token is not None:  # no key: that is the problem, not the blank
        found.warning("The line ends with whitespace, which the API keeps in the comment.")


def _one_message_per_fault(
    api: list[Reason], refusal: _Refusal | None
) -> tuple[list[str], str | None]:
    """The API's messages, and OpenSSH's unless it was merged into one of them."""
    if refusal is None:
        return [REJECT + reason.text + "." for reason in api], None
    dropped = _CONSEQUENCES.get(refusal.cause, set())
    messages, merged = [], False
    for reason in api:
        if reason.cause in dropped:
            continue
        if not merged and (reason.cause, refusal.cause) in _SAME_FAULT:
            words = refusal.both if reason.cause == refusal.cause else None
            messages.append(BOTH_REJECT + (words or reason.text) + ".")
            merged = True
        else:
            messages.append(REJECT + reason.text + ".")
    return messages, None if merged else refusal.text


def _openssh_view(text: str) -> tuple[str, bool]:
    """What OpenSSH reads of ``text``, and whether a NUL cut it short.

    That is up to the line feed and, C strings being what they are, up to a NUL;
    without leading blanks or a byte order mark (reported separately).
    """
    view = text.partition("\n")[0]
    truncated = "\0" in view
    if truncated:
        view = view.partition("\0")[0]
    return view.lstrip(" \t").removeprefix("\ufeff"), truncated


NEWER_TYPE = "a key type newer than this audit knows"
# A path's shape: from the root, the home folder or here, a Windows drive, or a key file's name.
_PATH_LIKE = re.compile(r"(?:~[^/\s]*|\.{1,2})?/.*|[A-Za-z]:\\.*|.*(?:\.pub|authorized_keys\d?)")


def looks_like_path(text: str) -> bool:
    """Whether ``text`` (stripped) has the shape of a file's path (``/``, ``~/``, ``.pub``...)."""
    return _PATH_LIKE.fullmatch(text.strip()) is not None


def _key_problem(view: str, read: _Read) -> _Refusal:
    """Why OpenSSH would refuse a line whose key it could not read."""
    if read.type_token is None:
        token = read.word
        if newer_key_type(token):
            return _Refusal(
                "newer-type",
                f"The key type '{token}' is {NEWER_TYPE}: its key could not be checked,"
                " and an OpenSSH older than the type refuses the line.",
            )
        if not view.strip():
            return _Refusal("no-key", "There is no key on this line.", "there is no key on it")
        if looks_like_path(view):
            return _Refusal(
                "path",
                "This looks like a file path, not a key (a path is read as a file only when"
                " it is the whole source).",
            )
        described = described_word(token)
        both = f"it starts with {described}, not with an SSH key type"
        if described.startswith("'"):
            return _Refusal("type", f"The key type {described} is not one OpenSSH knows.", both)
        text = f"The line does not start with an SSH key type: it starts with {described}."
        return _Refusal("type", text, both)
    error = read.result
    assert isinstance(error, KeyFormatError)
    if read.key_token is None:
        return _Refusal("no-key", f"OpenSSH would refuse this key: {error}.")
    return _Refusal(error.code, f"OpenSSH would refuse this key: {error}.")

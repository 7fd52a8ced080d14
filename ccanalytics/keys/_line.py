"""One authorized_keys line, read as sshd reads it and as the API's pattern reads it.

``_judge_line`` turns a line into an ``AuthorizedKey``: sshd's reading of it
(``auth_check_authkeys_line``: a key, else options followed by a key, each key read
as ``sshkey_read`` reads it), the syntax of its options (``sshauthopt_parse``), the
reasons the API's pattern rejects it (in words, never quoting the line), and advice
on keys OpenSSH accepts but nobody should still use. ``AuthorizedKey``, the result
every judgement builds, is defined here and re-exported by ``keys``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, TypeAlias

from ccanalytics.keys._api_rule import ECMA_WHITESPACE, matches_api_pattern
from ccanalytics.keys._sshwire import (
    KEY_TYPE_NAMES,
    Certificate,
    KeyFormatError,
    PublicKey,
    read_public_key,
)

# Underscored names are for ``_keysource`` and ``keys``, not public API.
__all__ = [
    "RECOMMENDED_RSA_BITS",
    "_API_FORM",
    "_REJECT",
    "AuthorizedKey",
    "Status",
    "_Findings",
    "_judge_line",
    "_key_advice",
    "_strcspn",
]


Status: TypeAlias = Literal["ok", "warning", "error"]

RECOMMENDED_RSA_BITS = 3072  # NIST SP 800-57 Part 1: 128-bit security from 2031 on
_API_FORM = "'<type> <base64> [comment]'"
_REJECT = "The API will reject this line: "


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


# --------------------------------------------------------------------------- one line

_TYPE_LIKE = re.compile(r"[A-Za-z0-9][A-Za-z0-9@._+-]{0,63}")
_API_TYPE_PREFIX = re.compile(r"(?:ssh|ecdsa|sk)-")
_ECMA_SPACE = frozenset(ECMA_WHITESPACE)
_NON_SPACE_RUN = re.compile("[^" + "".join(f"\\u{ord(c):04x}" for c in ECMA_WHITESPACE) + "]*")
_OPTION_NAME = re.compile(r"[A-Za-z0-9-]*")
_OPTION_FLAGS = frozenset(
    [
        "restrict",
        "cert-authority",
        *(
            prefix + flag
            for flag in (
                "port-forwarding",
                "agent-forwarding",
                "x11-forwarding",
                "touch-required",
                "verify-required",
                "pty",
                "user-rc",
            )
            for prefix in ("", "no-")
        ),
    ]
)
_OPTION_VALUES = frozenset(
    (
        "command",
        "principals",
        "environment",
        "from",
        "expiry-time",
        "permitopen",
        "permitlisten",
        "tunnel",
    )
)


def _strcspn(text: str, start: int = 0) -> int:
    """Index of the first space or tab at or after ``start`` (``len`` if none)."""
    space, tab = text.find(" ", start), text.find("\t", start)
    if space == -1:
        return len(text) if tab == -1 else tab
    return space if tab == -1 else min(space, tab)


@lru_cache(maxsize=8192)
def _read_key(type_name: str, key_text: str) -> PublicKey | KeyFormatError:
    """``read_public_key``, remembered: files repeat the same keys with other comments."""
    try:
        return read_public_key(type_name, key_text)
    except KeyFormatError as err:
        return err


@dataclass(frozen=True, slots=True)
class _Read:
    """One ``sshkey_read`` attempt on a line."""

    type_token: str | None
    key_token: str | None
    comment: str | None
    result: PublicKey | KeyFormatError


def _sshkey_read(text: str) -> _Read:
    """``sshkey_read`` on ``text``: type, blank, base64, blank, comment."""
    end = _strcspn(text)
    type_token = text[:end]
    if type_token not in KEY_TYPE_NAMES:
        return _Read(None, None, None, KeyFormatError("no key type", "unknown-type"))
    rest = text[end:].lstrip(" \t")
    if end == len(text) or not rest:
        missing = KeyFormatError("nothing follows the key type", "truncated")
        return _Read(type_token, None, None, missing)
    end = _strcspn(rest)
    comment = rest[end:].lstrip(" \t").rstrip() or None
    return _Read(type_token, rest[:end], comment, _read_key(type_token, rest[:end]))


def _advance_past_options(text: str) -> int | None:
    """``sshkey_advance_past_options``: end of the options, or None for an open quote."""
    quoted = False
    i, n = 0, len(text)
    while i < n and (quoted or text[i] not in " \t"):
        if text[i] == "\\" and text[i + 1 : i + 2] == '"':
            i += 1
        elif text[i] == '"':
            quoted = not quoted
        i += 1
    return None if quoted else i


def _parse_options(text: str) -> tuple[list[tuple[str, str | None]], str | None]:
    """``sshauthopt_parse``'s syntax: the options, and why sshd would refuse them."""
    options: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while i < n:
        match = _OPTION_NAME.match(text, i)
        assert match is not None
        name = match.group()
        i = match.end()
        value = None
        if i < n and text[i] == "=":
            if i + 1 >= n or text[i + 1] != '"':
                return options, "an option value is not in double quotes"
            j = i + 2
            chars = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and text[j + 1 : j + 2] == '"':
                    j += 1
                chars.append(text[j])
                j += 1
            if j >= n:
                return options, "an option value has no closing quote"
            value, i = "".join(chars), j + 1
        known = _OPTION_VALUES if value is not None else _OPTION_FLAGS
        if name.lower() not in known:
            shown = _shown_type(name) if len(name) <= 40 else ""
            return options, f"the option{shown} is not one sshd knows"
        options.append((name, value))
        if i < n:
            if text[i] != ",":
                return options, "the options are not separated by commas"
            i += 1
    return options, None


def _shown_type(token: str) -> str:
    """A word fit to quote: it looks like a type or option name, not like a secret."""
    if _TYPE_LIKE.fullmatch(token) and "-" in token:
        return f" '{token}'"
    return ""


def _api_reasons(text: str, options: bool) -> list[str]:
    """Why the API's pattern fails on ``text``, in words and never quoting it.

    Walks the pattern ``(ssh|ecdsa|sk)-\\S+ \\S+([ \\t][^\\n\\r]*)?`` piece by piece
    (``\\S`` as ECMA-262 reads it) and names the first piece that does not fit.
    """
    if not text:
        return ["the line is empty"]
    reasons = []
    if text[0] == "\ufeff":
        reasons.append(
            "it starts with an invisible byte order mark (U+FEFF), as some Windows editors write"
        )
    elif text[0] in _ECMA_SPACE or text[0].isspace():
        reasons.append("it starts with whitespace")
    if options:
        reasons.append(
            f"it starts with sshd options; the API accepts only {_API_FORM}, so the"
            " options cannot be kept and would not be enforced on the pods"
        )
    body = text.rstrip("\r\n")
    if "\r" in text[len(body) :]:
        reasons.append("it ends with a carriage return, left by Windows (CRLF) line endings")
    elif "\r" in body:
        reasons.append("it contains a carriage return (U+000D)")
    if "\n" in text:
        if "\n" in body:
            reasons.append("it contains a line break: it is more than one line")
        else:
            reasons.append("it ends with a line feed (the line terminator is part of the text)")
    if reasons:
        return reasons
    type_end = _non_space_end(text, 0)
    if not _API_TYPE_PREFIX.match(text):
        shown = _shown_type(text[:type_end])
        reasons.append(f"the key type{shown} does not start with ssh-, ecdsa- or sk-")
    if type_end == len(text):
        reasons.append("nothing follows the key type")
    elif text[type_end] != " ":
        reasons.append(
            "the key type and the key must be separated by exactly one space, not "
            + _char_name(text[type_end])
        )
    else:
        key_end = _non_space_end(text, type_end + 1)
        if key_end == type_end + 1:
            reasons.append("the key type and the key must be separated by exactly one space")
        elif key_end < len(text) and text[key_end] not in " \t":
            reasons.append(
                "the key must be followed by a space or tab before the comment, not "
                + _char_name(text[key_end])
            )
    if not reasons:
        reasons.append(f"it does not have the form {_API_FORM} the API requires")
    return reasons


def _non_space_end(text: str, start: int) -> int:
    """End of the run of characters ECMA-262's ``\\S`` matches from ``start``."""
    match = _NON_SPACE_RUN.match(text, start)
    return match.end() if match else start


def _char_name(char: str) -> str:
    return "a tab" if char == "\t" else f"the whitespace character U+{ord(char):04X}"


def _key_advice(found: _Findings, key: PublicKey) -> None:
    """Warnings about keys OpenSSH accepts but nobody should still use."""
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
    if cert is not None:
        found.warning(
            "This is an OpenSSH certificate, not a plain public key: sshd never authorizes"
            " a certificate listed in authorized_keys (list its CA key with cert-authority)."
        )
        if cert.valid_before < time.time():
            expired = time.strftime("%Y-%m-%d", time.gmtime(min(cert.valid_before, 2**37)))
            found.warning(f"The certificate expired on {expired}.")


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
    end = _advance_past_options(view)
    if end is None:
        return _LineRead(first, options_error="an option has an unterminated double quote")
    second = _sshkey_read(view[end:].lstrip(" \t"))
    # Options explain the line if a key follows them, or if no key type led the line.
    if isinstance(second.result, PublicKey) or (first.type_token is None and second.type_token):
        options, error = _parse_options(view[:end])
        return _LineRead(second, tuple(options), error, True)
    return _LineRead(first)


def _judge_line(text: str) -> AuthorizedKey:
    """Judge a single authorized_keys line (any ``str``)."""
    api_valid = matches_api_pattern(text)
    view, truncated = _openssh_view(text)
    line = _read_line(view)
    read = line.read
    found = _Findings()
    if not api_valid:
        for reason in _api_reasons(text, line.has_options):
            found.error(_REJECT + reason + ".")
    if truncated:
        found.warning("The line contains a NUL character; OpenSSH ignores everything after it.")
    key = read.result if isinstance(read.result, PublicKey) else None
    if line.options_error is not None:
        found.error(f"sshd will ignore this line: {line.options_error}.")
    if key is not None and text.lstrip(" \t").startswith("\ufeff"):
        key = None  # sshd sees the mark's bytes glued to the key type
        found.error("OpenSSH would refuse this key: the byte order mark hides its type.")
    elif key is None:
        if line.options_error is None or line.has_options:
            found.error(_key_problem(view, read))
    else:
        _key_advice(found, key)
        if read.type_token is not None and read.type_token != key.key_type:
            found.warning(f"OpenSSH writes this key type as {key.key_type}, not {read.type_token}.")
    stripped = text.rstrip("\r\n")
    if stripped and (stripped[-1].isspace() or stripped[-1] in _ECMA_SPACE):
        found.warning("The line ends with whitespace, which the API keeps in the comment.")
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


_PATH_LIKE = re.compile(r"(?:~|\.{1,2})?/\S*|[A-Za-z]:\\\S*|\S*(?:\.pub|authorized_keys\d?)")


def _key_problem(view: str, read: _Read) -> str:
    """The sentence for a line whose key material OpenSSH would refuse."""
    if read.type_token is None:
        token = view[: _strcspn(view)]
        if not view.strip():
            return "There is no key on this line."
        if _PATH_LIKE.fullmatch(view.strip()):
            return "This looks like a file path, but no such file could be read."
        shown = _shown_type(token)
        if shown:
            return f"The key type{shown} is not one OpenSSH knows."
        return "The line does not start with an SSH key type."
    return f"OpenSSH would refuse this key: {read.result}."

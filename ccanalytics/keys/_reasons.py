"""Why a line is refused, in words that never quote what might be a secret.

``api_reasons`` walks the API's pattern over a line and names, for each piece that
does not fit, what is wrong and where, each with a ``cause`` so that the same fault
seen by OpenSSH is reported once (``_line`` merges them). ``shown_word`` decides
whether a word from the line may be quoted back: only when it is built from the
words of real key types or sshd options; anything else (an API token pasted by
mistake, ``xoxb-...``, ``sk-live-...``) is named by its kind and length instead.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ccanalytics.keys._sshwire import KEY_TYPE_NAMES
from ccanalytics.keys.api_rule import ECMA_WHITESPACE

# Underscored names are for ``_line`` and ``_source``, not public API.
__all__ = [
    "API_FORM",
    "BOTH_REJECT",
    "REJECT",
    "Reason",
    "api_reasons",
    "described_word",
    "looks_like_secret",
    "newer_key_type",
    "shown_option",
    "shown_word",
]

API_FORM = "'<type> <base64> [comment]'"
REJECT = "The API will reject this line: "
BOTH_REJECT = "Neither the API nor OpenSSH will accept this line: "


class Reason(NamedTuple):
    """One fault of a line: ``cause`` names it for merging, ``text`` says it."""

    cause: str
    text: str


# --------------------------------------------------------------------------- quoting words

_WORD_PARTS = re.compile(r"[-@._]")
# The words key type names are made of (and of near misses worth naming: ed448, x509v3).
_KEY_TYPE_WORDS = frozenset(
    part.lower() for name in KEY_TYPE_NAMES for part in _WORD_PARTS.split(name)
) | {"rsa", "dsa", "ed448", "x509v3", "sign", "pgp", "sha1", "sha256", "sha512", "v00", "com"}
_OPTION_WORDS = frozenset(
    [
        "restrict",
        "cert",
        "authority",
        "no",
        "port",
        "agent",
        "x11",
        "forwarding",
        "touch",
        "verify",
        "required",
        "pty",
        "user",
        "rc",
        "command",
        "principals",
        "environment",
        "from",
        "expiry",
        "time",
        "permitopen",
        "permitlisten",
        "tunnel",
        "permit",
        "open",
        "listen",
    ]
)
# What a mistaken paste usually is; the first match names its kind. Words made of key
# type words are quoted before these apply ("sk-ssh-ed448@openssh.com" is no secret).
_SECRET_KINDS = (
    (re.compile(r"xox[abposr]-"), "a Slack token"),
    (re.compile(r"sk-ant-"), "an Anthropic API key"),
    (re.compile(r"[sr]k_(?:live|test)_|sk-(?:live|test)-"), "a Stripe secret key"),
    (re.compile(r"sk-"), "an API secret key"),
    (re.compile(r"gh[pousr]_|github_pat_"), "a GitHub token"),
    (re.compile(r"glpat-"), "a GitLab token"),
    (re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{12}"), "an AWS access key id"),
    (re.compile(r"AIza"), "a Google API key"),
    (re.compile(r"eyJ"), "a JSON Web Token"),
    (re.compile(r"sbx-"), "a sandbox API key"),
)


# Plain lowercase words joined by hyphens ("no-such-thing"): a typo, not a secret.
_PLAIN_WORDS = re.compile(r"[a-z]{1,12}(?:-[a-z]{1,12}){0,3}")


# A pasted credential of no known kind: 20 or more of a token's characters, mixing lower
# case, upper case and digits (a file's name seldom does all three at that length).
_TOKEN = re.compile(r"(?=[^a-z]*[a-z])(?=[^A-Z]*[A-Z])(?=\D*\d)[A-Za-z0-9+/=_-]{20,}")


def looks_like_secret(word: str) -> bool:
    """Whether ``word`` may be a credential: a known kind of token, or shaped like one."""
    return _secret_kind(word) is not None or _TOKEN.fullmatch(word) is not None


def _secret_kind(word: str) -> str | None:
    return next((name for pattern, name in _SECRET_KINDS if pattern.match(word)), None)


def _quotable(word: str, vocabulary: frozenset[str]) -> bool:
    """Whether ``word`` is safe to quote: real words, never anything shaped like a secret."""
    parts = _WORD_PARTS.split(word.lower())
    if len(word) <= 64 and "" not in parts and all(part in vocabulary for part in parts):
        return True
    return _secret_kind(word) is None and _PLAIN_WORDS.fullmatch(word) is not None


def _unshown(word: str) -> str:
    """``a 40-character word that looks like a Slack token``."""
    kind = _secret_kind(word)
    length = str(len(word))
    article = "an" if length.startswith("8") or length in ("11", "18") else "a"
    return f"{article} {length}-character word" + (f" that looks like {kind}" if kind else "")


# OpenSSH names the key types it adds <family>-<parts>@openssh.com, in lower case
# (ssh-mldsa44-ed25519@openssh.com, sk-ssh-ed25519-cert-v01@openssh.com): a word of
# that shape is a type newer than KEY_TYPE_NAMES, named rather than hidden. Each part
# is short, as OpenSSH's are, so that a token cannot hide in one.
_OPENSSH_TYPE_SHAPE = re.compile(r"(?:sk-)?(?:ssh|ecdsa)(?:-[a-z0-9]{1,12}){1,6}@openssh\.com")


def newer_key_type(word: str) -> bool:
    """Whether ``word`` is shaped like an OpenSSH key type that this audit does not know."""
    return word not in KEY_TYPE_NAMES and _OPENSSH_TYPE_SHAPE.fullmatch(word) is not None


def described_word(word: str) -> str:
    """``'ssh-ed448'`` for a word safe to quote, else its kind and length."""
    return f"'{word}'" if _quotable(word, _KEY_TYPE_WORDS) else _unshown(word) + " (not shown)"


def shown_word(word: str) -> str:
    """`` 'ssh-ed448'`` for a word safe to quote, else `` (its kind and length, not shown)``."""
    return f" '{word}'" if _quotable(word, _KEY_TYPE_WORDS) else f" ({_unshown(word)}, not shown)"


def shown_option(name: str) -> str:
    """`` 'no-x11'`` for an option name safe to quote, else its kind and length."""
    return f" '{name}'" if _quotable(name, _OPTION_WORDS) else f" ({_unshown(name)}, not shown)"


# --------------------------------------------------------------------------- the API's pattern

_API_TYPE_PREFIX = re.compile(r"(?:ssh|ecdsa|sk)-")
_ECMA_SPACE = frozenset(ECMA_WHITESPACE)
_NON_SPACE_RUN = re.compile("[^" + "".join(f"\\u{ord(c):04x}" for c in ECMA_WHITESPACE) + "]*")


def api_reasons(text: str, options: bool) -> list[Reason]:
    """Why the API's pattern fails on ``text``, in words and never quoting it.

    Walks the pattern ``(ssh|ecdsa|sk)-\\S+ \\S+([ \\t][^\\n\\r]*)?`` piece by piece
    (``\\S`` as ECMA-262 reads it) and names the pieces that do not fit.
    """
    if not text:
        return [Reason("no-key", "the line is empty")]
    reasons = _reasons_around(text, options)
    if reasons:
        return reasons
    reasons = _reasons_within(text)
    return reasons or [Reason("form", f"it does not have the form {API_FORM} the API requires")]


def _reasons_around(text: str, options: bool) -> list[Reason]:
    """What surrounds the key: a leading mark or blank, options, CR and LF."""
    reasons = []
    if text[0] == "\ufeff":
        reasons.append(
            Reason(
                "bom",
                "it starts with an invisible byte order mark (U+FEFF), as some Windows"
                " editors write",
            )
        )
    elif text[0] in _ECMA_SPACE or text[0].isspace():
        reasons.append(Reason("space", "it starts with whitespace"))
    if options:
        reasons.append(
            Reason(
                "options",
                f"it starts with sshd options; the API accepts only {API_FORM}, so the"
                " options cannot be kept and would not be enforced on the pods",
            )
        )
    body = text.rstrip("\r\n")
    if "\r" in text[len(body) :]:
        reasons.append(
            Reason("cr", "it ends with a carriage return, left by Windows (CRLF) line endings")
        )
    elif "\r" in body:
        reasons.append(Reason("cr", "it contains a carriage return (U+000D)"))
    if "\n" in body:
        reasons.append(Reason("lf", "it contains a line break: it is more than one line"))
    elif "\n" in text:
        reasons.append(
            Reason("lf", "it ends with a line feed (the line terminator is part of the text)")
        )
    return reasons


def _reasons_within(text: str) -> list[Reason]:
    """The type, the single space, the key and what may follow it."""
    reasons = []
    type_end = _non_space_end(text, 0)
    if not _API_TYPE_PREFIX.match(text):
        shown = shown_word(text[:type_end])
        reasons.append(
            Reason("type", f"the key type{shown} does not start with ssh-, ecdsa- or sk-")
        )
    if type_end == len(text) or not text[type_end:].strip(ECMA_WHITESPACE):
        reasons.append(Reason("no-key", "nothing follows the key type"))
    elif text[type_end] != " ":
        reasons.append(
            Reason(
                "separator",
                "the key type and the key must be separated by exactly one space, not "
                + _char_name(text[type_end]),
            )
        )
    else:
        key_end = _non_space_end(text, type_end + 1)
        if key_end == type_end + 1:
            reasons.append(
                Reason(
                    "separator", "the key type and the key must be separated by exactly one space"
                )
            )
        elif key_end < len(text) and text[key_end] not in " \t":
            reasons.append(
                Reason(
                    "after-key",
                    "the key must be followed by a space or tab before the comment, not "
                    + _char_name(text[key_end]),
                )
            )
    return reasons


def _non_space_end(text: str, start: int) -> int:
    """End of the run of characters ECMA-262's ``\\S`` matches from ``start``."""
    match = _NON_SPACE_RUN.match(text, start)
    return match.end() if match else start


def _char_name(char: str) -> str:
    return "a tab" if char == "\t" else f"the whitespace character U+{ord(char):04X}"

"""The API key: checked once when a client is built, and scrubbed from whatever the network says.

A key read from a file often ends in ``\\n`` (or ``\\r\\n`` from Windows); such a key
cannot go in an HTTP header, and the HTTP layer's complaint would quote it. So the
surrounding ASCII whitespace is stripped, and any other character that a bearer
token cannot hold is a :class:`ConfigurationError` naming its position and kind,
never the key.

A server or proxy may echo the ``Authorization`` header back, raw or escaped:
``repr``, a bytes repr, JSON escapes, percent-encoding in either case.
:class:`KeyScrubber` replaces every such form with ``***``.
"""

from __future__ import annotations

import re
import unicodedata

from ccanalytics.errors import ConfigurationError

__all__ = ["KeyScrubber", "checked_api_key"]

#: Stripped from both ends of a key: what files, shells and editors leave there.
_SURROUNDING_WHITESPACE = " \t\r\n\f\v"
#: A bearer token is printable ASCII without spaces (RFC 6750 is stricter still).
_FIRST_ALLOWED, _LAST_ALLOWED = "\x21", "\x7e"
_CONTROL_NAMES = {
    "\n": "line feed",
    "\r": "carriage return",
    "\t": "tab",
    "\x00": "NUL",
    "\x7f": "DEL",
}


def _kind_of(char: str) -> str:
    """What a character that cannot be in a key is, without showing the key."""
    code = f"U+{ord(char):04X}"
    if char == " ":
        return f"a space ({code})"
    if char in _CONTROL_NAMES:
        return f"a control character ({code} {_CONTROL_NAMES[char]})"
    if char < " " or "\x7f" <= char <= "\x9f":
        return f"a control character ({code})"
    name = unicodedata.name(char, "")
    return f"a non-ASCII character ({code}{' ' + name if name else ''})"


def _first_bad_character(key: str) -> tuple[int, str] | None:
    """``(1-based position, kind)`` of the first character a header cannot carry."""
    for index, char in enumerate(key):
        if not _FIRST_ALLOWED <= char <= _LAST_ALLOWED:
            return index + 1, _kind_of(char)
    return None


def checked_api_key(key: object, source: str) -> str:
    """``key`` without surrounding whitespace, or :class:`ConfigurationError`.

    ``source`` says where the key came from (``api_key=`` or the environment
    variable's name), for the message; the message never contains the key.
    """
    if not isinstance(key, str):
        raise ConfigurationError(f"the API key ({source}) must be a str, not {type(key).__name__}")
    stripped = key.strip(_SURROUNDING_WHITESPACE)
    if not stripped:
        raise ConfigurationError(f"the API key ({source}) is empty or only whitespace")
    bad = _first_bad_character(stripped)
    if bad is not None:
        position, kind = bad
        raise ConfigurationError(
            f"the API key ({source}) has {kind} at position {position} of {len(stripped)} "
            "(after stripping surrounding whitespace); an HTTP header cannot carry it. "
            "Copy the key again from the provider's console (the key is not shown here)"
        )
    return stripped


def _char_pattern(char: str) -> str:
    """Every way ``char`` may appear in an echo: itself, ``%XX`` (any case), escaped."""
    forms = [re.escape(char), f"%(?i:{ord(char):02x})"]
    if char in "\\'\"/":
        forms.append(re.escape("\\" + char))  # repr, bytes repr, JSON (\\/)
    forms.append(f"\\\\(?:x|u00)(?i:{ord(char):02x})")  # \\x2f, \\u002f
    return "(?:" + "|".join(forms) + ")"


class KeyScrubber:
    """Replaces the key, and its escaped and percent-encoded forms, with ``***``.

    The key is checked first (printable ASCII only), so these forms are all there
    are: ``repr`` and bytes reprs escape only quotes and backslashes, JSON also the
    slash, and percent-encoding may encode any character, in either case of hex.
    """

    def __init__(self, key: str) -> None:
        self._pattern = re.compile("".join(_char_pattern(c) for c in key))

    def __call__(self, text: str) -> str:
        return self._pattern.sub("***", text)

    def __repr__(self) -> str:
        return "KeyScrubber(***)"

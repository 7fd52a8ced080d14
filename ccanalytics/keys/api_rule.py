"""The API's rule for an SSH key element, judged exactly as the server judges it.

The spec's pattern is ``^(ssh|ecdsa|sk)-[^\\s]+ [^\\s]+([ \\t][^\\n\\r]*)?$`` and the
server checks it as a JSON-Schema (ECMA-262) regular expression.

Flags: the judgement assumes either none or ``u``, and these give the same verdict on
every string. JSON Schema says a pattern is ECMA-262, and validators differ on the
flag: Ajv compiles patterns with ``u`` by default (its ``unicodeRegExp`` option), an
engine called plainly uses none. Without ``u`` the engine walks UTF-16 code units,
with it code points; every piece of this pattern (``^``, ``$``, ``[^\\s]``,
``[ \\t]``, ``[^\\n\\r]``) matches a surrogate pair as two units or one code point
alike, and a lone surrogate either way, and ``\\s`` is the same set in both modes.
``tests/keys/test_api_rule.py`` asks node for both verdicts on every string it
tries, non-ASCII lines included. (A pattern with ``.``, a quantified astral
character or ``\\u{...}`` could differ between the two; this one has none.)

Python's ``re`` reads the same text differently in two ways, both corrected here:

- ``$`` also matches before a trailing ``\\n`` in Python; in ECMA-262 without the
  ``m`` flag it matches only at the end of input. We use ``\\Z``.
- ``\\s`` is another set of characters: ECMA-262's is WhiteSpace plus
  LineTerminator (includes U+FEFF; excludes U+001C-U+001F and U+0085, which Python
  counts). We spell ECMA's set out.

``tests/keys/test_api_rule.py`` checks this against node's ``RegExp`` on a table of
tricky strings and on random ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "API_KEY_PATTERN",
    "ECMA_WHITESPACE",
    "api_key_error",
    "api_key_errors",
    "matches_api_pattern",
]

#: The pattern as the spec writes it (an ECMA-262 regular expression).
API_KEY_PATTERN = r"^(ssh|ecdsa|sk)-[^\s]+ [^\s]+([ \t][^\n\r]*)?$"

#: ECMA-262 ``\s``: WhiteSpace (TAB VT FF SP NBSP ZWNBSP and Unicode Zs) + LineTerminator.
ECMA_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_WS = "".join(f"\\u{ord(c):04x}" for c in ECMA_WHITESPACE)
_PATTERN = re.compile(rf"(?:ssh|ecdsa|sk)-[^{_WS}]+ [^{_WS}]+(?:[ \t][^\n\r]*)?\Z")


def matches_api_pattern(element: str) -> bool:
    """True when an ECMA-262 engine matches the spec's pattern against ``element``."""
    return isinstance(element, str) and _PATTERN.match(element) is not None


def _describe(element: object) -> str:
    """Why an element fails, without echoing it (it could be a pasted secret)."""
    if not isinstance(element, str):
        return f"must be a string, not {type(element).__name__}"
    return f'does not match pattern "{API_KEY_PATTERN}"'


def api_key_error(index: int, key: object) -> str | None:
    """The server's error for element ``index`` (``"$.keys[<i>]: <message>"``), or None."""
    return None if matches_api_pattern(key) else f"$.keys[{index}]: {_describe(key)}"  # type: ignore[arg-type]


def api_key_errors(keys: Sequence[object]) -> list[str]:
    """Every element the server would reject, as ``"$.keys[<i>]: <message>"`` (its own form)."""
    return [error for i, key in enumerate(keys) if (error := api_key_error(i, key)) is not None]

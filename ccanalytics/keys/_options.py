"""sshd's options in front of a key: where they end, and whether sshd accepts them.

``advance_past_options`` is ``sshkey_advance_past_options`` (a quoted value may hold
blanks); ``parse_options`` is the syntax ``sshauthopt_parse`` accepts: known names,
values in double quotes, commas between. An unknown name is quoted back only when it
is safe to (see ``_reasons.shown_option``).
"""

from __future__ import annotations

import re

from ccanalytics.keys._reasons import shown_option

__all__ = ["advance_past_options", "parse_options"]

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


def advance_past_options(text: str) -> int | None:
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


def parse_options(text: str) -> tuple[list[tuple[str, str | None]], str | None]:
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
            word = re.match(r"[^,=]*", text[match.start() :])
            assert word is not None  # the whole word, not a quotable fragment of a token
            return options, f"the option{shown_option(word.group())} is not one sshd knows"
        options.append((name, value))
        if i < n:
            if text[i] != ",":
                return options, "the options are not separated by commas"
            i += 1
    return options, None

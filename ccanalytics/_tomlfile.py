"""Where a key sits in a TOML file of ours: one home for the line numbers in its errors.

:mod:`tomllib` reports a line only for a syntax error; once a file parses, a bad value
("a negative threshold", "an unknown key") has no line. The policy file of ``check``
and the team mapping of ``export showback`` are both a list of tables (``[[rule]]``,
``[[team]]``): :class:`Locator` finds the line of a key within the n-th such table, so
that every error names the file, the line and the key.

This module imports nothing heavy and nothing of ccanalytics but the error classes it
is handed: it sits in the base layer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = ["Locator"]

#: The caller's typed error, built as ``E(message, path=..., line=..., key=...)``.
E = TypeVar("E", bound=Exception)


class Locator(Generic[E]):
    """Finds the line of a key in ``text``, within the n-th ``[[table]]`` (1-based)."""

    def __init__(
        self, text: str, path: Path | None, *, table: str, error: Callable[..., E], what: str
    ) -> None:
        self.lines = text.splitlines()
        self.path = path
        self.make_error = error
        self.what = what  #: how a file without a path is called ("the policy")
        header = re.compile(rf"\s*\[\[\s*{re.escape(table)}\s*\]\]")
        self.headers = [i for i, line in enumerate(self.lines) if header.match(line)]

    def unknown_keys(
        self, table: Mapping[str, Any], known: Sequence[str], number: int | None, what: str
    ) -> None:
        for key in table:
            if key not in known:
                raise self.error(
                    number, f"unknown key {key!r} in {what} (known: {', '.join(known)})", key=key
                )

    def place(self) -> str:
        return str(self.path) if self.path is not None else self.what

    def error(self, number: int | None, message: str, key: str | None = None) -> E:
        """The caller's error for table ``number`` (None: the top level), naming the key."""
        line = self._line(number, key)
        at = f", line {line}" if line is not None else ""
        if key is not None and not re.search(rf"\b{re.escape(key)}\b", message):
            # The file, the line and the key, always: a reason from elsewhere (the one
            # duration parser's) or about a value ("two rules are called 'a'") names none.
            message = f"{key}: {message}"
        return self.make_error(f"{self.place()}{at}: {message}", path=self.path, line=line, key=key)

    def _line(self, number: int | None, key: str | None) -> int | None:
        start, end = 0, len(self.lines)
        if number is not None and number <= len(self.headers):
            start = self.headers[number - 1]
            later = [i for i in self.headers if i > start]
            end = later[0] if later else end
        if key is not None:
            pattern = re.compile(rf"(^|[\s{{,\[]){re.escape(key)}\s*=")
            for i in range(start, end):
                if pattern.search(self.lines[i].split("#", 1)[0]):
                    return i + 1
        return start + 1 if number is not None else None

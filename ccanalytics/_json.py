"""Reading JSON the service sent when the fast reader refuses it: one set of rules.

``orjson`` and ``msgspec`` refuse numbers beyond float range (``1e400``): the
standard library reads any JSON, and these rules say what such values become, for the
models (``api``) and the frames (``frames``) alike, so a pod is read the same way on
both paths: a float beyond range is ``None`` (``<NA>`` in a frame), an integer of any
length stays an integer unless it is too long to parse (``None``), the non-JSON
constants ``NaN``/``Infinity`` are ``None``, and a string holding a lone surrogate
(``"\\ud800"``: valid JSON syntax, but no Unicode text) is ``None``. Errors (``ValueError``, its subclass
``UnicodeDecodeError``, ``RecursionError`` for nesting past the interpreter's limit)
propagate for the caller to turn into its own typed error.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["tolerant_loads"]

#: Python refuses to parse integers of over 4,300 digits; none would fit a column anyway.
MAX_INT_DIGITS = 4000


def _none(text: str) -> None:
    return None


def _finite_or_none(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def _int_or_none(text: str) -> int | None:
    return int(text) if len(text) <= MAX_INT_DIGITS else None


def tolerant_loads(content: bytes | bytearray | memoryview | str) -> Any:
    """``content`` as Python objects, by the rules above (slow: only for what fast readers refuse)."""
    data = bytes(content) if isinstance(content, bytearray | memoryview) else content
    parsed = json.loads(
        data, parse_float=_finite_or_none, parse_int=_int_or_none, parse_constant=_none
    )
    return _text_only(parsed)


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _text_only(value: Any) -> Any:
    """``value`` with every string that is not Unicode text (a lone surrogate) as None."""
    if isinstance(value, str):
        return None if _SURROGATE.search(value) else value
    if isinstance(value, list):
        return [_text_only(item) for item in value]
    if isinstance(value, dict):
        return {
            key: _text_only(item)
            for key, item in value.items()
            if not _SURROGATE.search(key)  # a key that is no text names nothing we read
        }
    return value

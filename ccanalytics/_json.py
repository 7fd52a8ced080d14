"""Reading JSON the service sent when the fast reader refuses it: one set of rules.

``orjson`` and ``msgspec`` refuse numbers beyond float range (``1e400``): the
standard library reads any JSON, and these rules say what such values become, for the
models (``api``) and the frames (``frames``) alike, so a pod is read the same way on
both paths: a float beyond range is ``None`` (``<NA>`` in a frame), an integer of any
length stays an integer unless it is too long to parse (``None``), the non-JSON
constants ``NaN``/``Infinity`` as an object member's value are ``None``, and a string
holding a lone surrogate (``"\\ud800"``: valid JSON syntax, but no Unicode text) is
``None``. Errors (``ValueError``, its subclass
``UnicodeDecodeError``, ``RecursionError`` for nesting past the interpreter's limit)
propagate for the caller to turn into its own typed error; :class:`NotJsonError` (a
``ValueError``) is a constant anywhere else (an array's element, the whole document):
there it is no missing cell but an element, and dropping it would say nothing.

:func:`json_kind` names what a value is in JSON's words, for the messages that say
which element of a listing is not a pod object (:func:`not_a_pod`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["NotJsonError", "json_kind", "not_a_pod", "tolerant_loads"]

#: Python refuses to parse integers of over 4,300 digits; none would fit a column anyway.
MAX_INT_DIGITS = 4000


class NotJsonError(ValueError):
    """A constant JSON does not have (``NaN``, ``Infinity``) where no ``None`` can stand."""


class _Constant:
    """``NaN``/``Infinity`` as parsed, until :func:`_text_only` knows where it stands."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _finite_or_none(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def _int_or_none(text: str) -> int | None:
    return int(text) if len(text) <= MAX_INT_DIGITS else None


def tolerant_loads(content: bytes | bytearray | memoryview | str) -> Any:
    """``content`` as Python objects, by the rules above (slow: only for what fast readers refuse)."""
    data = bytes(content) if isinstance(content, bytearray | memoryview) else content
    parsed = json.loads(
        data, parse_float=_finite_or_none, parse_int=_int_or_none, parse_constant=_Constant
    )
    return _text_only(parsed)


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _text_only(value: Any) -> Any:
    """``value`` with every string that is not Unicode text (a lone surrogate) as None,
    and every constant a member's value as None (:class:`NotJsonError` elsewhere)."""
    if isinstance(value, str):
        return None if _SURROGATE.search(value) else value
    if isinstance(value, _Constant):
        raise NotJsonError(f"{value.text} is not JSON")
    if isinstance(value, list):
        return [_text_only(item) for item in value]
    if isinstance(value, dict):
        return {
            key: None if isinstance(item, _Constant) else _text_only(item)
            for key, item in value.items()
            if not _SURROGATE.search(key)  # a key that is no text names nothing we read
        }
    return value


#: JSON's words for the types the standard library reads it into.
_KINDS = ((bool, "a boolean"), (int | float, "a number"), (str, "a string"), (list, "an array"))


def json_kind(value: Any) -> str:
    """What ``value`` is, in JSON's words (``"a number"``; the type's name if not JSON's)."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    for kind, words in _KINDS:
        if isinstance(value, kind):
            return words
    return type(value).__name__


def not_a_pod(index: int, value: Any) -> str:
    """Why element ``index`` of a listing is refused: it is not a pod object."""
    return f"pod {index} is {json_kind(value)}, not a pod object"

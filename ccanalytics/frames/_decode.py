"""A listing's JSON bytes, decoded straight into pod rows (the loader's path).

The bytes are split into one undecoded slice per pod (``msgspec.Raw``) in one pass
that also checks the whole document is JSON and a listing. Each pod is then decoded
into typed structs (:data:`_Pod`, built with ``msgspec.defstruct`` from the field
table) that hold only the fields the frames read: everything else (``args``,
``env`` values, SSH commands, ...) is skipped without being turned into Python
objects, and the structs are not tracked by the garbage collector. The loop that
reads each pod's structs into its row is generated from the same table. That is what
makes this path faster than ``orjson.loads`` alone (benchmarks/loader.py).

Each leaf that a column takes as it is gets decoded as that column's type
(:data:`~ccanalytics.frames._fields.VALUE_TYPES`: ``str``, ``int``, ``float``,
``bool``, each or ``null``), so a chunk of pods that all decode needs no type check
afterwards; other leaves (the items of ``ports``, ``actions``) arrive as the JSON
types ``orjson`` would give. The reading rules (``<NA>`` for wrong types) are the
same code as for dicts: a pod with a value of another type is read as dicts.

A pod the structs cannot take (a block that is not an object, a value of another
type than its column's, a number beyond float range such as ``1e400``) is decoded again on its own with the standard library's
``json``, which reads any JSON, and goes through
:func:`~ccanalytics.frames._fields.dict_row`: one odd pod costs one slow pod, never
the listing. Numbers beyond float range become ``None`` there, so ``<NA>`` in their
cell; integers of any length stay integers (``<NA>`` wherever they do not fit). An
element that is not an object (``5``, ``null``) is no pod: the listing is refused,
naming it (dropped, its pod would be missing from every sum without a word).

Errors: a document that is not JSON, or not a listing, is reported as a message (a
:class:`Refusal`) rather than raised here, so that no traceback frame of this module
ever holds the body; the public functions raise it from frames that do not either.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, NamedTuple

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType

from ccanalytics._json import NotJsonError, not_a_pod, tolerant_loads
from ccanalytics.frames._fields import (
    BLOCKS,
    ELEMENTS,
    NAMES_ONLY,
    SOURCES,
    VALUE_TYPES,
    JsonObject,
    Row,
    _names,
    block_var,
    children,
    compiled,
    dict_row,
)

__all__ = [
    "NotAPod",
    "Refusal",
    "UnreadablePod",
    "decoded_rows",
    "objects_or_refusal",
    "split_listing",
]


class Refusal(NamedTuple):
    """Why a document is not a listing, in words that quote nothing from it."""

    message: str
    not_json: bool  # invalid JSON, as opposed to JSON of the wrong shape


class UnreadablePod(Exception):
    """A pod no reader can take (not UTF-8, nested past every parser's depth limit)."""

    def refusal(self) -> Refusal:
        return Refusal(str(self), not_json=True)


class NotAPod(UnreadablePod):
    """A listing element that is JSON but not an object: the listing is not one of pods."""

    def refusal(self) -> Refusal:
        return Refusal(str(self), not_json=False)


def _not_a_pod(index: int, parsed: Any) -> NotAPod:
    return NotAPod(not_a_pod(index, parsed))


# -- the structs: only what the frames read; leaves as sent (checked later) --------


#: Each block's struct type, by path, as :func:`_struct` builds them.
_BLOCK_STRUCTS: Final[dict[str, type[Struct]]] = {}


def _struct(block: str) -> type[Struct]:
    """The struct ``block`` ("" for the pod) decodes into: the keys the table reads.

    A block is ``Struct | None``: a block that is not an object (nor null) fails the
    pod, which then takes the standard library's path like any pod the structs refuse.
    """
    fields: list[tuple[str, Any, None]] = []
    for key in children(block):
        path = f"{block}.{key}" if block else key
        kind: Any = Any
        if path in VALUE_TYPES:
            kind = VALUE_TYPES[path] | None
        elif path in BLOCKS:
            kind = _struct(path) | None
        elif path in ELEMENTS:
            element: Any = ELEMENTS[path]  # a type built at run time: opaque to mypy
            kind = list[element] | None
        elif path in NAMES_ONLY:
            # Names only are read: the values stay undecoded slices of the body.
            kind = dict[str, Raw] | None
        fields.append((key, kind, None))
    struct = msgspec.defstruct("_" + (block_var(block) if block else "Pod"), fields, gc=False)
    _BLOCK_STRUCTS[block] = struct
    return struct


_Pod: Final = _struct("")


class _Listing(Struct):
    pods: list[Raw] | UnsetType | None = UNSET


_LISTING: Final = msgspec.json.Decoder(_Listing)
_LISTING_OR_ARRAY: Final = msgspec.json.Decoder(_Listing | list[Raw])
_POD: Final = msgspec.json.Decoder(_Pod)
_GOT: Final = re.compile(r"got `([^`]+)`")


def split_listing(
    content: bytes | bytearray | memoryview, *, bare_array: bool, null_pods: bool
) -> list[Raw] | list[JsonObject] | Refusal:
    """The listing's pods as undecoded slices, or why ``content`` is not a listing.

    ``bare_array``: a JSON array of pods is accepted too; ``null_pods``: so is
    ``{"pods": null}`` (as no pods). The loader accepts neither: the service sends
    neither, so they mean something else answered.
    """
    try:
        top = (_LISTING_OR_ARRAY if bare_array else _LISTING).decode(content)
    except msgspec.ValidationError as err:
        # msgspec's messages name JSON types and paths, never values.
        got = _GOT.search(str(err))
        kind = got.group(1) if got else "another shape"
        if "$.pods" in str(err):
            return Refusal(f"expected a list of pods, got {kind}", not_json=False)
        want = "a pod listing {'pods': [...]}" + (" or a list of pods" if bare_array else "")
        return Refusal(f"expected {want}, got {kind}", not_json=False)
    except msgspec.DecodeError as err:
        # JSON msgspec refuses but the standard library reads ("\ud800"): read slowly,
        # by the same rules as a refused pod; else it is not JSON, and msgspec says why.
        return _tolerant_listing(content, bare_array, null_pods, str(err))
    except RecursionError:
        return Refusal(f"not readable JSON ({len(content)} bytes: nested too deep)", not_json=True)
    if isinstance(top, list):
        return top
    if top.pods is UNSET:
        return Refusal(
            "expected a pod listing {'pods': [...]}, got an object without 'pods'", False
        )
    if top.pods is None:
        return [] if null_pods else Refusal("expected a list of pods, got null", not_json=False)
    return top.pods


def _tolerant_listing(
    content: bytes | bytearray | memoryview, bare_array: bool, null_pods: bool, why: str
) -> list[JsonObject] | Refusal:
    """The pods of a document only the standard library reads, as dicts (or why not)."""
    try:
        top = tolerant_loads(content)
    except NotJsonError as err:  # NaN where no None can stand: named, not a byte offset
        return Refusal(f"not valid JSON ({len(content)} bytes: {err})", not_json=True)
    except (ValueError, RecursionError):
        return Refusal(f"not valid JSON ({len(content)} bytes: {why})", not_json=True)
    pods = top if bare_array and isinstance(top, list) else None
    if isinstance(top, dict):
        pods = top.get("pods", UNSET)
        if pods is None and null_pods:
            return []
    if not isinstance(pods, list):
        return Refusal("expected a pod listing {'pods': [...]}", not_json=False)
    return objects_or_refusal(pods)


def objects_or_refusal(pods: list[Any]) -> list[JsonObject] | Refusal:
    """``pods`` if each is a JSON object, else why not: the first other element, named."""
    for index, pod in enumerate(pods):
        if not isinstance(pod, dict):
            return Refusal(not_a_pod(index, pod), not_json=False)
    return pods


def _fallback(raw: Raw, index: int) -> Any:
    """One pod the structs refused, read by the standard library (any JSON at all).

    Raises :class:`UnreadablePod` for the pods no reader can take: bytes that are not
    UTF-8, or nesting deeper than the standard library's recursion limit.
    """
    try:
        return tolerant_loads(bytes(raw))
    except UnicodeDecodeError:
        raise UnreadablePod(f"pod {index} is not valid UTF-8") from None
    except RecursionError:
        raise UnreadablePod(f"pod {index} is nested too deep to read") from None
    except ValueError as err:  # what msgspec refused as JSON, the standard library too
        raise UnreadablePod(f"pod {index} is not valid JSON ({type(err).__name__})") from None


def _struct_reader() -> str:
    """The source of :func:`decoded_rows`: the loop over slices, with the row of each
    decoded pod read straight off its structs (``b_ssh_proxy.host``)."""
    blocks = []
    for block in BLOCKS:
        parent, _, key = block.rpartition(".")
        var = block_var(block)
        blocks.append(f"        {var} = {block_var(parent)}.{key} or _NO_{var}\n")
    values = []
    for path in SOURCES:
        parent, _, key = path.rpartition(".")
        value = f"{block_var(parent)}.{key}"
        values.append(
            f"                _names({value}),\n"
            if path in NAMES_ONLY
            else f"                {value},\n"
        )
    return (
        "def decoded_rows(raws, first=0):\n"
        "    decode = _POD.decode\n"
        "    rows = []\n"
        "    add = rows.append\n"
        "    checked = True\n"
        "    for index, raw in enumerate(raws, first):\n"
        "        try:\n"
        "            pod = decode(raw)\n"
        "        except (MsgspecError, RecursionError, UnicodeDecodeError):\n"
        "            parsed = _fallback(raw, index)\n"
        "            if not isinstance(parsed, dict):\n"
        "                raise _not_a_pod(index, parsed)\n"
        "            add(dict_row(parsed))\n"
        "            checked = False\n"
        "            continue\n"
        f"{''.join(blocks)}"
        "        add(\n"
        "            (\n"
        f"{''.join(values)}"
        "            )\n"
        "        )\n"
        "    return rows, checked\n"
    )


#: The generated source of :func:`decoded_rows` (``print(_DECODED_ROWS_SOURCE)``).
_DECODED_ROWS_SOURCE: Final = _struct_reader()

#: Each pod slice as its row (:data:`~ccanalytics.frames._fields.SOURCES` order);
#: a slice that is not a JSON object is :class:`NotAPod`, naming its place. With the rows, whether every one of
#: them came off the typed structs (see :attr:`~ccanalytics.frames._fields.PodFields.checked`):
#: ``False`` once a pod was read as dicts. :class:`UnreadablePod` when a slice
#: cannot be read at all, naming it by its place in the listing (the slices start at
#: pod ``first``). One straight-line loop, generated from the field table.
decoded_rows: Final[Callable[[list[Raw], int], tuple[list[Row], bool]]] = compiled(
    "decoded_rows",
    _DECODED_ROWS_SOURCE,
    {
        "_POD": _POD,
        # Each block with every field None: stands in for a block that is missing.
        **{f"_NO_{block_var(b)}": _BLOCK_STRUCTS[b]() for b in BLOCKS},
        "MsgspecError": msgspec.MsgspecError,
        "_fallback": _fallback,
        "_not_a_pod": _not_a_pod,
        "dict_row": dict_row,
        "_names": _names,
    },
)

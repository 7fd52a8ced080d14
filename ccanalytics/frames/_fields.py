"""The raw fields a frame reads from each pod, before any type check: the table's paths.

A pod becomes one tuple of raw values while it is in cache, one per JSON path that
:data:`~ccanalytics.frames._columns.POD_FIELDS` reads (:data:`SOURCES`, in that
order); a chunk of tuples is then transposed into one sequence per path
(:class:`PodFields`), which the column builders (:mod:`ccanalytics.frames._pods`,
:mod:`ccanalytics.frames._gpus`) type-check and convert in bulk. :func:`dict_row`
reads a pod parsed into dicts; :mod:`ccanalytics.frames._decode` reads pods decoded
into typed structs into the same tuple, so both paths share every reading rule
after this point.

Both readers are generated from the table when this module is imported, as
``dataclasses`` generates ``__init__``: the source of one straight-line function
is built once and compiled. The reader is the hot loop of every load, so it does
no per-field dispatch at run time; and no tuple is kept in order by hand.
"""

from __future__ import annotations

import functools
import keyword
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, NamedTuple, TypeAlias, cast

import msgspec
from msgspec import Struct

from ccanalytics.api.podfields import BOOLEAN, FLOAT, INT, STRING, TIME
from ccanalytics.frames._columns import POD_FIELDS, PodField
from ccanalytics.frames._convert import IntArray, Values, _str_or_none, _string_column

__all__ = [
    "BLOCKS",
    "ELEMENTS",
    "EMPTY",
    "NAMES_ONLY",
    "SOURCES",
    "STATISTICS",
    "VALUE_TYPES",
    "JsonObject",
    "Origin",
    "PodFields",
    "Row",
    "block_var",
    "children",
    "cluster_ids",
    "compiled",
    "dict_row",
    "element_key",
    "source",
    "statuses",
]

JsonObject: TypeAlias = dict[str, Any]
#: One pod's raw values, one per path of :data:`SOURCES`, in that order.
Row: TypeAlias = tuple[Any, ...]

_STR: Final = frozenset({str})

# Stands in for a block that is missing or not an object. Read only, never mutated.
EMPTY: Final[JsonObject] = {}


def source(path: str) -> str:
    """The path whose value a row holds: a list's path for ``x[]`` and ``x[].k``."""
    return path.split("[]", 1)[0]


def element_key(path: str) -> str | None:
    """``k`` of ``x[].k``: the key read from each object of the list; else ``None``."""
    _, _, key = path.partition("[].")
    return key or None


#: The paths a row holds, in row order: each field's source, then the fallbacks.
SOURCES: Final[tuple[str, ...]] = tuple(
    dict.fromkeys(
        [*(source(f.path) for f in POD_FIELDS), *(f.fallback for f in POD_FIELDS if f.fallback)]
    )
)
#: Objects of which only the key names are read (``env``: its values are secrets).
NAMES_ONLY: Final = frozenset(source(f.path) for f in POD_FIELDS if f.read == "names")
#: The objects that hold the sources, parents before children (``ssh``, ``ssh.proxy``).
BLOCKS: Final[tuple[str, ...]] = tuple(
    dict.fromkeys(
        ".".join(keys[:depth])
        for keys in (path.split(".") for path in SOURCES)
        for depth in range(1, len(keys))
    )
)


#: The Python type of a value a column reads as itself, by the column's dtype: what
#: the typed decoder decodes such a leaf as (a timestamp is read from its string).
_PYTHON_TYPES: Final[Mapping[str, type]] = MappingProxyType(
    {STRING: str, INT: int, FLOAT: float, BOOLEAN: bool, TIME: str}
)
#: The reads that take a statistic of a number in each object of a list
#: (``runtime.gpus[].util``): that number is read as a float, whatever the column's
#: dtype (``gpus_reporting`` counts the same numbers that ``gpu_util_mean`` averages).
STATISTICS: Final = frozenset({"mean", "min", "max", "numbers"})


def _leaf_type(field: PodField) -> type | None:
    """The type of the value at ``field.path`` (or of its objects' key, for ``x[].k``)
    that the column takes as it is; ``None`` where the column reads a list or object."""
    if field.read in ("", "or_argument") or (field.read == "join" and element_key(field.path)):
        return _PYTHON_TYPES[field.dtype]
    if field.read in STATISTICS:
        return float
    return None


def _value_types() -> dict[str, type]:
    types: dict[str, type] = {}
    for field in POD_FIELDS:
        kind = _leaf_type(field)
        if kind is not None:
            types.setdefault(field.path.replace("[]", ""), kind)
        if field.fallback:  # read where the field's own value is not one: the same type
            types.setdefault(field.fallback, _PYTHON_TYPES[field.dtype])
    return types


#: Per path (``x.k`` for ``x[].k``), the type the typed decoder reads the value as,
#: for every value a column takes as it is; other paths are decoded as sent. A pod
#: whose value is of another type fails that decoding and is read as dicts instead,
#: by the checks of :mod:`ccanalytics.frames._convert`, so both ways give the same
#: cell; a chunk of pods all decoded so needs no check (:attr:`PodFields.checked`).
VALUE_TYPES: Final[Mapping[str, type]] = MappingProxyType(_value_types())


def _element_struct(list_path: str) -> type[Struct]:
    """The struct one object of the list at ``list_path`` decodes into: the keys read
    (none, for a list whose objects are only counted)."""
    keys = dict.fromkeys(
        key for f in POD_FIELDS if source(f.path) == list_path and (key := element_key(f.path))
    )
    name = "_" + list_path.replace(".", "_") + "_item"
    fields = [(k, VALUE_TYPES.get(f"{list_path}.{k}", Any) | None, None) for k in keys]
    return msgspec.defstruct(name, fields, gc=False)


#: Lists of objects, by path, and the struct an object decodes into on the typed
#: path: the keys read (``runtime.gpus[].util``), or none (``runtime.ports[]``, only
#: counted). A 50,000-pod listing has 400,000 GPU objects: structs, not dicts. A pod
#: read as dicts lists dicts here.
ELEMENTS: Final[Mapping[str, type[Struct]]] = MappingProxyType(
    {
        list_path: _element_struct(list_path)
        for list_path in SOURCES
        if any(
            source(f.path) == list_path and (element_key(f.path) or f.read == "count")
            for f in POD_FIELDS
        )
    }
)


def children(block: str) -> list[str]:
    """The keys read directly under ``block`` ("" for the pod), in :data:`SOURCES` order."""
    prefix = f"{block}." if block else ""
    return list(
        dict.fromkeys(p[len(prefix) :].split(".", 1)[0] for p in SOURCES if p.startswith(prefix))
    )


def block_var(block: str) -> str:
    """The local variable a generated reader holds ``block`` in."""
    return "pod" if not block else "b_" + block.replace(".", "_")


def _check_table() -> None:
    """Refuse at import a table the readers cannot be generated from."""
    for path in SOURCES:
        for key in path.split("."):
            if not key.isidentifier() or keyword.iskeyword(key):
                raise RuntimeError(f"POD_FIELDS: {path!r}: a key must be a Python identifier")
        if path in BLOCKS:
            raise RuntimeError(f"POD_FIELDS: {path!r} is read both as a value and as an object")
    if len({block_var(b) for b in BLOCKS}) != len(BLOCKS):
        raise RuntimeError("POD_FIELDS: two blocks would share a variable name")


_check_table()


def compiled(name: str, code: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """The function ``name`` defined by the generated ``code``, in ``namespace``."""
    exec(compile(code, f"<generated {name} from POD_FIELDS>", "exec"), namespace)
    return cast(Callable[..., Any], namespace[name])


def _value(path: str, read: Callable[[str, str], str]) -> str:
    """The expression for one source's value; ``read(parent_var, key)`` reads a key."""
    parent, _, key = path.rpartition(".")
    expression = read(block_var(parent), key)
    return f"_names({expression})" if path in NAMES_ONLY else expression


def _dict_reader() -> str:
    def read(var: str, key: str) -> str:
        return f"get({key!r})" if var == "pod" else f"{var}.get({key!r})"

    lines = ["def dict_row(pod):", "    get = pod.get"]
    for block in BLOCKS:
        parent, _, key = block.rpartition(".")
        var = block_var(block)
        lines += [
            f"    {var} = {read(block_var(parent), key)}",
            f"    if not isinstance({var}, dict):",
            f"        {var} = EMPTY",
        ]
    values = "".join(f"        {_value(path, read)},\n" for path in SOURCES)
    return "\n".join(lines) + f"\n    return (\n{values}    )\n"


#: The generated source of :func:`dict_row` (to read it: ``print(_DICT_ROW_SOURCE)``).
_DICT_ROW_SOURCE: Final = _dict_reader()


class PodFields(dict[str, Values]):
    """The raw values the frames read, one sequence per path of :data:`SOURCES`, one
    item per pod: ``fields["cluster.rank"]``.

    ``checked``: every pod was decoded by the typed decoder, so each value at a path
    of :data:`VALUE_TYPES` has that type or is ``None``, and every list of objects is
    a list of its :data:`ELEMENTS` struct or ``None``: the column builders skip their
    type checks.
    """

    checked: bool

    @classmethod
    def of(cls, rows: list[Row], checked: bool = False) -> PodFields:
        """Rows (one tuple per pod) transposed into one sequence per path."""
        if not rows:
            fields = cls(zip(SOURCES, [() for _ in SOURCES], strict=True))
        else:
            fields = cls(zip(SOURCES, zip(*rows, strict=True), strict=True))
        fields.checked = checked
        return fields


class Origin(NamedTuple):
    """Where a chunk's pods came from: what the columns need that a pod does not say."""

    #: The cluster asked for, which fills a missing ``cluster.id``: one for the chunk,
    #: or one per pod when a fleet's listings are framed together.
    cluster_id: str | Values | None
    #: When the service answered, per pod (ns since the epoch, UTC): loads only, which
    #: add the ``observed_at`` column; ``None`` for the pure functions.
    observed_at: IntArray | None = None


def _names(env: Any) -> str | None:
    """``env``'s names, sorted and comma-joined; ``None`` if it is not an object.

    Only the names reach the row (a row outlives its pod in a fleet load: no secret
    values), and already as the cell: pods of one job share one set of names, so each
    set is sorted and joined once (:func:`_joined_names`), where a copy of every pod's
    names, then a sort and a join per pod, were 8 % of a 50,000-pod load.
    """
    return _joined_names(tuple(env)) if isinstance(env, dict) else None


@functools.lru_cache(maxsize=1024)
def _joined_names(names: tuple[Any, ...]) -> str:
    try:
        return ",".join(sorted(names))
    except TypeError:  # a non-string name (possible in dicts built in Python)
        return ",".join(sorted([k for k in names if isinstance(k, str)]))


#: One pod parsed into dicts, as its row. A block that is missing or not an object
#: reads as empty, so each of its fields is ``None``.
dict_row: Final[Callable[[JsonObject], Row]] = compiled(
    "dict_row", _DICT_ROW_SOURCE, {"EMPTY": EMPTY, "_names": _names}
)


def statuses(status: Values, desired: Values, checked: bool = False) -> Values:
    """``status``, or ``desiredStatus`` where an older payload sends only that."""
    # Every pod has one (v2): nothing to fall back on. Checked, a value is a str or None.
    every_pod_has_one = None not in status if checked else _STR.issuperset(map(type, status))
    if every_pod_has_one:
        return status
    return [s if isinstance(s, str) else d for s, d in zip(status, desired, strict=True)]


def cluster_ids(ids: Values, default: str | Values | None, checked: bool = False) -> Any:
    """``cluster.id`` as a string column, ``default`` where a pod has none.

    ``default`` is one cluster id for every pod (a listing of one cluster), or one per
    pod (a fleet's pods framed together: each pod's own listing's cluster).
    """
    ids = _str_or_none(ids, checked)
    if isinstance(default, str):
        ids = [default if v is None else v for v in ids]
    elif default is not None:
        ids = [d if v is None else v for v, d in zip(ids, default, strict=True)]
    return _string_column(ids, checked)

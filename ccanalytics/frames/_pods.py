"""The pods frame's columns: one row per pod, nested blocks flattened.

Nested lists: the pods frame keeps one row per pod, so the label lists (``ports``,
``mounts.network[].volumeId``, ``env`` names) become comma-joined strings and
``runtime.ports`` a count: they are for reading and filtering
(``frame.ports.str.contains("8888/http")``), not for arithmetic. The one list of
measurements, ``runtime.gpus``, is aggregated per pod (mean/min/max) here and given
in full, one row per GPU, by the gpus frame. For these list-derived columns an
absent list is ``<NA>`` and an empty list is ``""`` or ``0``.

Every column is built from its line of :data:`~ccanalytics.frames._columns.POD_FIELDS`:
the raw values at its path, converted by its dtype, or by its ``read`` (one builder
per key of :data:`~ccanalytics.frames._columns.READS`, below).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any, Final, cast

import pandas as pd
from msgspec import Struct
from pandas.api.extensions import ExtensionArray

from ccanalytics.frames._columns import POD_FIELDS, READS, PodField
from ccanalytics.frames._convert import (
    Values,
    _bool_column,
    _float_column,
    _int_column,
    _masked_floats,
    _string_column,
    _timestamp_column,
    _utc_stamps,
)
from ccanalytics.frames._fields import (
    SOURCES,
    STATISTICS,
    JsonObject,
    Origin,
    PodFields,
    cluster_ids,
    element_key,
    source,
    statuses,
)
from ccanalytics.frames._gpus import GpuSamples, Summary, gpu_samples, key_of, summarize

__all__ = ["pod_columns"]

_DICT_TYPES: Final = frozenset({dict})

# The list-valued fields: each has a fast path for the common case (every element of
# the expected type), which raises TypeError/KeyError on a stray element; the column
# then takes the per-element path. One stray value costs one column, not the listing.


def _joined(lists: Values) -> list[str | None]:
    """Each list of strings comma-joined, skipping non-strings; ``None`` if not a list."""
    try:
        return [",".join(v) if isinstance(v, list) else None for v in lists]
    except TypeError:
        return [_join_strings(v) if isinstance(v, list) else None for v in lists]


def _joined_keys(lists: Values, key: str, checked: bool) -> list[str | None]:
    """Each list's objects' ``key`` comma-joined (``mounts.network[].volumeId``),
    skipping non-strings and non-objects; ``None`` if not a list."""
    kinds = (
        set()  # checked: every object is a decoded struct, without looking
        if checked
        else set(map(type, chain.from_iterable(v for v in lists if isinstance(v, list))))
    )
    getter: Any = None
    if all(issubclass(kind, Struct) for kind in kinds):  # decoded: every key is there
        getter = attrgetter(key)
    elif kinds <= _DICT_TYPES:
        getter = itemgetter(key)
    if getter is not None:
        try:
            return [",".join(map(getter, v)) if isinstance(v, list) else None for v in lists]
        except (TypeError, KeyError):  # a missing key or a non-string value
            pass
    return [
        _join_strings([key_of(x, key) for x in v if isinstance(x, Struct | dict)])
        if isinstance(v, list)
        else None
        for v in lists
    ]


def _join_strings(items: list[Any]) -> str:
    return ",".join([x for x in items if isinstance(x, str)])


def _objects_only(items: list[Any]) -> list[JsonObject | Struct]:
    """The objects of a list: dicts, or the decoder's structs in a chunk that also
    holds a pod read as dicts."""
    return [x for x in items if isinstance(x, dict | Struct)]


def _object_counts(lists: Values, checked: bool) -> list[int | None]:
    """How many elements of each list are objects; ``None`` if not a list."""
    if checked:  # every element is a decoded struct: an object
        return [None if v is None else len(v) for v in lists]
    present = [v for v in lists if isinstance(v, list)]
    if _DICT_TYPES.issuperset(map(type, chain.from_iterable(present))):
        return [len(v) if isinstance(v, list) else None for v in lists]
    return [len(_objects_only(v)) if isinstance(v, list) else None for v in lists]


_BY_DTYPE: Final[dict[str, Callable[[Values, bool], ExtensionArray]]] = {
    "string": _string_column,
    "Int64": _int_column,
    "Float64": _float_column,
    "boolean": _bool_column,
    "datetime64[ns, UTC]": _timestamp_column,
}
#: The dtype each ``read`` gives; ``""`` and ``or_argument`` give the field's own.
_READ_DTYPES: Final = {
    "join": "string",
    "names": "string",
    "count": "Int64",
    "numbers": "Int64",
    "mean": "Float64",
    "min": "Float64",
    "max": "Float64",
}


class _Chunk:
    """A chunk's raw fields, and the GPU statistics of its lists (computed once)."""

    def __init__(self, raw: PodFields, origin: Origin) -> None:
        self.raw, self.origin = raw, origin
        self.n = len(raw[SOURCES[0]])
        self._samples: dict[str, GpuSamples] = {}
        self._summaries: dict[tuple[str, str], Summary] = {}

    def samples(self, list_path: str) -> GpuSamples:
        if list_path not in self._samples:
            keys = _STAT_KEYS[list_path]
            self._samples[list_path] = gpu_samples(self.raw[list_path], keys, self.raw.checked)
        return self._samples[list_path]

    def summary(self, list_path: str, key: str) -> Summary:
        if (list_path, key) not in self._summaries:
            samples = self.samples(list_path)
            summary = summarize(samples.values[key], samples.owner, self.n)
            self._summaries[list_path, key] = summary
        return self._summaries[list_path, key]


def _column(field: PodField, chunk: _Chunk) -> ExtensionArray:
    """One column, built from its line of the table."""
    path, read, checked = source(field.path), field.read, chunk.raw.checked
    values = chunk.raw[path]
    if read == "":
        if field.fallback:
            values = statuses(values, chunk.raw[field.fallback], checked)
        return _BY_DTYPE[field.dtype](values, checked)
    if read == "or_argument":
        ids: ExtensionArray = cluster_ids(values, chunk.origin.cluster_id, checked)
        return ids
    # The lists' columns below are built here, of strings and ints only: checked.
    if read == "join":
        key = element_key(field.path)
        joined = _joined(values) if key is None else _joined_keys(values, key, checked)
        return _string_column(joined, checked=True)
    if read == "count":
        return _int_column(_object_counts(values, checked), checked=True)
    if read == "names":  # the readers joined each env's names already (_fields._names)
        return _string_column(values, checked=True)
    summary = chunk.summary(path, cast(str, element_key(field.path)))
    if read == "numbers":
        return pd.arrays.IntegerArray(summary.reporting, ~chunk.samples(path).listed)
    return _masked_floats(
        {"mean": summary.mean, "min": summary.minimum, "max": summary.maximum}[read]
    )


def _check_table() -> None:
    """Refuse at import a line of the table no builder here can make a column of."""
    for field in POD_FIELDS:
        if field.read not in READS:
            raise RuntimeError(f"POD_FIELDS: {field.column}: unknown read {field.read!r}")
        dtype = _READ_DTYPES.get(field.read, field.dtype)
        if field.dtype != dtype or dtype not in _BY_DTYPE:
            raise RuntimeError(f"POD_FIELDS: {field.column}: read {field.read!r} gives {dtype}")
        if field.read in STATISTICS and element_key(field.path) is None:
            raise RuntimeError(f"POD_FIELDS: {field.column}: {field.read} needs a path x[].key")


#: Per list, the keys of its objects that a statistic is taken of (``runtime.gpus``:
#: ``util``, ``memoryUtil``): one pass over a chunk's GPU objects reads them all.
_STAT_KEYS: Final[dict[str, tuple[str, ...]]] = {
    list_path: tuple(
        dict.fromkeys(
            cast(str, element_key(f.path))
            for f in POD_FIELDS
            if f.read in STATISTICS and source(f.path) == list_path
        )
    )
    for list_path in dict.fromkeys(source(f.path) for f in POD_FIELDS if f.read in STATISTICS)
}
_check_table()


def pod_columns(raw: PodFields, origin: Origin) -> dict[str, ExtensionArray]:
    """The pods frame's columns for a chunk of pods, in table order."""
    chunk = _Chunk(raw, origin)
    columns = {field.column: _column(field, chunk) for field in POD_FIELDS}
    if origin.observed_at is not None:
        columns["observed_at"] = _utc_stamps(origin.observed_at)
    return columns

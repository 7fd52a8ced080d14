"""The GPUs of pods: the samples in ``runtime.gpus``, their per-pod statistics, and
the gpus frame's columns (one row per GPU the pod pays for).

The service identifies a pod's GPUs by position only: ``runtime.gpus[i]`` is GPU
``i``. A pod pays for ``gpu.count`` GPUs, but reports metrics only while RUNNING,
and may list fewer GPUs than it has. The gpus frame therefore has, per pod,
``max(GPU objects listed, GPUs paid for)`` rows: the GPUs that do not report are
rows with ``<NA>`` util, never missing rows and never 0 %. A pod pays for its GPUs
unless its ``cost`` is exactly 0.0 (the service's value for EXITED and TERMINATED
pods, which hold none); a pod whose cost is unknown is counted as paying.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain, repeat
from operator import attrgetter
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd
from msgspec import Struct
from pandas.api.extensions import ExtensionArray

from ccanalytics.frames._convert import (
    BoolArray,
    FloatArray,
    IntArray,
    Values,
    _floats,
    _int_column,
    _ints,
    _masked_floats,
    _string_column,
    _utc_stamps,
)
from ccanalytics.frames._fields import Origin, PodFields, cluster_ids, statuses

__all__ = [
    "GPU_KEYS",
    "MAX_GPUS_PER_POD",
    "GpuSamples",
    "Summary",
    "gpu_columns",
    "gpu_samples",
    "key_of",
    "summarize",
]

#: A ``gpu.count`` above this is not a machine but a broken value: its pod gets rows
#: only for the GPUs it lists (a count of 10**9 must not allocate a billion rows).
MAX_GPUS_PER_POD: Final = 1024

_DICTS: Final = frozenset({dict})
_get: Final = dict.get
#: The keys of ``runtime.gpus[]`` objects that the gpus frame reads.
GPU_KEYS: Final = ("util", "memoryUtil")


class GpuSamples(NamedTuple):
    """The GPU objects of all pods' ``runtime.gpus``, flattened in pod order."""

    owner: npt.NDArray[np.intp]  # row of the pod each GPU belongs to
    position: npt.NDArray[np.intp]  # 0-based index among its pod's GPU objects
    values: dict[str, FloatArray]  # per key read: NaN where missing or not a number
    listed: BoolArray  # per pod: runtime.gpus is a list


def gpu_samples(lists: Values, keys: Iterable[str], checked: bool = False) -> GpuSamples:
    """Flatten each pod's ``runtime.gpus`` value (a list, or anything else: no GPUs),
    reading ``keys`` of each GPU object.

    Elements that are not objects are skipped, so positions count GPU objects only.
    An object is a struct (the typed decoder's) or a dict (a pod read as dicts);
    ``checked``: every one is a struct whose keys hold floats or ``None``.
    """
    lengths = np.array([len(g) if isinstance(g, list) else -1 for g in lists], dtype=np.intp)
    listed = lengths >= 0
    if not listed.all():
        lists = [g if isinstance(g, list) else () for g in lists]
    flat: list[Any] = list(chain.from_iterable(lists))
    owner = np.repeat(np.arange(len(lists), dtype=np.intp), np.maximum(lengths, 0))
    kinds = set() if checked else set(map(type, flat))
    values: dict[str, list[Any]]
    if all(issubclass(kind, Struct) for kind in kinds):  # every pod came through the decoder
        values = {key: list(map(attrgetter(key), flat)) for key in keys}
    elif kinds <= _DICTS:  # every pod was read as dicts
        values = {key: list(map(_get, flat, repeat(key))) for key in keys}
    else:  # both, or junk that is not a GPU object: skipped
        keep = np.array([isinstance(x, Struct | dict) for x in flat], np.bool_)
        flat = [x for x in flat if isinstance(x, Struct | dict)]
        owner = owner[keep]
        values = {key: [key_of(x, key) for x in flat] for key in keys}
    per_pod = np.bincount(owner, minlength=len(lists))
    first = np.cumsum(per_pod) - per_pod
    return GpuSamples(
        owner=owner,
        position=np.arange(len(owner), dtype=np.intp) - first[owner],
        values={key: _floats(v, checked) for key, v in values.items()},
        listed=listed,
    )


def key_of(item: Struct | dict[str, Any], key: str) -> Any:
    """``key`` of one list object, decoded struct or dict alike."""
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


class Summary(NamedTuple):
    """Per-pod statistics of one GPU measure; NaN where no GPU reported it."""

    reporting: IntArray  # how many GPUs of the pod gave a number
    mean: FloatArray
    minimum: FloatArray
    maximum: FloatArray


def summarize(values: FloatArray, owner: npt.NDArray[np.intp], n: int) -> Summary:
    """Group statistics of ``values`` by ``owner`` (sorted), ignoring NaN."""
    valid = ~np.isnan(values)
    values, owner = values[valid], owner[valid]
    count = np.bincount(owner, minlength=n).astype(np.int64)
    total = np.bincount(owner, weights=values, minlength=n)
    mean = np.full(n, np.nan)
    np.divide(total, count, out=mean, where=count > 0)
    minimum, maximum = np.full(n, np.nan), np.full(n, np.nan)
    reporting = count > 0
    if reporting.any():
        # Groups are contiguous; reduceat over the starts of the non-empty ones.
        starts = (np.cumsum(count) - count)[reporting]
        minimum[reporting] = np.minimum.reduceat(values, starts)
        maximum[reporting] = np.maximum.reduceat(values, starts)
    return Summary(count, mean, minimum, maximum)


def paid_gpus(gpu_count: Values, cost: Values, checked: bool = False) -> IntArray:
    """Per pod, how many GPUs it pays for: ``gpu.count`` unless ``cost`` is 0.0.

    A count that is missing, not an integer, below 1 or above
    :data:`MAX_GPUS_PER_POD` counts as 0: such a pod gets rows only for what it lists.
    """
    count, missing = _ints(gpu_count, checked)
    usable = ~missing & (count >= 1) & (count <= MAX_GPUS_PER_POD)
    free = _floats(cost, checked) == 0.0  # NaN (unknown cost) compares unequal: counted as paying
    return np.where(usable & ~free, count, 0).astype(np.intp)


def gpu_columns(raw: PodFields, origin: Origin) -> dict[str, ExtensionArray]:
    """The gpus frame's columns for a chunk of pods (see the module docstring)."""
    checked = raw.checked
    samples = gpu_samples(raw["runtime.gpus"], GPU_KEYS, checked)
    n = len(raw["id"])
    listed = np.bincount(samples.owner, minlength=n).astype(np.intp)
    rows = np.maximum(listed, paid_gpus(raw["gpu.count"], raw["cost"], checked))
    first = np.cumsum(rows) - rows
    owner = np.repeat(np.arange(n, dtype=np.intp), rows)
    # Each listed GPU goes to its own row; the rows past the listed ones stay NaN.
    at = first[samples.owner] + samples.position
    util, memory_util = np.full(len(owner), np.nan), np.full(len(owner), np.nan)
    util[at], memory_util[at] = samples.values["util"], samples.values["memoryUtil"]
    position = np.arange(len(owner), dtype=np.int64) - first[owner]
    columns = {
        "cluster_id": cluster_ids(raw["cluster.id"], origin.cluster_id, checked).take(owner),
        "pod_id": _string_column(raw["id"], checked).take(owner),
        "rank": _int_column(raw["cluster.rank"], checked).take(owner),
        "gpu_index": pd.arrays.IntegerArray(position, np.zeros(len(owner), dtype=np.bool_)),
        "util": _masked_floats(util),
        "memory_util": _masked_floats(memory_util),
        "gpu_type": _string_column(raw["gpu.id"], checked).take(owner),
        "status": _string_column(
            statuses(raw["status"], raw["desiredStatus"], checked), checked
        ).take(owner),
    }
    if origin.observed_at is not None:
        columns["observed_at"] = _utc_stamps(origin.observed_at[owner])
    return columns

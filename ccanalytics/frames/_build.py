"""Flatten cluster pod listings into pandas DataFrames.

Two pure functions, tested offline on recorded listings under ``tests/data/``:

- :func:`pods_frame`: one row per pod, nested blocks flattened into columns.
- :func:`gpus_frame`: one row per GPU sample in ``runtime.gpus`` (the long frame).

:data:`POD_COLUMNS` and :data:`GPU_COLUMNS` are the one place where each column's
dtype, source field and unit are written down; the functions' docstrings are
rendered from them, so ``help(pods_frame)`` shows the table.

Reading rules (the spec says neither which fields are required nor their units):

- Every column is nullable (``string``, ``Int64``, ``Float64``, ``boolean``,
  ``datetime64[ns, UTC]``). Missing, ``null`` and wrongly typed values are all
  ``<NA>``; a listing never makes these functions raise because of a pod's content.
  So is NaN, which JSON cannot carry but a dict built in Python can.
- No coercion across JSON types: a number field holding ``"3"`` or ``true`` is
  ``<NA>``, and so is a string field holding ``3``. The spec types these fields; a
  value of another type is a server bug to show, not to guess at (is ``"1,5"`` 1.5 or
  15?). The one latitude JSON Schema itself allows: an integer field may hold an
  integral number written as ``13.0``. Timestamps are strings by spec and are read as
  ISO 8601 (naive ones as UTC); anything else, and dates outside the nanosecond range
  (such as Go's zero time ``0001-01-01T00:00:00Z``), is ``<NA>``.
- Pods that are not JSON objects (``null``, a string) are dropped, as the models
  drop list elements of the wrong type. Likewise in ``runtime.gpus``: ``gpu_index``
  counts GPU objects only.
- ``env`` values are secrets and never read: only the variable names reach a frame.
  ``args`` is not a column either: command lines often carry tokens.

Nested lists: the pods frame keeps one row per pod, so the label lists (``ports``,
``mounts.network[].volumeId``, ``env`` names) become comma-joined strings and
``runtime.ports`` a count: they are for reading and filtering
(``frame.ports.str.contains("8888/http")``), not for arithmetic, and a long frame
per list would multiply frames nobody asked for. The one list of measurements,
``runtime.gpus``, is aggregated per pod (mean/min/max) and given in full, one row
per GPU, by :func:`gpus_frame`. For these list-derived columns an absent list is
``<NA>`` and an empty list is ``""`` or ``0``.

Pod models go through the same code path as raw JSON: each is dumped to its JSON
form (without ``env`` values) first. A model has already applied pydantic's lax
conversions (``"3"`` becomes ``3``, ``true`` becomes ``1.0``) and holds timestamps to
the microsecond, so for wrongly typed input a frame built from models can hold a
value where the frame of the raw JSON holds ``<NA>``; for well-typed input both are
identical (tested).

Speed (a product requirement: a 50,000-pod listing must flatten in at most 1.5x the
time of ``orjson.loads`` alone): raw JSON is parsed with ``orjson`` and never turned
into models, since validating a model per pod costs several times the parse. One
plain loop reads every field of a pod while that pod is in cache; the values are
then checked by type a column at a time, in bulk (``set`` of the types), so the
common case (every value of the right type or missing) converts to numpy or Arrow
in C, and only a column holding a stray value takes the per-value Python path. The
cyclic garbage collector is paused for the call (see :func:`_gc_paused`). Where the
time goes at 50,000 pods, per pod: parse ~8 us, reading ~4 us, type checks and
conversion ~8 us, freeing the parsed listing ~2 us; pandas' own ``json_normalize``
is ~2.5x slower and computes no GPU aggregates. Everything is O(n); the per-pod
time still rises ~10% from 10k to 100k pods, as the parse's does, from cache misses
in a heap of hundreds of MB.

Where things are: the column table is in :mod:`ccanalytics.frames._columns`, the conversion
of raw values to typed arrays (the type checks) in :mod:`ccanalytics.frames._convert`; this
module reads the input and flattens it.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, Final, NamedTuple, TypeAlias

import numpy as np
import numpy.typing as npt
import orjson
import pandas as pd
from pandas.api.extensions import ExtensionArray

from ccanalytics.api.models import Pod
from ccanalytics.frames._columns import GPU_COLUMNS, POD_COLUMNS, ColumnSpec, _column_table
from ccanalytics.frames._convert import (
    BoolArray,
    FloatArray,
    IntArray,
    Values,
    _bool_column,
    _float_column,
    _floats,
    _int_column,
    _masked_floats,
    _str_or_none,
    _string_column,
    _timestamp_column,
)

__all__ = ["GPU_COLUMNS", "POD_COLUMNS", "ColumnSpec", "PodsInput", "gpus_frame", "pods_frame"]

logger = logging.getLogger("ccanalytics.frames")

JsonObject: TypeAlias = dict[str, Any]

#: What :func:`pods_frame` and :func:`gpus_frame` accept: raw JSON (``bytes``/``str``)
#: of a listing or of a bare array, a parsed listing ``{"pods": [...]}``, or an
#: iterable of pods as :class:`~ccanalytics.api.models.Pod` models or plain dicts.
PodsInput: TypeAlias = (
    bytes | bytearray | memoryview | str | Mapping[str, Any] | Iterable[Pod | Mapping[str, Any]]
)

# A list holds JSON objects only if the set of its element types is within this one.
_DICT_TYPES: Final = frozenset({dict})

# Stands in for a block that is missing or not an object. Read only, never mutated.
_EMPTY: Final[JsonObject] = {}
_get: Final = dict.get


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a listing is parsed and flattened.

    Parsing a 50,000-pod listing allocates millions of dicts and lists, so the
    collector runs thousands of times, full collections among them that traverse
    everything parsed so far: measured, that doubles the parse (0.55 s -> 1.1 s or
    more). None of it can be cyclic garbage (JSON is a tree) and reference counting
    frees it all before we return, so the traversals are pure waste. The collector
    is re-enabled on exit only if it was enabled on entry; the pause is process-wide,
    for the duration of one call.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# ---------------------------------------------------------------------------------
# Input: every accepted form becomes a list of JSON-shaped dicts.


def _pod_objects(pods: PodsInput) -> list[JsonObject]:
    """The pods of any accepted input form as a list of JSON-shaped dicts."""
    data: Any = pods
    if isinstance(data, bytes | bytearray | memoryview | str):
        try:
            data = orjson.loads(data)
        except orjson.JSONDecodeError as err:
            # ``from None``: the decode error's ``doc`` holds the whole input, env
            # values included; it must not ride along in a traceback or error report.
            raise ValueError(f"pods is not valid JSON: {err.msg} at char {err.pos}") from None
    if isinstance(data, Mapping):
        if "pods" not in data:
            raise ValueError("a mapping must be a pod listing {'pods': [...]}")
        data = data["pods"]
        if data is None:
            return []
    if isinstance(data, str | bytes | Mapping) or not isinstance(data, Iterable):
        raise ValueError(f"expected a list of pods, got {type(data).__name__}")
    items = data if isinstance(data, list) else list(data)
    if _DICT_TYPES.issuperset(map(type, items)):
        return items
    objects: list[JsonObject] = []
    for item in items:
        if isinstance(item, Pod):
            objects.append(_pod_as_json(item))
        elif isinstance(item, Mapping):
            objects.append(dict(item))
        else:
            logger.debug("dropping a pod that is not an object: %s", type(item).__name__)
    return objects


def _pod_as_json(pod: Pod) -> JsonObject:
    """A model as the JSON object it stands for, with env names but not their values."""
    data = pod.model_dump(
        mode="json", by_alias=True, exclude={"env"}, warnings=False, fallback=_unserializable
    )
    if pod.env is not None:
        data["env"] = dict.fromkeys(pod.env)
    return data


def _unserializable(value: Any) -> None:
    """An extra field holding a non-JSON Python object is dropped, not an error."""
    return None


# ---------------------------------------------------------------------------------
# Reading a field of many objects at once (the GPU entries; gpus_frame's pod fields).


def _blocks(objects: list[JsonObject], key: str) -> list[JsonObject]:
    """Each object's ``key`` sub-object; an empty one where missing or not an object."""
    found = list(map(_get, objects, repeat(key), repeat(_EMPTY)))
    if _DICT_TYPES.issuperset(map(type, found)):
        return found
    return [b if isinstance(b, dict) else _EMPTY for b in found]


def _values(objects: list[JsonObject], key: str) -> list[Any]:
    """Each object's ``key`` value, ``None`` where missing; TypeError for a non-dict."""
    # map() over the unbound dict.get runs in C: about half the cost of a comprehension.
    return list(map(_get, objects, repeat(key)))


# The list-valued fields: each has a fast path for the common case (every element of
# the expected type), which raises TypeError/KeyError on a stray element; the column
# then takes the per-element path. One stray value costs one column, not the listing.


def _joined(lists: Values) -> list[str | None]:
    """Each list of strings comma-joined, skipping non-strings; ``None`` if not a list."""
    try:
        return [",".join(v) if isinstance(v, list) else None for v in lists]
    except TypeError:
        return [_join_strings(v) if isinstance(v, list) else None for v in lists]


_volume_id: Final = itemgetter("volumeId")


def _volume_ids(networks: Values) -> list[str | None]:
    """Each ``mounts.network[].volumeId`` list comma-joined; ``None`` if not a list."""
    try:
        return [",".join(map(_volume_id, v)) if isinstance(v, list) else None for v in networks]
    except (TypeError, KeyError):
        return [
            _join_strings(_values(_objects_only(v), "volumeId")) if isinstance(v, list) else None
            for v in networks
        ]


def _join_strings(items: list[Any]) -> str:
    return ",".join([x for x in items if isinstance(x, str)])


def _objects_only(items: list[Any]) -> list[JsonObject]:
    return [x for x in items if isinstance(x, dict)]


def _env_names(envs: Values) -> list[str | None]:
    """The names of each ``env``, sorted and comma-joined. Values are never looked at."""
    try:
        return [",".join(sorted(e)) if isinstance(e, dict) else None for e in envs]
    except TypeError:  # a non-string name (possible in dicts built in Python)
        return [
            ",".join(sorted([k for k in e if isinstance(k, str)])) if isinstance(e, dict) else None
            for e in envs
        ]


def _object_counts(lists: Values) -> list[int | None]:
    """How many elements of each list are objects; ``None`` if not a list."""
    present = [v for v in lists if isinstance(v, list)]
    if _DICT_TYPES.issuperset(map(type, chain.from_iterable(present))):
        return [len(v) if isinstance(v, list) else None for v in lists]
    return [len(_objects_only(v)) if isinstance(v, list) else None for v in lists]


def _statuses(statuses: Values, desired: Values) -> list[Any]:
    """``status``, or ``desiredStatus`` where an older payload sends only that."""
    return [s if isinstance(s, str) else d for s, d in zip(statuses, desired, strict=True)]


def _cluster_ids(ids: Values, default: str | None) -> ExtensionArray:
    ids = _str_or_none(ids)
    if default is not None:
        ids = [default if v is None else v for v in ids]
    return _string_column(ids)


class _GpuSamples(NamedTuple):
    """The GPU objects of all pods' ``runtime.gpus``, flattened in pod order."""

    owner: npt.NDArray[np.intp]  # row of the pod each GPU belongs to
    position: npt.NDArray[np.intp]  # 0-based index among its pod's GPU objects
    util: FloatArray  # NaN where missing or not a number
    memory_util: FloatArray
    listed: BoolArray  # per pod: runtime.gpus is a list


def _gpu_samples(lists: Values) -> _GpuSamples:
    """Flatten each pod's ``runtime.gpus`` value (a list, or anything else: no GPUs)."""
    lengths = np.array([len(g) if isinstance(g, list) else -1 for g in lists], dtype=np.intp)
    listed = lengths >= 0
    if not listed.all():
        lists = [g if isinstance(g, list) else () for g in lists]
    flat: list[Any] = list(chain.from_iterable(lists))
    owner = np.repeat(np.arange(len(lists), dtype=np.intp), np.maximum(lengths, 0))
    try:
        # dict.get refuses a non-dict with TypeError: the type check comes for free,
        # without a separate pass over 400,000 GPU entries.
        util = _values(flat, "util")
    except TypeError:
        keep = np.array([isinstance(x, dict) for x in flat], dtype=np.bool_)
        flat = [x for x in flat if isinstance(x, dict)]
        owner = owner[keep]
        util = _values(flat, "util")
    per_pod = np.bincount(owner, minlength=len(lists))
    first = np.cumsum(per_pod) - per_pod
    return _GpuSamples(
        owner=owner,
        position=np.arange(len(owner), dtype=np.intp) - first[owner],
        util=_floats(util),
        memory_util=_floats(_values(flat, "memoryUtil")),
        listed=listed,
    )


class _Summary(NamedTuple):
    """Per-pod statistics of one GPU measure; NaN where no GPU reported it."""

    reporting: IntArray  # how many GPUs of the pod gave a number
    mean: FloatArray
    minimum: FloatArray
    maximum: FloatArray


def _summarize(values: FloatArray, owner: npt.NDArray[np.intp], n: int) -> _Summary:
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
    return _Summary(count, mean, minimum, maximum)


# ---------------------------------------------------------------------------------
# The frames.


def pods_frame(pods: PodsInput, *, cluster_id: str | None = None) -> pd.DataFrame:
    """One row per pod, nested blocks flattened into nullable columns.

    ``pods`` is the raw JSON (``bytes``/``str``) of a listing ``{"pods": [...]}`` or
    of a bare array, a parsed listing, or an iterable of
    :class:`~ccanalytics.api.models.Pod` models or plain dicts; all give the same frame.
    ``cluster_id`` fills the rows of pods that carry no ``cluster.id`` (a loader
    knows which cluster it asked for); a pod's own id always wins.

    Missing, null and wrongly typed values are ``<NA>`` (numeric strings are not
    coerced); an empty listing gives an empty frame with all columns. Raises
    ``ValueError`` only for input that is not a listing at all (invalid JSON, a
    mapping without ``pods``).

    Columns (dtype, source field and unit):

    {columns}
    """
    with _gc_paused():
        return _pods_frame(_pod_objects(pods), cluster_id)


class _PodFields(NamedTuple):
    """The raw values :func:`pods_frame` reads, one tuple per field, one item per pod."""

    cluster_id: Values  # cluster.id
    pod_id: Values  # id
    name: Values
    rank: Values  # cluster.rank
    cost: Values
    gpu_type: Values  # gpu.id
    gpu_count: Values  # gpu.count
    cpu_util: Values  # runtime.cpu.util
    memory_util: Values  # runtime.memory.util
    created_at: Values
    started_at: Values
    uptime_s: Values  # runtime.uptime
    cluster_ip: Values  # cluster.ip
    data_center_id: Values
    desired_status: Values
    status: Values
    cloud: Values
    cluster_role: Values  # cluster.role
    cpu_type: Values  # cpu.id
    vcpu_count: Values  # cpu.vcpuCount
    cpu_memory: Values  # cpu.memory
    disk: Values
    image: Values
    template: Values
    registry: Values
    cuda_version: Values
    locked: Values
    persistent_size: Values  # mounts.persistent.size
    persistent_path: Values  # mounts.persistent.path
    network: Values  # mounts.network
    global_networking: Values  # globalNetworking.enabled
    global_ip: Values  # globalNetworking.ip
    internal_dns: Values  # globalNetworking.internalDns
    ssh_proxy_host: Values
    ssh_proxy_port: Values
    ssh_direct_host: Values
    ssh_direct_port: Values
    ports: Values
    runtime_ports: Values  # runtime.ports
    env: Values  # only its names are ever read
    gpus: Values  # runtime.gpus


def _read_pods(objects: list[JsonObject]) -> _PodFields:
    """Every field the pods frame needs, read pod by pod, then transposed.

    One pass that reads all of a pod while it is in cache: on a 50,000-pod listing
    (hundreds of MB of Python objects) a pass per column pays a cache miss per pod per
    column and grows worse than linearly; this loop is ~15% faster and stays linear.
    A block that is missing or not an object reads as empty, so each field is ``None``.
    """
    empty = _EMPTY
    rows: list[tuple[Any, ...]] = []
    add = rows.append
    for pod in objects:
        get = pod.get
        cluster = get("cluster")
        if not isinstance(cluster, dict):
            cluster = empty
        runtime = get("runtime")
        if not isinstance(runtime, dict):
            runtime = empty
        runtime_cpu = runtime.get("cpu")
        if not isinstance(runtime_cpu, dict):
            runtime_cpu = empty
        runtime_memory = runtime.get("memory")
        if not isinstance(runtime_memory, dict):
            runtime_memory = empty
        gpu = get("gpu")
        if not isinstance(gpu, dict):
            gpu = empty
        cpu = get("cpu")
        if not isinstance(cpu, dict):
            cpu = empty
        mounts = get("mounts")
        if not isinstance(mounts, dict):
            mounts = empty
        persistent = mounts.get("persistent")
        if not isinstance(persistent, dict):
            persistent = empty
        networking = get("globalNetworking")
        if not isinstance(networking, dict):
            networking = empty
        ssh = get("ssh")
        if not isinstance(ssh, dict):
            ssh = empty
        proxy = ssh.get("proxy")
        if not isinstance(proxy, dict):
            proxy = empty
        direct = ssh.get("direct")
        if not isinstance(direct, dict):
            direct = empty
        add(
            (
                cluster.get("id"),
                get("id"),
                get("name"),
                cluster.get("rank"),
                get("cost"),
                gpu.get("id"),
                gpu.get("count"),
                runtime_cpu.get("util"),
                runtime_memory.get("util"),
                get("createdAt"),
                get("startedAt"),
                runtime.get("uptime"),
                cluster.get("ip"),
                get("dataCenterId"),
                get("desiredStatus"),
                get("status"),
                get("cloud"),
                cluster.get("role"),
                cpu.get("id"),
                cpu.get("vcpuCount"),
                cpu.get("memory"),
                get("disk"),
                get("image"),
                get("template"),
                get("registry"),
                get("cudaVersion"),
                get("locked"),
                persistent.get("size"),
                persistent.get("path"),
                mounts.get("network"),
                networking.get("enabled"),
                networking.get("ip"),
                networking.get("internalDns"),
                proxy.get("host"),
                proxy.get("port"),
                direct.get("host"),
                direct.get("port"),
                get("ports"),
                runtime.get("ports"),
                get("env"),
                runtime.get("gpus"),
            )
        )
    if not rows:
        return _PodFields._make(() for _ in _PodFields._fields)
    return _PodFields._make(zip(*rows, strict=True))


def _pods_frame(objects: list[JsonObject], cluster_id: str | None) -> pd.DataFrame:
    raw = _read_pods(objects)
    n = len(objects)
    samples = _gpu_samples(raw.gpus)
    util = _summarize(samples.util, samples.owner, n)
    memory = _summarize(samples.memory_util, samples.owner, n)

    columns: dict[str, ExtensionArray] = {
        "cluster_id": _cluster_ids(raw.cluster_id, cluster_id),
        "pod_id": _string_column(raw.pod_id),
        "name": _string_column(raw.name),
        "rank": _int_column(raw.rank),
        "cost": _float_column(raw.cost),
        "gpu_type": _string_column(raw.gpu_type),
        "gpu_count": _int_column(raw.gpu_count),
        "cpu_util": _float_column(raw.cpu_util),
        "memory_util": _float_column(raw.memory_util),
        "gpu_util_mean": _masked_floats(util.mean),
        "gpu_util_max": _masked_floats(util.maximum),
        "gpu_mem_util_mean": _masked_floats(memory.mean),
        "created_at": _timestamp_column(raw.created_at),
        "started_at": _timestamp_column(raw.started_at),
        "uptime_s": _float_column(raw.uptime_s),
        "gpu_util_min": _masked_floats(util.minimum),
        "gpu_mem_util_max": _masked_floats(memory.maximum),
        "gpus_reporting": pd.arrays.IntegerArray(util.reporting, ~samples.listed),
        "cluster_ip": _string_column(raw.cluster_ip),
        "data_center_id": _string_column(raw.data_center_id),
        "desired_status": _string_column(raw.desired_status),
        "status": _string_column(_statuses(raw.status, raw.desired_status)),
        "cloud": _string_column(raw.cloud),
        "cluster_role": _string_column(raw.cluster_role),
        "cpu_type": _string_column(raw.cpu_type),
        "vcpu_count": _int_column(raw.vcpu_count),
        "cpu_memory": _int_column(raw.cpu_memory),
        "disk": _int_column(raw.disk),
        "image": _string_column(raw.image),
        "template": _string_column(raw.template),
        "registry": _string_column(raw.registry),
        "cuda_version": _string_column(raw.cuda_version),
        "locked": _bool_column(raw.locked),
        "persistent_size": _int_column(raw.persistent_size),
        "persistent_path": _string_column(raw.persistent_path),
        "network_volumes": _string_column(_volume_ids(raw.network)),
        "global_networking": _bool_column(raw.global_networking),
        "global_ip": _string_column(raw.global_ip),
        "internal_dns": _string_column(raw.internal_dns),
        "ssh_proxy_host": _string_column(raw.ssh_proxy_host),
        "ssh_proxy_port": _int_column(raw.ssh_proxy_port),
        "ssh_direct_host": _string_column(raw.ssh_direct_host),
        "ssh_direct_port": _int_column(raw.ssh_direct_port),
        "ports": _string_column(_joined(raw.ports)),
        "runtime_ports": _int_column(_object_counts(raw.runtime_ports)),
        "env_vars": _string_column(_env_names(raw.env)),
    }
    return pd.DataFrame({name: columns[name] for name in POD_COLUMNS})


def gpus_frame(pods: PodsInput, *, cluster_id: str | None = None) -> pd.DataFrame:
    """One row per GPU object in the pods' ``runtime.gpus``, in pod order.

    Accepts the same inputs as :func:`pods_frame` and reads them by the same rules.
    Pods without ``runtime.gpus`` (pending, CPU) contribute no rows; a GPU object
    without a numeric ``util`` still has its row, with ``util`` ``<NA>``.

    Columns (dtype, source field and unit):

    {columns}
    """
    with _gc_paused():
        return _gpus_frame(_pod_objects(pods), cluster_id)


def _gpus_frame(objects: list[JsonObject], cluster_id: str | None) -> pd.DataFrame:
    cluster = _blocks(objects, "cluster")
    samples = _gpu_samples(_values(_blocks(objects, "runtime"), "gpus"))
    owner = samples.owner
    # Pod fields are read column by column here: five of them, not the pods frame's 38.
    columns: dict[str, ExtensionArray] = {
        "cluster_id": _cluster_ids(_values(cluster, "id"), cluster_id).take(owner),
        "pod_id": _string_column(_values(objects, "id")).take(owner),
        "rank": _int_column(_values(cluster, "rank")).take(owner),
        "status": _string_column(
            _statuses(_values(objects, "status"), _values(objects, "desiredStatus"))
        ).take(owner),
        "gpu_index": pd.arrays.IntegerArray(
            samples.position.astype(np.int64), np.zeros(len(owner), dtype=np.bool_)
        ),
        "util": _masked_floats(samples.util),
        "memory_util": _masked_floats(samples.memory_util),
        "gpu_type": _string_column(_values(_blocks(objects, "gpu"), "id")).take(owner),
    }
    return pd.DataFrame({name: columns[name] for name in GPU_COLUMNS})


# Rendered here so the tables above stay the only place the columns are described.
# (``python -OO`` strips docstrings: then there is nothing to render into.)
if pods_frame.__doc__:
    pods_frame.__doc__ = pods_frame.__doc__.replace("{columns}", _column_table(POD_COLUMNS))
if gpus_frame.__doc__:
    gpus_frame.__doc__ = gpus_frame.__doc__.replace("{columns}", _column_table(GPU_COLUMNS))

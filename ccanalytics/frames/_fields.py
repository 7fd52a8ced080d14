"""The raw fields a frame reads from each pod, before any type check.

A pod becomes one tuple of 41 raw values (:class:`PodFields` order) while it is in
cache; a chunk of tuples is then transposed into one sequence per field, which the
column builders (:mod:`ccanalytics.frames._pods`, :mod:`ccanalytics.frames._gpus`)
type-check and convert in bulk. :func:`dict_row` reads a pod parsed into dicts;
:mod:`ccanalytics.frames._decode` reads pods decoded into typed structs into the
same tuple, so both paths share every reading rule after this point.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple, TypeAlias

from msgspec import Struct

from ccanalytics.frames._convert import IntArray, Values, _str_or_none, _string_column

__all__ = [
    "EMPTY",
    "GpuSample",
    "JsonObject",
    "Origin",
    "PodFields",
    "Row",
    "cluster_ids",
    "dict_row",
    "statuses",
]

JsonObject: TypeAlias = dict[str, Any]
#: One pod's raw values, in :class:`PodFields` order.
Row: TypeAlias = tuple[Any, ...]

_STR: Final = frozenset({str})

# Stands in for a block that is missing or not an object. Read only, never mutated.
EMPTY: Final[JsonObject] = {}


class GpuSample(Struct, gc=False):
    """One ``runtime.gpus[]`` object as the typed decoder gives it (values as sent).

    In a chunk's ``gpus`` field, a pod decoded by the typed path lists these; a pod
    read as dicts lists dicts (and whatever junk the service put there).
    """

    util: Any = None
    memoryUtil: Any = None


class PodFields(NamedTuple):
    """The raw values the frames read, one sequence per field, one item per pod."""

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

    @classmethod
    def of(cls, rows: list[Row]) -> PodFields:
        """Rows (one tuple per pod) transposed into one sequence per field."""
        if not rows:
            return cls._make(() for _ in cls._fields)
        return cls._make(zip(*rows, strict=True))


class Origin(NamedTuple):
    """Where a chunk's pods came from: what the columns need that a pod does not say."""

    #: The cluster asked for, which fills a missing ``cluster.id``: one for the chunk,
    #: or one per pod when a fleet's listings are framed together.
    cluster_id: str | Values | None
    #: When the service answered, per pod (ns since the epoch, UTC): loads only, which
    #: add the ``observed_at`` column; ``None`` for the pure functions.
    observed_at: IntArray | None = None


def dict_row(pod: JsonObject) -> Row:
    """One pod parsed into dicts, as its row. A block that is missing or not an
    object reads as empty, so each of its fields is ``None``."""
    empty = EMPTY
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
    return (
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
        _names(get("env")),
        runtime.get("gpus"),
    )


def _names(env: Any) -> Any:
    """``env``'s names only (a row outlives its pod in a fleet load: no secret values)."""
    return dict.fromkeys(env) if isinstance(env, dict) else env


def statuses(status: Values, desired: Values) -> Values:
    """``status``, or ``desiredStatus`` where an older payload sends only that."""
    if _STR.issuperset(map(type, status)):  # every pod has one (v2): nothing to fall back on
        return status
    return [s if isinstance(s, str) else d for s, d in zip(status, desired, strict=True)]


def cluster_ids(ids: Values, default: str | Values | None) -> Any:
    """``cluster.id`` as a string column, ``default`` where a pod has none.

    ``default`` is one cluster id for every pod (a listing of one cluster), or one per
    pod (a fleet's pods framed together: each pod's own listing's cluster).
    """
    ids = _str_or_none(ids)
    if isinstance(default, str):
        ids = [default if v is None else v for v in ids]
    elif default is not None:
        ids = [d if v is None else v for v, d in zip(ids, default, strict=True)]
    return _string_column(ids)

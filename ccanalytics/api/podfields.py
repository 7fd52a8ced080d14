"""The pod field table: every field of the provider's documented ``Pod``, one line each.

:data:`POD_TABLE` is the one place a pod's fields are written down. A line is a JSON
path with the type the model gives its value, its unit and meaning, and, if the
pods frame reads it, the column it becomes (name, dtype, reading rule). From it:

- the pydantic models of :mod:`ccanalytics.api.models` (``Pod`` and the models of its
  blocks) are generated as code, by ``python -m ccanalytics.api._podgen``, so that
  mypy sees their types; ``tests/api`` fails while the committed code differs;
- the frames take the lines that name a column, in table order, as their column
  table (:data:`ccanalytics.frames._columns.POD_FIELDS`), from which their readers,
  column builders, ``POD_COLUMNS`` and the column docs are derived.

A field the document adds is one line here, then the generator rerun. Plain data: it
lives in the lowest layer that needs it (``api``), and imports neither pydantic nor
pandas, so the frames read it without loading either.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, NamedTuple

__all__ = [
    "BOOLEAN",
    "FLOAT",
    "INT",
    "MODELS",
    "PERCENT",
    "POD_TABLE",
    "READS",
    "STRING",
    "TIME",
    "Model",
    "PodField",
    "value_type",
]

#: The frames' dtypes, by name (pandas' spelling; pandas is not imported here).
STRING, INT, FLOAT, BOOLEAN, TIME = "string", "Int64", "Float64", "boolean", "datetime64[ns, UTC]"

#: How the value(s) at a field's path become one cell, and the words the docs use.
#: The column builders (``frames._pods``) implement each; the readers read the path's
#: value as sent, except ``names``, whose object is reduced to its keys while it is read.
READS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "": "",  # the value itself, type-checked against the dtype (<NA> if it is not)
        "or_argument": "the cluster_id argument where absent",
        "join": "comma-joined",
        "count": "how many objects the list holds",
        "names": "its key names, sorted, comma-joined; never its values",
        "mean": "mean over the GPUs reporting",
        "min": "min over the GPUs reporting",
        "max": "max over the GPUs reporting",
        "numbers": "how many of its objects carry a number: may be fewer than gpu_count",
    }
)


class PodField(NamedTuple):
    """One line of the table: a documented field, and the column it becomes if any."""

    #: The pods frame's column; "" for a documented field that no column reads.
    column: str
    #: JSON path in the pod, keys joined by dots: ``cluster.rank``. ``x[]`` is the
    #: list ``x`` itself, ``x[].k`` the ``k`` of each of its objects.
    path: str
    dtype: str  # the column's; "" without a column
    unit: str  # "" where the value has none
    meaning: str
    read: str = ""  # a key of READS
    #: Another path, read where this one's value is not a string (older payloads).
    fallback: str = ""
    #: The type the model declares for the value at ``path`` (see :func:`value_type`):
    #: needed only where the column's dtype does not say it.
    value: str = ""

    def describe(self) -> str:
        """The column's source, unit and meaning in one line, as the docs show it."""
        source = " ".join(filter(None, [self.path, READS[self.read] and f"({READS[self.read]})"]))
        if self.fallback:
            source += f", else {self.fallback}"
        return "; ".join(filter(None, [", ".join(filter(None, [source, self.unit])), self.meaning]))


#: The model's type for a value a column reads as itself (or a statistic of), by dtype.
_BY_DTYPE: Final[Mapping[str, str]] = MappingProxyType(
    {STRING: "str", INT: "int", FLOAT: "float", BOOLEAN: "bool", TIME: "datetime"}
)
_AS_ITSELF: Final = frozenset({"", "or_argument", "mean", "min", "max"})


def value_type(field: PodField) -> str:
    """The type the model declares for the value at ``field.path``, as the generator
    spells it: ``str``, ``int``, ``float``, ``bool``, ``datetime``, ``list[str]``,
    ``list[Any]`` or ``secrets``; "" where another line says it (``count``,
    ``numbers``), or where the path holds an object or a list of objects (a block of
    :data:`MODELS`)."""
    if field.value:
        return field.value
    if field.read in _AS_ITSELF or (field.read == "join" and not field.path.endswith("[]")):
        return _BY_DTYPE.get(field.dtype, "")
    return ""


# Units as the provider's published document (spec/provider-openapi-v2.json) states them.
PERCENT: Final = "integer percent 0-100 as sent, read as float"
_GB = "GB"
_STATUS_VALUES = "PROVISIONING, STARTING, RUNNING, EXITED, ERROR or TERMINATED"
_NO_METRICS = "<NA> unless the pod is RUNNING (the service sends runtime null otherwise)"
_SECONDS = "integer seconds as sent, read as float"
_STATUS = f"{_STATUS_VALUES}; any other value kept as sent (pre-v2 payloads: desiredStatus)"
_ROLES = "SLURM_CONTROLLER, SLURM_COMPUTE, RAY_HEAD or RAY_WORKER; <NA> on other clusters"
_LEGACY_STATUS = (
    "legacy, sent only by pre-v2 payloads (the v2 service never sends it, so <NA> there); "
    "read status instead, which falls back to it"
)
_S, _I, _F, _B, _T, _PCT = STRING, INT, FLOAT, BOOLEAN, TIME, PERCENT
# Value types the dtype does not say: env's values are secrets; actions are kept as sent.
_ENV, _ANY = "secrets", "list[Any]"

#: Every documented pod field, one line each. First the pods frame's columns, in column
#: order (the first 15 are fixed by the public API; the rest follow the pod's blocks);
#: then the fields no column reads. A line is (column, JSON path, dtype, unit,
#: meaning[, read=, fallback=, value=]): see :class:`PodField`. A path may have several
#: lines (one per column it gives); every path of the document's Pod has at least one.
POD_TABLE: Final[tuple[PodField, ...]] = (
    PodField("cluster_id", "cluster.id", _S, "", "", read="or_argument"),
    PodField("pod_id", "id", _S, "", ""),
    PodField("name", "name", _S, "", ""),
    PodField("rank", "cluster.rank", _I, "", "the pod's rank in its cluster; <NA> until assigned"),
    PodField("cost", "cost", _F, "USD per hour", "0.0 while EXITED or TERMINATED"),
    PodField("gpu_type", "gpu.id", _S, "", "e.g. 'NVIDIA H100 80GB HBM3'; <NA> on CPU pods"),
    PodField("gpu_count", "gpu.count", _I, "", "GPUs the pod pays for; <NA> on CPU pods"),
    PodField("cpu_util", "runtime.cpu.util", _F, _PCT, _NO_METRICS),
    PodField("memory_util", "runtime.memory.util", _F, _PCT, ""),
    PodField("gpu_util_mean", "runtime.gpus[].util", _F, _PCT, "", read="mean"),
    PodField("gpu_util_max", "runtime.gpus[].util", _F, _PCT, "", read="max"),
    PodField("gpu_mem_util_mean", "runtime.gpus[].memoryUtil", _F, _PCT, "", read="mean"),
    PodField("created_at", "createdAt", _T, "", ""),
    PodField("started_at", "startedAt", _T, "", "<NA> until the pod first starts"),
    PodField("uptime_s", "runtime.uptime", _F, _SECONDS, "since the container (re)started"),
    PodField("status", "status", _S, "", _STATUS, fallback="desiredStatus"),
    PodField("gpu_util_min", "runtime.gpus[].util", _F, _PCT, "", read="min"),
    PodField("gpu_mem_util_max", "runtime.gpus[].memoryUtil", _F, _PCT, "", read="max"),
    PodField("gpus_reporting", "runtime.gpus[].util", _I, "", "<NA> without it", read="numbers"),
    PodField("cluster_ip", "cluster.ip", _S, "", "the address on the cluster's private network"),
    PodField("data_center_id", "dataCenterId", _S, "", "e.g. 'US-TX-3'; <NA> until scheduled"),
    PodField("cloud", "cloud", _S, "", "SECURE or COMMUNITY; any other value kept as sent"),
    PodField("cluster_role", "cluster.role", _S, "", _ROLES),
    PodField("desired_status", "desiredStatus", _S, "", _LEGACY_STATUS),
    PodField("cpu_type", "cpu.id", _S, "", "the CPU flavor, e.g. 'cpu5c'; <NA> on GPU pods"),
    PodField("vcpu_count", "cpu.vcpuCount", _I, "", "<NA> on GPU pods"),
    PodField("cpu_memory", "cpu.memory", _I, _GB, "the pod's RAM; <NA> on GPU pods"),
    PodField("disk", "disk", _I, _GB, "container disk (wiped on restart)"),
    PodField("image", "image", _S, "", "the container image reference"),
    PodField("template", "template", _S, "", "the id of the template the pod was created from"),
    PodField("registry", "registry", _S, "", "the registry credential's id"),
    PodField("cuda_version", "cudaVersion", _S, "", "e.g. '12.8'; <NA> when unknown"),
    PodField("locked", "locked", _B, "", ""),
    PodField("persistent_size", "mounts.persistent.size", _I, _GB, ""),
    PodField("persistent_path", "mounts.persistent.path", _S, "", ""),
    PodField("network_volumes", "mounts.network[].volumeId", _S, "", "", read="join"),
    PodField("global_networking", "globalNetworking.enabled", _B, "", ""),
    PodField("global_ip", "globalNetworking.ip", _S, "", "only when enabled"),
    PodField("internal_dns", "globalNetworking.internalDns", _S, "", "only when enabled"),
    PodField("ssh_proxy_host", "ssh.proxy.host", _S, "", "<NA> until the pod has a machine"),
    PodField("ssh_proxy_port", "ssh.proxy.port", _I, "", ""),
    PodField("ssh_direct_host", "ssh.direct.host", _S, "", "<NA> unless 22/tcp is published"),
    PodField("ssh_direct_port", "ssh.direct.port", _I, "", ""),
    PodField("ports", "ports[]", _S, "", "e.g. '8888/http,22/tcp'", read="join", value="list[str]"),
    PodField("runtime_ports", "runtime.ports[]", _I, "", "port mappings", read="count"),
    PodField("env_vars", "env", _S, "", "environment variable NAMES", read="names", value=_ENV),
    PodField("actions", "actions[]", _S, "", "the transitions valid now", read="join", value=_ANY),
    PodField("network_volume_paths", "mounts.network[].path", _S, "", "", read="join"),
    # The document's fields that no column reads: the model declares them all the same.
    PodField("", "args", "", "", "the container's arguments", value="str"),
    PodField("", "ssh.proxy.username", "", "", "", value="str"),
    PodField("", "ssh.proxy.command", "", "", "", value="str"),
    PodField("", "ssh.direct.username", "", "", "", value="str"),
    PodField("", "ssh.direct.command", "", "", "", value="str"),
    PodField("", "runtime.ports[].private", "", "", "the port inside the pod", value="int"),
    PodField("", "runtime.ports[].public", "", "", "the port outside", value="int"),
    PodField("", "runtime.ports[].type", "", "", "e.g. 'http', 'tcp'", value="str"),
    PodField("", "runtime.ports[].ip", "", "", "", value="str"),
)


class Model(NamedTuple):
    """The pydantic model a block of the pod (an object, or each object of a list) is."""

    name: str
    doc: str  # the class docstring; "" for none
    #: Keys the model declares first, in this order: how its repr and dumps list them.
    #: Every other key follows in table order, so a new field needs no entry here.
    first: tuple[str, ...] = ()


_UTIL = Model("RuntimeUtil", "A ``{util: number}`` block (``runtime.cpu``, ``runtime.memory``).")
_ENDPOINT = Model("SshEndpoint", "")

#: The model of each block, by path ("" is the pod). Blocks of one shape share one.
MODELS: Final[Mapping[str, Model]] = MappingProxyType(
    {
        "": Model(
            "Pod",
            """A cluster member pod, as ``GET /v2/clusters/{id}/pods`` returns it.

    ``env`` maps variable names to ``SecretStr``: its values never show in a repr,
    ``str()`` or ``model_dump_json()``; call ``.get_secret_value()`` deliberately.
    """,
            first=(
                *("id", "name", "image", "args", "disk", "ports", "env", "registry", "actions"),
                *("template", "cost", "status", "cloud", "desiredStatus", "locked"),
                *("dataCenterId", "cudaVersion", "createdAt", "startedAt", "mounts", "ssh"),
                *("globalNetworking", "runtime", "gpu", "cpu", "cluster"),
            ),
        ),
        "gpu": Model("GpuSpec", "``pod.gpu``: the GPU type and how many the pod has."),
        "cpu": Model(
            "CpuSpec", "``pod.cpu``: CPU flavour, vCPUs and memory (units not stated by the spec)."
        ),
        "cluster": Model(
            "ClusterMembership",
            "``pod.cluster``: the cluster the pod belongs to, its rank, role and "
            "cluster-internal IP.",
        ),
        "runtime": Model(
            "Runtime",
            "``pod.runtime``: live metrics; absent while a pod is not running.",
            first=("uptime", "gpus"),
        ),
        "runtime.gpus[]": Model("RuntimeGpu", "One GPU's utilization sample."),
        "runtime.cpu": _UTIL,
        "runtime.memory": _UTIL,
        "runtime.ports[]": Model("RuntimePort", "A port mapping reported at runtime."),
        "mounts": Model("PodMounts", ""),
        "mounts.persistent": Model("PersistentMount", ""),
        "mounts.network[]": Model("NetworkMount", ""),
        "ssh": Model("PodSsh", ""),
        "ssh.proxy": _ENDPOINT,
        "ssh.direct": _ENDPOINT,
        "globalNetworking": Model("GlobalNetworking", ""),
    }
)

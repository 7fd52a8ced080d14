"""The frames' columns: each one's dtype, source field and unit, written down once.

:data:`POD_FIELDS` is the pods frame's one table: per column, the JSON path in the
pod it is read from, its dtype, unit and meaning, and how the value becomes a cell.
Everything else about a pod's fields is derived from it: :data:`POD_COLUMNS` and
the column docs here, the raw-row readers (:mod:`ccanalytics.frames._fields` for
dicts, :mod:`ccanalytics.frames._decode` for raw JSON) and the column builders
(:mod:`ccanalytics.frames._pods`). A field the document has is one line below.

:data:`GPU_COLUMNS` lists the columns of :func:`~ccanalytics.frames._build.gpus_frame`;
:func:`_column_table` renders a mapping as the text table that ``_frames`` puts into
those functions' docstrings, so ``help(pods_frame)`` shows it.
Plain data: this module imports neither pandas nor numpy.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, NamedTuple

# The underscored name is for ``_frames``, not public API.
__all__ = [
    "GPU_COLUMNS",
    "LOAD_COLUMNS",
    "POD_COLUMNS",
    "POD_FIELDS",
    "READS",
    "ColumnSpec",
    "PodField",
    "_column_table",
]


class ColumnSpec(NamedTuple):
    """A frame column: its pandas dtype and what it holds (source field, unit)."""

    dtype: str
    meaning: str


#: How the value(s) at a field's path become one cell, and the words the docs use.
#: The column builders (``_pods``) implement each; the readers read the path's value
#: as sent, except ``names``, whose object is reduced to its keys while it is read.
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
    """One column of the pods frame and where in the pod it comes from."""

    column: str
    #: JSON path in the pod, keys joined by dots: ``cluster.rank``. ``x[]`` is the
    #: list ``x`` itself, ``x[].k`` the ``k`` of each of its objects.
    path: str
    dtype: str
    unit: str  # "" where the value has none
    meaning: str
    read: str = ""  # a key of READS
    #: Another path, read where this one's value is not a string (older payloads).
    fallback: str = ""

    def describe(self) -> str:
        """The column's source, unit and meaning in one line, as the docs show it."""
        source = " ".join(filter(None, [self.path, READS[self.read] and f"({READS[self.read]})"]))
        if self.fallback:
            source += f", else {self.fallback}"
        return "; ".join(filter(None, [", ".join(filter(None, [source, self.unit])), self.meaning]))


_S, _I, _F, _B, _T = "string", "Int64", "Float64", "boolean", "datetime64[ns, UTC]"
# Units as the provider's published document (spec/provider-openapi-v2.json) states them.
_PCT = "integer percent 0-100 as sent, read as float"
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

#: The pods frame, one line per column, in column order. The first 15 columns are
#: fixed by the public API; the rest follow the pod's blocks. A line is
#: (column, JSON path, dtype, unit, meaning[, read=, fallback=]): see :class:`PodField`.
POD_FIELDS: Final[tuple[PodField, ...]] = (
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
    PodField("ports", "ports[]", _S, "", "e.g. '8888/http,22/tcp'", read="join"),
    PodField("runtime_ports", "runtime.ports[]", _I, "", "port mappings", read="count"),
    PodField("env_vars", "env", _S, "", "environment variable NAMES", read="names"),
    PodField("actions", "actions[]", _S, "", "the transitions valid now", read="join"),
)

#: Columns of :func:`pods_frame`, in order: name -> (dtype, meaning and unit).
POD_COLUMNS: Final[Mapping[str, ColumnSpec]] = MappingProxyType(
    {f.column: ColumnSpec(f.dtype, f.describe()) for f in POD_FIELDS}
)

#: Columns of :func:`gpus_frame`, in order: name -> (dtype, meaning and unit).
#: One row per GPU the pod pays for (see :func:`gpus_frame` for the rule).
GPU_COLUMNS: Final[Mapping[str, ColumnSpec]] = MappingProxyType(
    {
        "cluster_id": ColumnSpec(_S, "the pod's cluster.id; the cluster_id argument where absent"),
        "pod_id": ColumnSpec(_S, "the pod's id"),
        "rank": ColumnSpec(_I, "the pod's cluster.rank"),
        "gpu_index": ColumnSpec(
            _I, "0-based position of the GPU in the pod (runtime.gpus[] order; no GPU ids exist)"
        ),
        "util": ColumnSpec(
            _F, f"runtime.gpus[].util, {_PCT}; <NA> for a paid GPU that does not report"
        ),
        "memory_util": ColumnSpec(_F, f"runtime.gpus[].memoryUtil, {_PCT}; <NA> likewise"),
        "gpu_type": ColumnSpec(_S, "the pod's gpu.id"),
        "status": ColumnSpec(_S, "the pod's status (see the pods frame)"),
    }
)

#: Columns that only a load adds (:func:`~ccanalytics.frames.load_cluster_pods`,
#: :func:`~ccanalytics.frames.load_cluster_frames`), after the columns above, to both
#: frames. ``pods_frame``/``gpus_frame`` of a listing you hold do not have them.
LOAD_COLUMNS: Final[Mapping[str, ColumnSpec]] = MappingProxyType(
    {
        "observed_at": ColumnSpec(
            _T,
            "load only: when the service answered, UTC (its Date header when present and "
            "plausible, else the local clock at receipt); one value per cluster loaded",
        ),
    }
)


def _column_table(columns: Mapping[str, ColumnSpec], indent: str = "    ") -> str:
    """The column mapping as an aligned text table for a docstring."""
    name_width = max(map(len, columns))
    dtype_width = max(len(spec.dtype) for spec in columns.values())
    lead = name_width + dtype_width + 4
    lines = []
    for name, spec in columns.items():
        wrapped = textwrap.wrap(spec.meaning, width=max(88 - len(indent) - lead, 30))
        lines.append(f"{name:<{name_width}}  {spec.dtype:<{dtype_width}}  {wrapped[0]}")
        lines.extend(" " * lead + more for more in wrapped[1:])
    return f"\n{indent}".join(lines)

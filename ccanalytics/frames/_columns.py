"""The frames' columns: each one's dtype, source field and unit, written down once.

:data:`POD_COLUMNS` and :data:`GPU_COLUMNS` list the columns of
:func:`~ccanalytics.frames._build.pods_frame` and :func:`~ccanalytics.frames._build.gpus_frame`
in order; :func:`_column_table` renders a mapping as the text table that
``_frames`` puts into those functions' docstrings, so ``help(pods_frame)`` shows it.
Plain data: this module imports neither pandas nor numpy.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, NamedTuple

# The underscored name is for ``_frames``, not public API.
__all__ = ["GPU_COLUMNS", "LOAD_COLUMNS", "POD_COLUMNS", "ColumnSpec", "_column_table"]


class ColumnSpec(NamedTuple):
    """A frame column: its pandas dtype and what it holds (source field, unit)."""

    dtype: str
    meaning: str


_S, _I, _F, _B, _T = "string", "Int64", "Float64", "boolean", "datetime64[ns, UTC]"
# Units as the provider's published document (spec/provider-openapi-v2.json) states them.
_PCT = "integer percent 0-100 as sent, read as float"
_GB = "GB"
_STATUS_VALUES = "PROVISIONING, STARTING, RUNNING, EXITED, ERROR or TERMINATED"
_NO_METRICS = "<NA> unless the pod is RUNNING (the service sends runtime null otherwise)"

#: Columns of :func:`pods_frame`, in order: name -> (dtype, meaning and unit).
#: The first 15 are fixed by the public API; the rest follow the pod's blocks.
POD_COLUMNS: Final[Mapping[str, ColumnSpec]] = MappingProxyType(
    {
        "cluster_id": ColumnSpec(_S, "cluster.id; the cluster_id argument where absent"),
        "pod_id": ColumnSpec(_S, "id"),
        "name": ColumnSpec(_S, "name"),
        "rank": ColumnSpec(_I, "cluster.rank, the pod's rank in its cluster; <NA> until assigned"),
        "cost": ColumnSpec(_F, "cost, USD per hour; 0.0 while EXITED or TERMINATED"),
        "gpu_type": ColumnSpec(_S, "gpu.id, e.g. 'NVIDIA H100 80GB HBM3'; <NA> on CPU pods"),
        "gpu_count": ColumnSpec(_I, "gpu.count, GPUs the pod pays for; <NA> on CPU pods"),
        "cpu_util": ColumnSpec(_F, f"runtime.cpu.util, {_PCT}; {_NO_METRICS}"),
        "memory_util": ColumnSpec(_F, f"runtime.memory.util, {_PCT}"),
        "gpu_util_mean": ColumnSpec(_F, f"mean of runtime.gpus[].util over GPUs reporting, {_PCT}"),
        "gpu_util_max": ColumnSpec(_F, f"max of runtime.gpus[].util, {_PCT}"),
        "gpu_mem_util_mean": ColumnSpec(_F, f"mean of runtime.gpus[].memoryUtil, {_PCT}"),
        "created_at": ColumnSpec(_T, "createdAt"),
        "started_at": ColumnSpec(_T, "startedAt; <NA> until the pod first starts"),
        "uptime_s": ColumnSpec(
            _F, "runtime.uptime, integer seconds since the container (re)started, read as float"
        ),
        "status": ColumnSpec(
            _S,
            f"status: {_STATUS_VALUES}; any other value kept as sent. A pre-v2 payload "
            "without status gives its desiredStatus here",
        ),
        "gpu_util_min": ColumnSpec(_F, f"min of runtime.gpus[].util, {_PCT}"),
        "gpu_mem_util_max": ColumnSpec(_F, f"max of runtime.gpus[].memoryUtil, {_PCT}"),
        "gpus_reporting": ColumnSpec(
            _I,
            "how many runtime.gpus[] entries carry a numeric util (may be fewer than "
            "gpu_count); <NA> without the list",
        ),
        "cluster_ip": ColumnSpec(_S, "cluster.ip, the address on the cluster's private network"),
        "data_center_id": ColumnSpec(_S, "dataCenterId, e.g. 'US-TX-3'; <NA> until scheduled"),
        "cloud": ColumnSpec(_S, "cloud: SECURE or COMMUNITY; any other value kept as sent"),
        "cluster_role": ColumnSpec(
            _S,
            "cluster.role: SLURM_CONTROLLER, SLURM_COMPUTE, RAY_HEAD or RAY_WORKER; "
            "<NA> on other kinds of cluster",
        ),
        "desired_status": ColumnSpec(
            _S,
            "legacy: desiredStatus, sent only by pre-v2 payloads (the v2 service never "
            "sends it, so <NA> there); read status instead, which falls back to it",
        ),
        "cpu_type": ColumnSpec(_S, "cpu.id, the CPU flavor, e.g. 'cpu5c'; <NA> on GPU pods"),
        "vcpu_count": ColumnSpec(_I, "cpu.vcpuCount; <NA> on GPU pods"),
        "cpu_memory": ColumnSpec(_I, f"cpu.memory, the pod's RAM, {_GB}; <NA> on GPU pods"),
        "disk": ColumnSpec(_I, f"disk, container disk (wiped on restart), {_GB}"),
        "image": ColumnSpec(_S, "image, the container image reference"),
        "template": ColumnSpec(_S, "template, the id of the template the pod was created from"),
        "registry": ColumnSpec(_S, "registry, the registry credential's id"),
        "cuda_version": ColumnSpec(_S, "cudaVersion, e.g. '12.8'; <NA> when unknown"),
        "locked": ColumnSpec(_B, "locked"),
        "persistent_size": ColumnSpec(_I, f"mounts.persistent.size, {_GB}"),
        "persistent_path": ColumnSpec(_S, "mounts.persistent.path"),
        "network_volumes": ColumnSpec(_S, "mounts.network[].volumeId, comma-joined"),
        "global_networking": ColumnSpec(_B, "globalNetworking.enabled"),
        "global_ip": ColumnSpec(_S, "globalNetworking.ip; only when enabled"),
        "internal_dns": ColumnSpec(_S, "globalNetworking.internalDns; only when enabled"),
        "ssh_proxy_host": ColumnSpec(_S, "ssh.proxy.host; <NA> until the pod has a machine"),
        "ssh_proxy_port": ColumnSpec(_I, "ssh.proxy.port"),
        "ssh_direct_host": ColumnSpec(_S, "ssh.direct.host; <NA> unless 22/tcp is published"),
        "ssh_direct_port": ColumnSpec(_I, "ssh.direct.port"),
        "ports": ColumnSpec(_S, "ports[], comma-joined, e.g. '8888/http,22/tcp'"),
        "runtime_ports": ColumnSpec(_I, "number of runtime.ports[] mappings"),
        "env_vars": ColumnSpec(_S, "env variable NAMES, sorted, comma-joined (never values)"),
    }
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

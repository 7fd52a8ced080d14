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
__all__ = ["GPU_COLUMNS", "POD_COLUMNS", "ColumnSpec", "_column_table"]


class ColumnSpec(NamedTuple):
    """A frame column: its pandas dtype and what it holds (source field, unit)."""

    dtype: str
    meaning: str


_S, _I, _F, _B, _T = "string", "Int64", "Float64", "boolean", "datetime64[ns, UTC]"
_PCT = "percent 0-100 (assumed; the spec gives no unit)"
_UNITLESS = "unit not stated by the spec (the sandbox uses GB)"

#: Columns of :func:`pods_frame`, in order: name -> (dtype, meaning and unit).
#: The first 15 are fixed by the public API; the rest follow the pod's blocks.
POD_COLUMNS: Final[Mapping[str, ColumnSpec]] = MappingProxyType(
    {
        "cluster_id": ColumnSpec(_S, "cluster.id; the cluster_id argument where absent"),
        "pod_id": ColumnSpec(_S, "id"),
        "name": ColumnSpec(_S, "name"),
        "rank": ColumnSpec(_I, "cluster.rank, the pod's rank in its cluster; <NA> while pending"),
        "cost": ColumnSpec(_F, "cost, price per hour (assumed USD/hour; the spec gives no unit)"),
        "gpu_type": ColumnSpec(_S, "gpu.id, e.g. 'NVIDIA H100 80GB HBM3'"),
        "gpu_count": ColumnSpec(_I, "gpu.count; <NA> without a gpu block (CPU pods: <NA> or 0)"),
        "cpu_util": ColumnSpec(_F, f"runtime.cpu.util, {_PCT}"),
        "memory_util": ColumnSpec(_F, f"runtime.memory.util, {_PCT}"),
        "gpu_util_mean": ColumnSpec(_F, f"mean of runtime.gpus[].util over GPUs reporting, {_PCT}"),
        "gpu_util_max": ColumnSpec(_F, "max of runtime.gpus[].util, percent (assumed)"),
        "gpu_mem_util_mean": ColumnSpec(_F, "mean of runtime.gpus[].memoryUtil, percent (assumed)"),
        "created_at": ColumnSpec(_T, "createdAt"),
        "started_at": ColumnSpec(_T, "startedAt; <NA> while pending"),
        "uptime_s": ColumnSpec(_F, "runtime.uptime, seconds (assumed)"),
        "status": ColumnSpec(
            _S,
            "status: PROVISIONING, STARTING, RUNNING, EXITED, ERROR or TERMINATED; any other "
            "value kept as sent; desiredStatus where an older payload has no status",
        ),
        "gpu_util_min": ColumnSpec(_F, "min of runtime.gpus[].util, percent (assumed)"),
        "gpu_mem_util_max": ColumnSpec(_F, "max of runtime.gpus[].memoryUtil, percent (assumed)"),
        "gpus_reporting": ColumnSpec(
            _I, "how many runtime.gpus[] entries carry a numeric util; <NA> without the list"
        ),
        "cluster_ip": ColumnSpec(_S, "cluster.ip, the cluster-internal address"),
        "data_center_id": ColumnSpec(_S, "dataCenterId"),
        "cloud": ColumnSpec(_S, "cloud: SECURE or COMMUNITY"),
        "cluster_role": ColumnSpec(
            _S,
            "cluster.role: SLURM_CONTROLLER, SLURM_COMPUTE, RAY_HEAD or RAY_WORKER; "
            "<NA> on other kinds of cluster",
        ),
        "desired_status": ColumnSpec(
            _S, "desiredStatus, e.g. 'RUNNING' (sent by the service; not in the spec)"
        ),
        "cpu_type": ColumnSpec(_S, "cpu.id"),
        "vcpu_count": ColumnSpec(_I, "cpu.vcpuCount"),
        "cpu_memory": ColumnSpec(_I, f"cpu.memory, the pod's RAM; {_UNITLESS}"),
        "disk": ColumnSpec(_I, f"disk, container disk size; {_UNITLESS}"),
        "image": ColumnSpec(_S, "image, the container image reference"),
        "template": ColumnSpec(_S, "template"),
        "registry": ColumnSpec(_S, "registry, the registry credential's id"),
        "cuda_version": ColumnSpec(_S, "cudaVersion"),
        "locked": ColumnSpec(_B, "locked"),
        "persistent_size": ColumnSpec(_I, f"mounts.persistent.size; {_UNITLESS}"),
        "persistent_path": ColumnSpec(_S, "mounts.persistent.path"),
        "network_volumes": ColumnSpec(_S, "mounts.network[].volumeId, comma-joined"),
        "global_networking": ColumnSpec(_B, "globalNetworking.enabled"),
        "global_ip": ColumnSpec(_S, "globalNetworking.ip"),
        "internal_dns": ColumnSpec(_S, "globalNetworking.internalDns"),
        "ssh_proxy_host": ColumnSpec(_S, "ssh.proxy.host"),
        "ssh_proxy_port": ColumnSpec(_I, "ssh.proxy.port"),
        "ssh_direct_host": ColumnSpec(_S, "ssh.direct.host"),
        "ssh_direct_port": ColumnSpec(_I, "ssh.direct.port"),
        "ports": ColumnSpec(_S, "ports[], comma-joined, e.g. '22/tcp,8888/http'"),
        "runtime_ports": ColumnSpec(_I, "number of runtime.ports[] mappings"),
        "env_vars": ColumnSpec(_S, "env variable NAMES, sorted, comma-joined (never values)"),
    }
)

#: Columns of :func:`gpus_frame`, in order: name -> (dtype, meaning and unit).
GPU_COLUMNS: Final[Mapping[str, ColumnSpec]] = MappingProxyType(
    {
        "cluster_id": ColumnSpec(_S, "the pod's cluster.id; the cluster_id argument where absent"),
        "pod_id": ColumnSpec(_S, "the pod's id"),
        "rank": ColumnSpec(_I, "the pod's cluster.rank"),
        "gpu_index": ColumnSpec(_I, "0-based position among the pod's runtime.gpus[] objects"),
        "util": ColumnSpec(_F, f"runtime.gpus[].util, {_PCT}"),
        "memory_util": ColumnSpec(_F, f"runtime.gpus[].memoryUtil, {_PCT}"),
        "gpu_type": ColumnSpec(_S, "the pod's gpu.id"),
        "status": ColumnSpec(_S, "the pod's status (see the pods frame)"),
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

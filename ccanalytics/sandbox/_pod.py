"""One pod as the live service sends it: the published document's ``Pod`` schema.

Both fleets (the fixed snapshot of :mod:`._data` and the fleet in time of
:mod:`._timeline`) build their pods here, so every pod the sandbox serves follows
the same rules (``provider-notes.md``):

- every required field is present; ``status`` and ``cloud`` are set; there is no
  ``desiredStatus``;
- ``gpu`` is present on GPU pods only and ``cpu`` on CPU pods only (omitted, not null);
- ``runtime`` is ``null`` unless the pod is ``RUNNING``; utilizations and ``uptime`` are
  integers (percent 0-100, seconds);
- ``cost`` is USD per hour and ``0.0`` for ``EXITED`` and ``TERMINATED`` pods;
- at most one kind of mount; ``actions`` are the transitions valid for the status;
- ``cluster.role`` only on SLURM and RAY clusters; ``cluster.rank`` is ``null`` and
  ``cluster.ip`` omitted while the pod is ``PROVISIONING``;
- ``ssh.proxy`` is ``null`` until the pod has a machine, ``ssh.direct`` unless it runs.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "ACTIONS",
    "CPU_PRICE",
    "GPU_PRICES",
    "SECRET_PREFIX",
    "PodIdentity",
    "clamp_percent",
    "iso",
    "pod_id",
    "pod_json",
    "secret",
]

#: Every secret value the sandbox serves starts with this, so leaks are easy to find.
SECRET_PREFIX = "sbx-secret-"

#: GPU types with an on-demand price per GPU-hour (USD, illustrative).
GPU_PRICES = {
    "NVIDIA H100 80GB HBM3": 2.99,
    "NVIDIA A100-SXM4-80GB": 1.89,
    "NVIDIA L40S": 0.86,
    "NVIDIA RTX A6000": 0.49,
}
#: Price per vCPU-hour of a CPU pod (USD).
CPU_PRICE = 0.02

#: The transitions a pod accepts in each status (the document's ``actions``).
ACTIONS: dict[str, list[str]] = {
    "PROVISIONING": ["terminate"],
    "STARTING": ["stop", "terminate"],
    "RUNNING": ["stop", "restart", "terminate"],
    "EXITED": ["start", "terminate"],
    "ERROR": ["restart", "terminate"],
    "TERMINATED": [],
}
_UNSTARTED = ("PROVISIONING", "STARTING")


@dataclass(frozen=True)
class PodIdentity:
    """What does not change over a pod's life: its configuration and its secrets."""

    cluster_id: str
    index: int
    rank: int | None
    gpu_type: str | None
    gpu_count: int
    vcpus: int
    env: dict[str, str]
    name_prefix: str = "worker"
    image: str = "nvcr.io/nvidia/pytorch:24.05-py3"
    template: str | None = "tpl-pytorch-2.3"
    data_center: str = "US-TX-3"
    cloud: str = "SECURE"
    #: ``SLURM_CONTROLLER``, ``SLURM_COMPUTE``, ``RAY_HEAD``, ``RAY_WORKER`` or None.
    role: str | None = None
    #: ``persistent`` (host-local, GPU pods only), ``network`` or ``none``.
    mount: str = "network"

    @property
    def id(self) -> str:
        return pod_id(self.cluster_id, self.index)

    @property
    def cost(self) -> float:
        """USD per hour while the pod holds its machine."""
        if self.gpu_type:
            return round(GPU_PRICES[self.gpu_type] * self.gpu_count, 3)
        return round(CPU_PRICE * self.vcpus, 3)


def iso(t: datetime) -> str:
    """RFC 3339 UTC with milliseconds, as the service writes timestamps."""
    return t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def secret(rng: random.Random, name: str) -> str:
    """A fake secret value, recognisable by :data:`SECRET_PREFIX`."""
    return SECRET_PREFIX + name.lower() + "-" + "".join(rng.choices("abcdef0123456789", k=24))


def pod_id(cluster: str, index: int) -> str:
    return "pod-" + hashlib.sha256(f"{cluster}/{index}".encode()).hexdigest()[:10]


def pod_json(
    ident: PodIdentity,
    *,
    status: str,
    created: datetime,
    started: datetime | None,
    now: datetime,
    gpu_utils: list[tuple[int, int]] | None = None,
    cpu_util: int = 0,
    memory_util: int = 0,
) -> dict[str, Any]:
    """The pod as the service sends it at ``now``.

    ``gpu_utils`` holds ``(util, memoryUtil)`` integer percents, one per reporting
    GPU; it and the CPU/memory figures are used only when ``status`` is ``RUNNING``.
    ``started`` is when the container last started (``startedAt``); ``uptime`` is
    counted from it.
    """
    pid, short = ident.id, ident.cluster_id.removeprefix("cl-")
    ip_last, index = (10 + ident.index) % 250, ident.index
    has_machine = status != "PROVISIONING"
    running = status == "RUNNING"
    pod: dict[str, Any] = {
        "id": pid,
        "name": f"{short}-{ident.name_prefix}-{index:03d}",
        "status": status,
        "actions": list(ACTIONS[status]),
        "image": ident.image,
        "args": f"torchrun --nnodes=$WORLD_SIZE --node_rank={ident.rank}" if ident.gpu_type else "",
        "disk": 200 if ident.gpu_type else 50,
        "mounts": _mounts(ident),
        "ports": ["22/tcp", "8888/http"] if ident.gpu_type else ["22/tcp"],
        "env": dict(ident.env),
        "registry": "reg-ngc" if "nvcr.io" in ident.image else "reg-ghcr",
        "cloud": ident.cloud,
        "dataCenterId": ident.data_center if has_machine else None,
        "cudaVersion": "12.4" if ident.gpu_type and has_machine else None,
        "ssh": {
            "proxy": _endpoint("ssh.sandbox.invalid", 22, pid) if has_machine else None,
            "direct": _endpoint(f"203.0.113.{ip_last}", 40000 + index, "root") if running else None,
        },
        "template": ident.template,
        "cost": 0.0 if status in ("EXITED", "TERMINATED") else ident.cost,
        "locked": False,
        "runtime": None,
        "createdAt": iso(created),
        # The container has not started while PROVISIONING or STARTING.
        "startedAt": iso(started) if started is not None and status not in _UNSTARTED else None,
        "globalNetworking": {
            "enabled": True,
            "ip": f"100.64.{index // 250}.{ip_last}",
            "internalDns": f"{pid}.{ident.cluster_id}.internal",
        },
    }
    if ident.gpu_type:
        pod["gpu"] = {"id": ident.gpu_type, "count": ident.gpu_count}
    else:
        pod["cpu"] = {"id": "cpu5g", "vcpuCount": ident.vcpus, "memory": 4 * ident.vcpus}
    pod["cluster"] = _cluster(ident, has_machine)
    if running and started is not None:
        pod["runtime"] = {
            "uptime": max(0, int((now - started).total_seconds())),
            "gpus": [{"util": u, "memoryUtil": m} for u, m in (gpu_utils or [])],
            "cpu": {"util": cpu_util},
            "memory": {"util": memory_util},
            "ports": [
                {
                    "private": 22,
                    "public": 40000 + index,
                    "type": "tcp",
                    "ip": f"203.0.113.{ip_last}",
                }
            ],
        }
    return pod


def _mounts(ident: PodIdentity) -> dict[str, Any]:
    if ident.mount == "persistent" and ident.gpu_type:  # host-local: not on CPU pods
        return {"persistent": {"size": 100, "path": "/workspace"}}
    if ident.mount == "none":
        return {}
    short = ident.cluster_id.removeprefix("cl-")
    return {"network": [{"volumeId": f"vol-{short}-data", "path": "/data"}]}


def _endpoint(host: str, port: int, user: str) -> dict[str, Any]:
    flag = "" if port == 22 else f" -p {port}"
    return {"host": host, "port": port, "username": user, "command": f"ssh {user}@{host}{flag}"}


def _cluster(ident: PodIdentity, has_machine: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"id": ident.cluster_id, "rank": ident.rank if has_machine else None}
    if ident.role:
        block["role"] = ident.role
    if has_machine:  # the overlay address is assigned with the machine
        block["ip"] = f"10.65.{ident.index // 250}.{(10 + ident.index) % 250}"
    return block


def clamp_percent(x: float) -> int:
    """A utilization as the service reports it: an integer percent 0-100."""
    return round(min(100.0, max(0.0, x)))

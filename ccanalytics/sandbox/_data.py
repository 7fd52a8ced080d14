"""Seeded, realistic data for the sandbox: a small fleet of GPU and CPU clusters.

Everything is derived from a seed and a fixed reference time, so a notebook run
against the sandbox prints the same numbers every time. The fleet is built to
contain what the analysis helpers look for:

- ``cl-llama70b-train``: 32 ranks of 8x H100 training one job; rank 13 straggles.
- ``cl-infer-prod``: inference pods on A100/L40S, three of them idle but paid for.
- ``cl-research-dev``: interactive dev pods, mostly idle (forgotten notebooks).
- ``cl-finetune-7b``: 4 ranks of 8x A100, healthy.
- ``cl-etl-cpu``: CPU-only pods (no ``gpu`` block).
- ``cl-bringup``: a cluster coming up, with pods in every lifecycle state: pending
  (no rank yet, no runtime), starting (no runtime metrics), running, exited.

Pod ``env`` holds secrets (tokens with the ``sbx-secret-`` prefix, so tests can
search every output for them). The lifecycle state is in ``desiredStatus``, a field
the spec does not list: real responses carry such extras and clients must keep them.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = [
    "REFERENCE_TIME",
    "SECRET_PREFIX",
    "SandboxData",
    "make_cluster_pods",
    "make_data",
]

#: "Now" for the sandbox: timestamps and uptimes are computed against it.
REFERENCE_TIME = datetime(2026, 11, 20, 12, 0, 0, tzinfo=UTC)
#: Every secret value the sandbox serves starts with this, so leaks are easy to find.
SECRET_PREFIX = "sbx-secret-"

#: GPU types with an on-demand price per GPU-hour (USD, illustrative).
GPU_PRICES = {
    "NVIDIA H100 80GB HBM3": 2.99,
    "NVIDIA A100-SXM4-80GB": 1.89,
    "NVIDIA L40S": 0.86,
    "NVIDIA RTX A6000": 0.49,
}
#: Price per vCPU-hour of a CPU pod.
CPU_PRICE = 0.02

INITIAL_SSH_KEYS = [
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINajBoYvNIvnWWRi5fvEHCRN+YGrlS3KI3xqQ4uhGGlr alice@laptop",
    "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBM4KLE+pqL/dptWR5W9AKd1L"
    "0m61CSmZB4tAoYyxwOrdE3FHs6Y0UvGSwDDM2LxqVbhcL7yh2fdeyZkkIibVK5M= ci-deploy",
]


@dataclass
class SandboxData:
    """The sandbox's state: clusters (id -> pods as JSON dicts), registries and keys."""

    clusters: dict[str, list[dict[str, Any]]]
    registries: dict[str, dict[str, Any]]
    ssh_keys: list[str] = field(default_factory=lambda: list(INITIAL_SSH_KEYS))

    def secrets(self) -> list[str]:
        """Every secret value held: pod env values and registry credentials."""
        out = [
            v
            for pods in self.clusters.values()
            for pod in pods
            for v in (pod.get("env") or {}).values()
        ]
        for reg in self.registries.values():
            out += [reg["username"], reg["password"]]
        return out


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _secret(rng: random.Random, name: str) -> str:
    return SECRET_PREFIX + name.lower() + "-" + "".join(rng.choices("abcdef0123456789", k=24))


def _pod_id(cluster: str, index: int) -> str:
    return "pod-" + hashlib.sha256(f"{cluster}/{index}".encode()).hexdigest()[:10]


def _clamp(x: float) -> float:
    return round(min(100.0, max(0.0, x)), 1)


def make_pod(
    rng: random.Random,
    *,
    cluster_id: str,
    index: int,
    rank: int | None,
    gpu_type: str | None,
    gpu_count: int,
    gpu_util: float | None,
    state: str = "RUNNING",
    name_prefix: str = "worker",
    image: str = "nvcr.io/nvidia/pytorch:24.05-py3",
    template: str = "tpl-pytorch-2.3",
    data_center: str = "US-TX-3",
    created_hours_ago: float = 50.0,
) -> dict[str, Any]:
    """One pod as the API returns it. ``gpu_util`` is the pod's typical GPU utilization."""
    pod_id = _pod_id(cluster_id, index)
    created = REFERENCE_TIME - timedelta(hours=created_hours_ago, minutes=rng.randint(0, 59))
    started = created + timedelta(seconds=rng.randint(60, 600))
    vcpus = 16 * max(1, gpu_count) if gpu_type else rng.choice([8, 16, 32])
    cost = round(GPU_PRICES[gpu_type] * gpu_count, 3) if gpu_type else round(CPU_PRICE * vcpus, 3)
    ip_last = 10 + index
    pod: dict[str, Any] = {
        "id": pod_id,
        "name": f"{cluster_id.removeprefix('cl-')}-{name_prefix}-{index:03d}",
        "image": image,
        "args": "" if not gpu_type else f"torchrun --nnodes=$WORLD_SIZE --node_rank={rank}",
        "disk": 200 if gpu_type else 50,
        "ports": ["22/tcp", "8888/http"] if gpu_type else ["22/tcp"],
        "env": {
            "WANDB_API_KEY": _secret(rng, "wandb"),
            "HF_TOKEN": _secret(rng, "hf"),
            "NCCL_DEBUG": SECRET_PREFIX + "env-" + pod_id,
        },
        "registry": "reg-ngc" if "nvcr.io" in image else "reg-ghcr",
        "actions": [],
        "template": template,
        "cost": cost,
        "locked": False,
        "dataCenterId": data_center,
        "cudaVersion": "12.4" if gpu_type else None,
        "createdAt": _iso(created),
        "startedAt": _iso(started),
        "mounts": {
            "persistent": {"size": 100 if gpu_type else 20, "path": "/workspace"},
            "network": [
                {"volumeId": f"vol-{cluster_id.removeprefix('cl-')}-data", "path": "/data"}
            ],
        },
        "ssh": {
            "proxy": {
                "host": "ssh.sandbox.invalid",
                "port": 22,
                "username": pod_id,
                "command": f"ssh {pod_id}@ssh.sandbox.invalid",
            },
            "direct": {
                "host": f"203.0.113.{ip_last % 250}",
                "port": 40000 + index,
                "username": "root",
                "command": f"ssh root@203.0.113.{ip_last % 250} -p {40000 + index}",
            },
        },
        "globalNetworking": {
            "enabled": True,
            "ip": f"100.64.{index // 250}.{ip_last % 250}",
            "internalDns": f"{name_prefix}-{index:03d}.{cluster_id}.internal",
        },
        "runtime": None,
        "gpu": {"id": gpu_type, "count": gpu_count} if gpu_type else None,
        "cpu": {"id": "cpu3c" if gpu_type else "cpu5g", "vcpuCount": vcpus, "memory": 4 * vcpus},
        "cluster": {"id": cluster_id, "rank": rank, "ip": f"10.65.{index // 250}.{ip_last % 250}"},
        "desiredStatus": state,
    }
    if state == "PENDING":
        pod["startedAt"] = None
        pod["cluster"]["rank"] = None
        pod["ssh"]["direct"] = None
        return pod
    if state in ("EXITED", "STARTING"):
        return pod  # no runtime metrics while not running
    uptime = (REFERENCE_TIME - started).total_seconds()
    gpus = []
    if gpu_type and gpu_util is not None:
        for _ in range(gpu_count):
            u = _clamp(rng.gauss(gpu_util, 2.0 if gpu_util > 5 else 0.5))
            gpus.append({"util": u, "memoryUtil": _clamp(u * 0.8 + rng.uniform(0, 12))})
    pod["runtime"] = {
        "uptime": round(uptime, 1),
        "gpus": gpus,
        "cpu": {"util": _clamp(rng.gauss(35.0 if gpu_type else 70.0, 8.0))},
        "memory": {"util": _clamp(rng.gauss(55.0, 10.0))},
        "ports": [
            {
                "private": 22,
                "public": 40000 + index,
                "type": "tcp",
                "ip": f"203.0.113.{ip_last % 250}",
            }
        ],
    }
    return pod


def make_cluster_pods(
    cluster_id: str,
    n_pods: int,
    *,
    seed: int = 0,
    gpu_type: str = "NVIDIA H100 80GB HBM3",
    gpu_count: int = 8,
    util: float = 90.0,
    straggler_ranks: tuple[int, ...] = (),
) -> list[dict[str, Any]]:
    """A homogeneous training cluster of ``n_pods`` ranks (used for big listings in benchmarks)."""
    rng = random.Random(f"{seed}/{cluster_id}")
    return [
        make_pod(
            rng,
            cluster_id=cluster_id,
            index=i,
            rank=i,
            gpu_type=gpu_type,
            gpu_count=gpu_count,
            gpu_util=util * (0.5 if i in straggler_ranks else 1.0),
            name_prefix="rank",
        )
        for i in range(n_pods)
    ]


def make_data(seed: int = 7) -> SandboxData:
    """The sandbox fleet for ``seed`` (the default is what the notebooks show)."""
    rng = random.Random(seed)
    clusters: dict[str, list[dict[str, Any]]] = {}

    clusters["cl-llama70b-train"] = make_cluster_pods(
        "cl-llama70b-train", 32, seed=seed, util=93.0, straggler_ranks=(13,)
    )

    infer: list[dict[str, Any]] = []
    for i in range(12):
        gpu = "NVIDIA A100-SXM4-80GB" if i < 6 else "NVIDIA L40S"
        util = 2.0 if i in (4, 9, 10) else rng.uniform(55, 80)
        infer.append(
            make_pod(
                rng,
                cluster_id="cl-infer-prod",
                index=i,
                rank=i,
                gpu_type=gpu,
                gpu_count=1 if gpu == "NVIDIA L40S" else 2,
                gpu_util=util,
                name_prefix="vllm",
                image="ghcr.io/vllm-project/vllm-openai:v0.6.3",
                template="tpl-vllm",
                data_center="EU-RO-1",
                created_hours_ago=300.0,
            )
        )
    clusters["cl-infer-prod"] = infer

    clusters["cl-research-dev"] = [
        make_pod(
            rng,
            cluster_id="cl-research-dev",
            index=i,
            rank=i,
            gpu_type="NVIDIA RTX A6000",
            gpu_count=1 if i % 2 else 2,
            gpu_util=(0.0 if i in (0, 2, 3) else 46.0),
            name_prefix="notebook",
            image="jupyter/pytorch-notebook:2024-05",
            template="tpl-jupyter",
            data_center="US-OR-1",
            created_hours_ago=120.0 + 24 * i,
        )
        for i in range(6)
    ]

    clusters["cl-finetune-7b"] = make_cluster_pods(
        "cl-finetune-7b", 4, seed=seed, gpu_type="NVIDIA A100-SXM4-80GB", util=81.0
    )

    clusters["cl-etl-cpu"] = [
        make_pod(
            rng,
            cluster_id="cl-etl-cpu",
            index=i,
            rank=i,
            gpu_type=None,
            gpu_count=0,
            gpu_util=None,
            name_prefix="spark",
            image="apache/spark:3.5.1",
            template="tpl-spark",
            data_center="US-TX-3",
            created_hours_ago=8.0,
        )
        for i in range(5)
    ]

    states = ["RUNNING", "RUNNING", "STARTING", "PENDING", "PENDING", "EXITED"]
    clusters["cl-bringup"] = [
        make_pod(
            rng,
            cluster_id="cl-bringup",
            index=i,
            rank=i,
            gpu_type="NVIDIA H100 80GB HBM3",
            gpu_count=8,
            gpu_util=88.0,
            state=state,
            name_prefix="rank",
            created_hours_ago=0.5,
        )
        for i, state in enumerate(states)
    ]

    registries = {
        "reg-ngc": {"id": "reg-ngc", "name": "NVIDIA NGC", "username": "$oauthtoken"},
        "reg-ghcr": {"id": "reg-ghcr", "name": "GitHub Container Registry", "username": "ml-bot"},
    }
    for reg in registries.values():
        reg["username"] = SECRET_PREFIX + "user-" + reg["id"]
        reg["password"] = _secret(rng, "registry-" + reg["id"])
    return SandboxData(clusters=clusters, registries=registries)

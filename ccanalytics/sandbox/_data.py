"""Seeded, realistic data for the sandbox: a small fleet of GPU and CPU clusters.

Everything is derived from a seed and a fixed reference time, so a notebook run
against the sandbox prints the same numbers every time. The fleet is built to
contain what the analysis helpers look for:

- ``cl-llama70b-train``: 32 ranks of 8x H100 training one job; rank 13 straggles.
- ``cl-infer-prod``: inference pods on A100/L40S, three of them idle but paid for.
- ``cl-research-dev``: interactive dev pods, mostly idle (forgotten notebooks).
- ``cl-finetune-7b``: 4 ranks of 8x A100, healthy.
- ``cl-etl-cpu``: CPU-only pods (no ``gpu`` block).
- ``cl-bringup``: a cluster coming up, with pods in several lifecycle states:
  ``PROVISIONING`` (no rank yet, no runtime), ``STARTING`` (no runtime metrics),
  ``RUNNING``, ``EXITED`` (cost 0.0).
- ``cl-slurm-hpc``: a SLURM cluster (``cluster.role``): rank 0 is the controller
  (a CPU pod), ranks 1-4 are 4x A100 compute nodes.

Pods follow the published document (see :mod:`._pod`). Pod ``env`` holds secrets
(tokens with the ``sbx-secret-`` prefix, so tests can search every output for them).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ccanalytics.sandbox._pod import (
    SECRET_PREFIX,
    PodIdentity,
    clamp_percent,
    pod_id,
    pod_json,
    secret,
)

__all__ = [
    "REFERENCE_TIME",
    "SECRET_PREFIX",
    "SandboxData",
    "make_cluster_pods",
    "make_data",
]

#: "Now" for the sandbox: timestamps and uptimes are computed against it.
REFERENCE_TIME = datetime(2026, 11, 20, 12, 0, 0, tzinfo=UTC)

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
    cloud: str = "SECURE",
    role: str | None = None,
    mount: str = "network",
) -> dict[str, Any]:
    """One snapshot pod at :data:`REFERENCE_TIME`; ``gpu_util`` is its typical GPU util (%)."""
    created = REFERENCE_TIME - timedelta(hours=created_hours_ago, minutes=rng.randint(0, 59))
    started = created + timedelta(seconds=rng.randint(60, 600))
    vcpus = 16 * max(1, gpu_count) if gpu_type else rng.choice([8, 16, 32])
    pid = pod_id(cluster_id, index)
    env = {
        "WANDB_API_KEY": secret(rng, "wandb"),
        "HF_TOKEN": secret(rng, "hf"),
        "NCCL_DEBUG": SECRET_PREFIX + "env-" + pid,
    }
    ident = PodIdentity(
        cluster_id=cluster_id,
        index=index,
        rank=rank,
        gpu_type=gpu_type,
        gpu_count=gpu_count,
        vcpus=vcpus,
        env=env,
        name_prefix=name_prefix,
        image=image,
        template=template,
        data_center=data_center,
        cloud=cloud,
        role=role,
        mount=mount,
    )
    gpus: list[tuple[int, int]] = []
    cpu = memory = 0
    if state == "RUNNING":
        if gpu_type and gpu_util is not None:
            for _ in range(gpu_count):
                u = clamp_percent(rng.gauss(gpu_util, 2.0 if gpu_util > 5 else 0.5))
                gpus.append((u, clamp_percent(u * 0.8 + rng.uniform(0, 12))))
        cpu = clamp_percent(rng.gauss(35.0 if gpu_type else 70.0, 8.0))
        memory = clamp_percent(rng.gauss(55.0, 10.0))
    return pod_json(
        ident,
        status=state,
        created=created,
        started=started,
        now=REFERENCE_TIME,
        gpu_utils=gpus,
        cpu_util=cpu,
        memory_util=memory,
    )


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
    """The sandbox fleet for ``seed`` (the default is what the notebooks show).

    One builder per cluster (the module docstring says what each holds), called in this
    order: they draw from one generator, so the order is part of the data.
    """
    rng = random.Random(seed)
    clusters: dict[str, list[dict[str, Any]]] = {
        "cl-llama70b-train": make_cluster_pods(
            "cl-llama70b-train", 32, seed=seed, util=93.0, straggler_ranks=(13,)
        ),
        "cl-infer-prod": _inference(rng),
        "cl-research-dev": _research(rng),
        "cl-finetune-7b": make_cluster_pods(
            "cl-finetune-7b", 4, seed=seed, gpu_type="NVIDIA A100-SXM4-80GB", util=81.0
        ),
        "cl-etl-cpu": _etl(rng),
        "cl-bringup": _bringup(rng),
        "cl-slurm-hpc": _slurm(rng),
    }
    return SandboxData(clusters=clusters, registries=_registries(rng))


def _inference(rng: random.Random) -> list[dict[str, Any]]:
    """Inference pods on A100 and L40S; three of them idle but paid for."""
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
    return infer


def _research(rng: random.Random) -> list[dict[str, Any]]:
    """Interactive dev pods, mostly idle (forgotten notebooks)."""
    return [
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
            cloud="COMMUNITY",
            mount="persistent",
        )
        for i in range(6)
    ]


def _etl(rng: random.Random) -> list[dict[str, Any]]:
    """CPU-only pods (no ``gpu`` block)."""
    return [
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


def _bringup(rng: random.Random) -> list[dict[str, Any]]:
    """A cluster coming up: pods in several lifecycle states."""
    states = ["RUNNING", "RUNNING", "STARTING", "PROVISIONING", "PROVISIONING", "EXITED"]
    return [
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


def _slurm(rng: random.Random) -> list[dict[str, Any]]:
    """A SLURM cluster: rank 0 the controller (a CPU pod), ranks 1-4 compute nodes."""
    return [
        make_pod(
            rng,
            cluster_id="cl-slurm-hpc",
            index=i,
            rank=i,
            gpu_type=None if i == 0 else "NVIDIA A100-SXM4-80GB",
            gpu_count=0 if i == 0 else 4,
            gpu_util=None if i == 0 else 72.0,
            name_prefix="controller" if i == 0 else "compute",
            image="ghcr.io/slurm-containers/slurm:23.11",
            template="tpl-slurm",
            data_center="US-TX-3",
            created_hours_ago=200.0,
            role="SLURM_CONTROLLER" if i == 0 else "SLURM_COMPUTE",
        )
        for i in range(5)
    ]


def _registries(rng: random.Random) -> dict[str, dict[str, str]]:
    """The container registries, their credentials secrets of the sandbox."""
    registries = {
        "reg-ngc": {"id": "reg-ngc", "name": "NVIDIA NGC", "username": "$oauthtoken"},
        "reg-ghcr": {"id": "reg-ghcr", "name": "GitHub Container Registry", "username": "ml-bot"},
    }
    for reg in registries.values():
        reg["username"] = SECRET_PREFIX + "user-" + reg["id"]
        reg["password"] = secret(rng, "registry-" + reg["id"])
    return registries

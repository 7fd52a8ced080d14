"""The timeline fleet: what the sandbox serves at each instant of a simulated clock.

A pure function of the seed and the time (see the package docstring for the
schedule, which the README repeats). ``origin`` is midnight UTC of the clock's
start day; the daily pattern repeats every UTC day from there. Only the small
utilization noise depends on the seed; it is drawn per pod and per simulated
minute, so two listings at the same instant are byte-for-byte equal.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ccanalytics.sandbox._pod import (
    SECRET_PREFIX,
    PodIdentity,
    clamp_percent,
    pod_json,
    secret,
)
from ccanalytics.sandbox._weekly import BUSY as WEEKLY_BUSY, WeeklyFleet

__all__ = ["EVAL_CLUSTER", "FORGOTTEN_CLUSTER", "SpendJump", "Timeline"]

H100, A100, L40S, A6000 = (
    "NVIDIA H100 80GB HBM3",
    "NVIDIA A100-SXM4-80GB",
    "NVIDIA L40S",
    "NVIDIA RTX A6000",
)
HOUR = 3600.0

#: The cluster created at 14:00 UTC on the start day (404 before).
EVAL_CLUSTER = "cl-eval-afternoon"

#: Training: every rank near 93 %; rank 13 always at half, rank 5 at half 10:00-14:00.
TRAIN_UTIL, CHRONIC_STRAGGLER, TRANSIENT_STRAGGLER = 93.0, 13, 5
TRANSIENT_FROM, TRANSIENT_TO = 10 * HOUR, 14 * HOUR
#: Inference: ranks 4, 9 and 10 serve by day (07:00-22:00) and idle at night.
DIURNAL_RANKS, BUSY_FROM, BUSY_TO = (4, 9, 10), 7 * HOUR, 22 * HOUR
#: cl-bringup, each day: (from, status); gone before the first and after the last.
BRINGUP_SCHEDULE = (
    (8 * HOUR, "PROVISIONING"),
    (8 * HOUR + 600, "STARTING"),
    (8 * HOUR + 1200, "RUNNING"),
    (16 * HOUR, "EXITED"),
    (18 * HOUR, "TERMINATED"),
    (18 * HOUR + 1800, None),
)
#: cl-bringup rank 3 fails 12:00-16:00 (``ERROR``), then exits with the others.
BRINGUP_ERROR_RANK, BRINGUP_ERROR_FROM = 3, 12 * HOUR
#: cl-eval-afternoon: created 14:00, starting 14:05, running from 14:10 (start day).
EVAL_CREATED, EVAL_STARTING, EVAL_RUNNING = 14 * HOUR, 14 * HOUR + 300, 14 * HOUR + 600


@dataclass(frozen=True)
class _Steady:
    """A cluster whose pods run all the time at a typical GPU (or CPU) utilization."""

    n_pods: int
    gpu_type: str | None
    gpu_count: int
    util: Callable[[int], float]  # rank -> typical utilization (%)
    created_hours_before: float
    name_prefix: str = "rank"
    image: str = "nvcr.io/nvidia/pytorch:24.05-py3"
    template: str = "tpl-pytorch-2.3"
    data_center: str = "US-TX-3"
    cloud: str = "SECURE"
    mount: str = "network"
    roles: tuple[str, str] | None = None  # (rank 0, other ranks)
    cpu_controller: bool = False  # rank 0 is a CPU pod


def _infer_gpu(rank: int) -> tuple[str, int]:
    return (A100, 2) if rank < 6 else (L40S, 1)


_STEADY: dict[str, _Steady] = {
    "cl-llama70b-train": _Steady(32, H100, 8, lambda r: TRAIN_UTIL, 48.0),
    "cl-infer-prod": _Steady(
        12,
        A100,
        2,
        lambda r: 55.0 + (r * 37 % 25),
        300.0,
        name_prefix="vllm",
        image="ghcr.io/vllm-project/vllm-openai:v0.6.3",
        template="tpl-vllm",
        data_center="EU-RO-1",
    ),
    "cl-research-dev": _Steady(
        6,
        A6000,
        1,
        lambda r: 0.0 if r in (0, 2, 3) else 46.0,
        120.0,
        name_prefix="notebook",
        image="jupyter/pytorch-notebook:2024-05",
        template="tpl-jupyter",
        data_center="US-OR-1",
        cloud="COMMUNITY",
        mount="persistent",
    ),
    "cl-finetune-7b": _Steady(4, A100, 8, lambda r: 81.0, 30.0),
    "cl-etl-cpu": _Steady(
        5,
        None,
        0,
        lambda r: 70.0,
        8.0,
        name_prefix="spark",
        image="apache/spark:3.5.1",
        template="tpl-spark",
    ),
    "cl-slurm-hpc": _Steady(
        5,
        A100,
        4,
        lambda r: 72.0,
        200.0,
        name_prefix="node",
        image="ghcr.io/slurm-containers/slurm:23.11",
        template="tpl-slurm",
        roles=("SLURM_CONTROLLER", "SLURM_COMPUTE"),
        cpu_controller=True,
    ),
    EVAL_CLUSTER: _Steady(4, L40S, 2, lambda r: 70.0, 0.0, data_center="EU-RO-1"),
}
#: The optional forgotten pod (``SandboxApp(forgotten_pod_at=...)``): an 8x H100 box
#: someone started in cl-research-dev and left idle, 23.92 USD/h from that instant on.
FORGOTTEN_CLUSTER, FORGOTTEN_RANK = "cl-research-dev", 6
_FORGOTTEN = _Steady(
    1,
    H100,
    8,
    lambda r: 0.0,
    0.0,
    name_prefix="scratch",
    image="jupyter/pytorch-notebook:2024-05",
    template="tpl-jupyter",
    data_center="US-OR-1",
    mount="persistent",
)
#: Listing order of :meth:`Timeline.cluster_ids`.
CLUSTERS = (*_STEADY, "cl-bringup")
#: A spend jump's pods: 8x H100 boxes, busy (a job scaled out), 23.92 USD/h each.
_BURST = _Steady(1, H100, 8, lambda r: 90.0, 0.0, name_prefix="burst")
#: The identities of jump number ``n``'s pods are of this generation plus ``n``.
_BURST_GENERATION = 900
#: The weekly office fleet's pods: 2x A100 (3.78 USD/h); a pod per arrival, whose
#: generation is this plus the arrival's day since the origin.
_OFFICE = _Steady(1, A100, 2, lambda r: WEEKLY_BUSY, 0.0, name_prefix="office")
_WEEKLY_GENERATION = 100


@dataclass(frozen=True)
class SpendJump:
    """A documented, deterministic spend jump: from ``start`` for ``hours``, ``cluster``
    also runs ``pods`` burst pods (8x H100, 23.92 USD/h each, ``RUNNING`` and busy at
    ~90 %, ranks after the cluster's own pods, the forgotten one too), then they are gone.

    ``SandboxApp(clock=..., spend_jumps=[SpendJump(start)])``: the story a spend anomaly
    is made to catch (cl-infer-prod, 27.84 USD/h, with three more pods for an hour costs
    99.60 USD/h: 3.6x its usual).
    """

    start: datetime
    hours: float = 1.0
    cluster: str = "cl-infer-prod"
    pods: int = 3

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.start.utcoffset() is None:
            raise ValueError("a spend jump's start must be an aware datetime (e.g. tzinfo=UTC)")
        if not self.hours > 0:
            raise ValueError(f"a spend jump lasts more than 0 hours, not {self.hours!r}")
        if isinstance(self.pods, bool) or not isinstance(self.pods, int) or self.pods < 1:
            raise ValueError(f"a spend jump adds 1 pod or more, not {self.pods!r}")
        if self.cluster not in _STEADY:
            raise ValueError(
                f"a spend jump is in a steady cluster ({', '.join(_STEADY)}), not {self.cluster!r}"
            )

    def running(self, when: datetime) -> bool:
        return self.start <= when < self.start + timedelta(hours=self.hours)


class Timeline:
    """The fleet at any simulated instant, for one seed."""

    def __init__(
        self,
        seed: int,
        origin: datetime,
        forgotten_at: datetime | None = None,
        spend_jumps: tuple[SpendJump, ...] = (),
        weekly: WeeklyFleet | None = None,
    ) -> None:
        self.seed = seed
        self.weekly = weekly
        self.origin = origin.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        self.forgotten_at = forgotten_at
        self.spend_jumps = spend_jumps
        self._identities: dict[tuple[str, int, int], PodIdentity] = {}

    def cluster_ids(self, when: datetime) -> list[str]:
        """The clusters that exist at ``when``."""
        listed = [c for c in CLUSTERS if c != EVAL_CLUSTER or self._eval_exists(when)]
        return listed if self.weekly is None else [*listed, self.weekly.cluster]

    def pods(self, cluster_id: str, when: datetime) -> list[dict[str, Any]] | None:
        """The cluster's pods at ``when`` as the service sends them; None: no such cluster."""
        if self.weekly is not None and cluster_id == self.weekly.cluster:
            return self._weekly_pods(self.weekly, when)
        if cluster_id not in CLUSTERS or cluster_id not in self.cluster_ids(when):
            return None
        if cluster_id == "cl-bringup":
            return self._bringup(when)
        spec = _STEADY[cluster_id]
        pods = [self._steady_pod(cluster_id, spec, rank, when) for rank in range(spec.n_pods)]
        if cluster_id == FORGOTTEN_CLUSTER and self._forgotten_exists(when):
            pods.append(self._forgotten_pod(when))
        for number, jump in enumerate(self.spend_jumps):
            if jump.cluster == cluster_id and jump.running(when):
                pods += self._burst_pods(number, jump, len(pods), when)  # ranks after
        return pods

    def secrets(self, when: datetime) -> list[str]:
        """Every env value served at ``when`` (for tests that scan outputs for leaks)."""
        return [
            v
            for c in self.cluster_ids(when)
            for pod in self.pods(c, when) or []
            for v in pod["env"].values()
        ]

    # -- the clusters --------------------------------------------------------------

    def _forgotten_exists(self, when: datetime) -> bool:
        return self.forgotten_at is not None and when >= self.forgotten_at

    def _forgotten_pod(self, when: datetime) -> dict[str, Any]:
        assert self.forgotten_at is not None
        ident = self._identity(FORGOTTEN_CLUSTER, _FORGOTTEN, FORGOTTEN_RANK, generation=0)
        created = self.forgotten_at
        return self._render(ident, "RUNNING", created, created, when, 0.0)

    def _burst_pods(
        self, number: int, jump: SpendJump, first_rank: int, when: datetime
    ) -> list[dict[str, Any]]:
        pods = []
        for rank in range(first_rank, first_rank + jump.pods):
            ident = self._identity(jump.cluster, _BURST, rank, _BURST_GENERATION + number)
            util = _BURST.util(rank)
            pods.append(self._render(ident, "RUNNING", jump.start, jump.start, when, util))
        return pods

    def _weekly_pods(self, weekly: WeeklyFleet, when: datetime) -> list[dict[str, Any]]:
        """The office fleet's pods at ``when`` (:mod:`ccanalytics.sandbox._weekly`)."""
        pods = []
        for state in weekly.office(self.seed, when):
            # A pod per arrival (a rank arrives once a day): its generation is the day's.
            generation = _WEEKLY_GENERATION + (state.since - self.origin).days
            ident = self._identity(weekly.cluster, _OFFICE, state.rank, generation)
            pods.append(self._render(ident, "RUNNING", state.since, state.since, when, state.util))
        always_created = self.origin - timedelta(days=30)
        for rank in range(weekly.pods, weekly.pods + weekly.always_on):
            ident = self._identity(weekly.cluster, _OFFICE, rank, generation=0)
            pods.append(
                self._render(ident, "RUNNING", always_created, always_created, when, WEEKLY_BUSY)
            )
        return pods

    def _eval_exists(self, when: datetime) -> bool:
        return when >= self.origin + timedelta(seconds=EVAL_CREATED)

    def _steady_pod(self, cluster: str, spec: _Steady, rank: int, when: datetime) -> dict[str, Any]:
        ident = self._identity(cluster, spec, rank, generation=0)
        if cluster == EVAL_CLUSTER:
            created = self.origin + timedelta(seconds=EVAL_CREATED)
            started = self.origin + timedelta(seconds=EVAL_RUNNING)
            since = (when - self.origin).total_seconds()
            status = "RUNNING"
            if since < EVAL_STARTING:
                status = "PROVISIONING"
            elif since < EVAL_RUNNING:
                status = "STARTING"
        else:
            # Long-lived: created before the origin, each rank a few minutes apart.
            created = self.origin - timedelta(hours=spec.created_hours_before, minutes=rank)
            started, status = created + timedelta(minutes=5), "RUNNING"
        util = self._gpu_util(cluster, spec, rank, when)
        return self._render(ident, status, created, started, when, util)

    def _gpu_util(self, cluster: str, spec: _Steady, rank: int, when: datetime) -> float:
        tod = _time_of_day(when)
        base = spec.util(rank)
        if cluster == "cl-llama70b-train":
            slow = rank == CHRONIC_STRAGGLER or (
                rank == TRANSIENT_STRAGGLER and TRANSIENT_FROM <= tod < TRANSIENT_TO
            )
            return base * 0.5 if slow else base
        if cluster == "cl-infer-prod" and rank in DIURNAL_RANKS:
            if not BUSY_FROM <= tod < BUSY_TO:
                return 1.0  # idle, but paid for
            # A daily curve: 45 % at 07:00 and 22:00, 85 % at 14:30.
            return 45.0 + 40.0 * math.sin(math.pi * (tod - BUSY_FROM) / (BUSY_TO - BUSY_FROM))
        return base

    def _bringup(self, when: datetime) -> list[dict[str, Any]]:
        day_start = when.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        generation = (day_start - self.origin).days + 1  # new pods every day
        tod = _time_of_day(when)
        status = None
        for since, state in BRINGUP_SCHEDULE:
            if tod >= since:
                status = state
        if generation < 1 or status is None:
            return []
        spec = _Steady(4, H100, 8, lambda r: 88.0, 0.0)
        created = day_start + timedelta(seconds=BRINGUP_SCHEDULE[0][0])
        started = day_start + timedelta(seconds=BRINGUP_SCHEDULE[2][0])
        pods = []
        for rank in range(spec.n_pods):
            ident = self._identity("cl-bringup", spec, rank, generation)
            state = status
            if rank == BRINGUP_ERROR_RANK and status == "RUNNING" and tod >= BRINGUP_ERROR_FROM:
                state = "ERROR"
            pods.append(self._render(ident, state, created, started, when, spec.util(rank)))
        return pods

    # -- pods ------------------------------------------------------------------------

    def _identity(self, cluster: str, spec: _Steady, rank: int, generation: int) -> PodIdentity:
        key = (cluster, rank, generation)
        if key not in self._identities:
            rng = random.Random(f"{self.seed}/{cluster}/{generation}/{rank}/identity")
            gpu_type, gpu_count = spec.gpu_type, spec.gpu_count
            if cluster == "cl-infer-prod" and spec is _STEADY[cluster]:
                gpu_type, gpu_count = _infer_gpu(rank)
            if spec.cpu_controller and rank == 0:
                gpu_type, gpu_count = None, 0
            vcpus = 16 * gpu_count if gpu_type else 16
            role = None
            if spec.roles:
                role = spec.roles[0] if rank == 0 else spec.roles[1]
            index = rank if generation == 0 else generation * 100 + rank
            self._identities[key] = PodIdentity(
                cluster_id=cluster,
                index=index,
                rank=rank,
                gpu_type=gpu_type,
                gpu_count=gpu_count,
                vcpus=vcpus,
                env={
                    "WANDB_API_KEY": secret(rng, "wandb"),
                    "HF_TOKEN": secret(rng, "hf"),
                    "NCCL_DEBUG": SECRET_PREFIX + f"env-{cluster}-{index}",
                },
                name_prefix="controller" if role == "SLURM_CONTROLLER" else spec.name_prefix,
                image=spec.image,
                template=spec.template,
                data_center=spec.data_center,
                cloud=spec.cloud,
                role=role,
                mount=spec.mount,
            )
        return self._identities[key]

    def _render(
        self,
        ident: PodIdentity,
        status: str,
        created: datetime,
        started: datetime,
        when: datetime,
        gpu_util: float,
    ) -> dict[str, Any]:
        minute = int((when - self.origin).total_seconds() // 60)
        rng = random.Random(f"{self.seed}/{ident.cluster_id}/{ident.index}/{minute}")
        # Idle GPUs stay below 5 %; busy ones wander +-3 points around their level.
        spread = 1.0 if gpu_util < 5 else 3.0
        gpus = []
        for _ in range(ident.gpu_count if ident.gpu_type else 0):
            u = clamp_percent(gpu_util + rng.uniform(-spread, spread))
            gpus.append((u, clamp_percent(u * 0.8 + rng.uniform(0, 12))))
        cpu = clamp_percent((35.0 if ident.gpu_type else 70.0) + rng.uniform(-5, 5))
        memory = clamp_percent(55.0 + rng.uniform(-8, 8))
        return pod_json(
            ident,
            status=status,
            created=created,
            started=started,
            now=when,
            gpu_utils=gpus,
            cpu_util=cpu,
            memory_util=memory,
        )


def _time_of_day(when: datetime) -> float:
    """Seconds since midnight UTC."""
    t = when.astimezone(UTC)
    return t.hour * HOUR + t.minute * 60 + t.second + t.microsecond / 1e6

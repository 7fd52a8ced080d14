"""The embedded sandbox: a faithful local implementation of the API v2.

Three ways to use it:

- ``with Sandbox() as sb: client = sb.client()``: real HTTP on a free loopback port;
- ``in_process_client()`` (``Client(FULL_ACCESS_KEY, IN_PROCESS_URL,
  transport=SandboxTransport())``): in process;
- ``ccanalytics sandbox --port 8765``: a server for other programs
  (``CCANALYTICS_BASE_URL=http://127.0.0.1:8765 CCANALYTICS_API_KEY=sbx-full-access-key``).

Quotas (``rate_limits={"minute": (10, 3.0)}``), latency and faults are options of
:class:`SandboxApp`, so tests can exercise throttling and failures quickly. Every pod,
listing and error follows the provider's published document (provider-openapi-v2.json).

**A sandbox that lives in time.** Give it a :class:`SimulatedClock`::

    clock = SimulatedClock(start=datetime(2026, 11, 2, tzinfo=UTC))  # the default start
    app = SandboxApp(clock=clock)  # seed=0 by default; same seed, same history
    with Sandbox(app) as sb: ...  # or SandboxTransport(app) in process
    clock.advance(timedelta(minutes=5))  # or seconds as a number; never backwards

Then every response (errors too) carries ``Date:`` = ``clock.now()`` (IMF-fixdate), the
listing is the *timeline fleet* at ``clock.now()``, and rate-limit windows are counted
on the simulated clock, aligned on UTC minutes, hours and days, with the document's
example policy (60/minute, 3000/hour, 50000/day) unless ``rate_limits=`` is given.
Without a clock the sandbox serves the fixed snapshot fleet of :func:`make_data`.

The timeline fleet (times UTC; the day repeats every day from the start day's
midnight). Utilizations are integer percents with noise drawn per pod and per
simulated minute from the seed: each GPU within +-3 points of the level given
below (+-1 when idle), GPU memory 0.8 x util + 0-12, CPU 35 +- 5 % on GPU pods and
70 +- 5 % on CPU pods, memory 55 +- 8 %.

- ``cl-llama70b-train``: 32 pods (ranks 0-31) of 8x H100, 23.92 USD/h each, running
  since two days before the start; GPUs at ~93 %. Rank 13 straggles at every time
  (~46 %); rank 5 straggles (~46 %) from 10:00 to 14:00 only, then recovers.
- ``cl-infer-prod``: 12 vLLM pods (ranks 0-5: 2x A100, 3.78 USD/h; ranks 6-11: 1x
  L40S, 0.86 USD/h), running and paid for all the time. Ranks 4, 9 and 10 are busy
  07:00-22:00 (every GPU 40-90 %, 45 % at the edges, 85 % at 14:30) and idle
  22:00-07:00 (every GPU below 5 %); the other nine stay at 55-80 %.
- ``cl-bringup``: 4 pods (ranks 0-3) of 8x H100, new pods (new ids) every day:
  absent before 08:00; ``PROVISIONING`` 08:00 (rank null, no runtime, no startedAt);
  ``STARTING`` 08:10; ``RUNNING`` 08:20-16:00 (startedAt 08:20, uptime from 08:20, GPUs
  ~88 %), except rank 3, ``ERROR`` 12:00-16:00 (no runtime, still 23.92 USD/h);
  ``EXITED`` 16:00-18:00 (cost 0.0); ``TERMINATED`` 18:00-18:30 (cost 0.0); then gone
  (an empty listing) until the next day's 08:00.
- ``cl-eval-afternoon``: created at 14:00 on the start day (404 problem+json before):
  4 pods of 2x L40S (1.72 USD/h), ``PROVISIONING`` 14:00, ``STARTING`` 14:05,
  ``RUNNING`` from 14:10 on (~70 %), and on every later day.
- Steady clusters, running all the time: ``cl-research-dev`` (6 notebooks, 1x RTX
  A6000, 0.49 USD/h, COMMUNITY cloud; ranks 0, 2 and 3 forgotten at 0-1 %, the others
  ~46 %), ``cl-finetune-7b`` (4 pods of 8x A100, ~81 %), ``cl-etl-cpu`` (5 CPU pods of
  16 vCPU, 0.32 USD/h, no ``gpu`` block), ``cl-slurm-hpc`` (SLURM: rank 0
  ``SLURM_CONTROLLER`` is a 16-vCPU CPU pod, ranks 1-4 ``SLURM_COMPUTE`` of 4x A100,
  ~72 %).
- Optional, for budget stories: ``SandboxApp(clock=..., forgotten_pod_at=when)`` adds
  to ``cl-research-dev``, from ``when`` on, a forgotten pod: rank 6, one 8x H100
  box (23.92 USD/h), ``RUNNING`` and idle (every GPU at 0-1 %).
- Optional, for spend anomalies: ``SandboxApp(clock=..., spend_jumps=[SpendJump(start,
  hours=1.0, cluster="cl-infer-prod", pods=3)])`` adds to the cluster, from ``start`` for
  ``hours``, ``pods`` burst pods (8x H100, 23.92 USD/h each, ``RUNNING``, GPUs ~90 %,
  ranks after the cluster's own); then they are gone. cl-infer-prod (27.84 USD/h) costs
  99.60 USD/h during the default jump: 3.6x its usual.
- Optional, for seasonal forecasts and idle-rule backtests: ``SandboxApp(clock=...,
  weekly=WeeklyFleet(holidays=(date(2026, 11, 26),)))`` adds ``cl-team-office``: 12
  office pods (2x A100, 3.78 USD/h) that come in on working days (weekdays, not
  holidays) at 08:00-09:30 and leave at 17:00-19:00, each with probability 0.9 a day,
  busy (~85 %) but for every third rank's lunch (12:00-12:45, idle); a pod left behind
  (probability 0.15 at each leaving) runs idle until its rank next comes in; and 2
  pods busy all the time. See :mod:`ccanalytics.sandbox._weekly`.
- Every running pod's ``uptime`` grows with the clock; costs are USD per hour and
  0.0 for ``EXITED``/``TERMINATED`` pods. Registries and SSH keys are the snapshot's.

``_app`` answers requests (routing, auth, errors, rate limits, faults), ``_pod`` builds
one pod as the document describes it, ``_data`` holds the seeded snapshot fleet,
``_defaults`` what "the sandbox" means when nothing more is said (every cluster, the
in-process client, the clock's start and speed),
``_timeline`` the fleet in time, ``_clock`` the simulated clock, ``_server`` serves it
over loopback HTTP or as an httpx transport. It may import :mod:`ccanalytics.keys`
(the server's key rule) and :mod:`ccanalytics.api` (to hand out ready clients);
nothing below the CLI imports the sandbox.
"""

from ccanalytics.sandbox._app import (
    DEFAULT_RATE_LIMITS,
    DOCUMENT_RATE_LIMITS,
    EXEMPT_KEY,
    FAULT_KINDS,
    FULL_ACCESS_KEY,
    LIMITED_KEY,
    MAX_BODY_BYTES,
    NO_ACCESS_KEY,
    Fault,
    SandboxApp,
    SandboxResponse,
    validate_update_ssh_keys,
)
from ccanalytics.sandbox._clock import DEFAULT_START, SimulatedClock
from ccanalytics.sandbox._data import (
    REFERENCE_TIME,
    SECRET_PREFIX,
    SandboxData,
    make_cluster_pods,
    make_data,
)
from ccanalytics.sandbox._defaults import (
    DEFAULT_SPEED,
    IN_PROCESS_URL,
    in_process_client,
    sandbox_cluster_ids,
    simulated_clock,
)
from ccanalytics.sandbox._server import Sandbox, SandboxTransport, serve
from ccanalytics.sandbox._timeline import SpendJump
from ccanalytics.sandbox._weekly import WeeklyFleet

__all__ = [
    "DEFAULT_RATE_LIMITS",
    "DEFAULT_SPEED",
    "DEFAULT_START",
    "DOCUMENT_RATE_LIMITS",
    "EXEMPT_KEY",
    "FAULT_KINDS",
    "FULL_ACCESS_KEY",
    "IN_PROCESS_URL",
    "LIMITED_KEY",
    "MAX_BODY_BYTES",
    "NO_ACCESS_KEY",
    "REFERENCE_TIME",
    "SECRET_PREFIX",
    "Fault",
    "Sandbox",
    "SandboxApp",
    "SandboxData",
    "SandboxResponse",
    "SandboxTransport",
    "SimulatedClock",
    "SpendJump",
    "WeeklyFleet",
    "in_process_client",
    "make_cluster_pods",
    "make_data",
    "sandbox_cluster_ids",
    "serve",
    "simulated_clock",
    "validate_update_ssh_keys",
]

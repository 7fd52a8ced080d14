"""The embedded sandbox: a faithful local implementation of the API v2.

Three ways to use it:

- ``with Sandbox() as sb: client = sb.client()``: real HTTP on a free loopback port;
- ``Client(FULL_ACCESS_KEY, "http://sandbox", transport=SandboxTransport())``: in process;
- ``ccanalytics sandbox --port 8765``: a server for other programs
  (``CCANALYTICS_BASE_URL=http://127.0.0.1:8765 CCANALYTICS_API_KEY=sbx-full-access-key``).

Quotas (``rate_limits={"minute": (10, 3.0)}``), latency and faults are options of
:class:`SandboxApp`, so tests can exercise throttling and failures quickly.

``_app`` answers requests (routing, auth, errors, rate limits, faults), ``_data`` holds
the seeded fleet, ``_server`` serves it over loopback HTTP or as an httpx transport. It
may import :mod:`ccanalytics.keys` (the server's key rule) and :mod:`ccanalytics.api`
(to hand out ready clients); nothing below the CLI imports the sandbox.
"""

from ccanalytics.sandbox._app import (
    DEFAULT_RATE_LIMITS,
    EXEMPT_KEY,
    FAULT_KINDS,
    FULL_ACCESS_KEY,
    LIMITED_KEY,
    NO_ACCESS_KEY,
    Fault,
    SandboxApp,
    SandboxResponse,
    validate_update_ssh_keys,
)
from ccanalytics.sandbox._data import (
    REFERENCE_TIME,
    SECRET_PREFIX,
    SandboxData,
    make_cluster_pods,
    make_data,
)
from ccanalytics.sandbox._server import Sandbox, SandboxTransport, serve

#: The base URL to give a client that uses :class:`SandboxTransport` (never resolved).
IN_PROCESS_URL = "http://sandbox.invalid"

__all__ = [
    "DEFAULT_RATE_LIMITS",
    "EXEMPT_KEY",
    "FAULT_KINDS",
    "FULL_ACCESS_KEY",
    "IN_PROCESS_URL",
    "LIMITED_KEY",
    "NO_ACCESS_KEY",
    "REFERENCE_TIME",
    "SECRET_PREFIX",
    "Fault",
    "Sandbox",
    "SandboxApp",
    "SandboxData",
    "SandboxResponse",
    "SandboxTransport",
    "make_cluster_pods",
    "make_data",
    "serve",
    "validate_update_ssh_keys",
]

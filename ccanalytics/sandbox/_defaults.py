"""What using the sandbox means when nothing more is said: its clusters, its client, its clock.

The command line's ``--sandbox`` and ``ccanalytics sandbox`` use these, so a notebook
that wants "the sandbox, as the CLI runs it" gets the same: every cluster when none is
named, a client that answers in process (no socket), and a simulated clock that starts
at :data:`DEFAULT_START` and runs at :data:`DEFAULT_SPEED` unless told otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ccanalytics.sandbox._app import FULL_ACCESS_KEY
from ccanalytics.sandbox._clock import DEFAULT_START, SimulatedClock
from ccanalytics.sandbox._data import make_data
from ccanalytics.sandbox._server import SandboxTransport

__all__ = [
    "DEFAULT_SPEED",
    "IN_PROCESS_URL",
    "in_process_client",
    "sandbox_cluster_ids",
    "simulated_clock",
]

#: The base URL to give a client that uses :class:`SandboxTransport` (never resolved).
IN_PROCESS_URL = "http://sandbox.invalid"

#: Simulated seconds per real second when a clock is asked for without a speed: a
#: simulated day passes in 24 minutes.
DEFAULT_SPEED = 60.0


def sandbox_cluster_ids(named: Sequence[str] = ()) -> list[str]:
    """The clusters to use: those ``named``, as given; none named means every one the
    sandbox serves (sorted)."""
    return list(named) if named else sorted(make_data().clusters)


def in_process_client(**options: Any) -> Any:
    """A :class:`ccanalytics.Client` with the full-access key, answered in process by a
    fresh sandbox (:class:`SandboxTransport`: no port, no thread). ``options`` are the
    client's (``timeout=``, ...)."""
    from ccanalytics.api import Client

    return Client(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=SandboxTransport(), **options)


def simulated_clock(start: datetime | None, speed: float | None) -> SimulatedClock | None:
    """The clock ``ccanalytics sandbox --simulated-start START --speed X`` runs on: ``None``
    when neither is given (the fixed snapshot fleet); else from ``start`` (default
    :data:`DEFAULT_START`) at ``speed`` (default :data:`DEFAULT_SPEED`)."""
    if start is None and speed is None:
        return None
    return SimulatedClock(
        DEFAULT_START if start is None else start,
        speed=DEFAULT_SPEED if speed is None else speed,
    )

"""Whose clock times an observation: the service's ``Date``, unless it is far from ours.

The one home of the rule, for the client (each response's ``observed_at``) and for
``ccanalytics.history`` (a snapshot's rows): a service time further than
:data:`~ccanalytics.api._config.CLOCK_SKEW` from the local clock while the exchange
ran (a broken clock, or one in 2099) is not trusted, and the local clock times the
observation instead, unless the caller trusts the service's clock (a simulated-clock
sandbox's ``Date`` is its simulated time, which is the point of it).
"""

from __future__ import annotations

import threading
import warnings
from datetime import UTC, datetime

from ccanalytics.api._config import CLOCK_SKEW
from ccanalytics.errors import ClockSkewWarning

__all__ = ["ServiceClock", "judged", "trusted_span"]


def trusted_span(start: datetime, end: datetime | None = None) -> tuple[datetime, datetime]:
    """The service times trusted for an exchange that ran from ``start`` to ``end``
    (default: ``start``) on the local clock: ``CLOCK_SKEW`` either side."""
    return start - CLOCK_SKEW, (start if end is None else end) + CLOCK_SKEW


def judged(service: datetime | None, received: datetime, *, trust: bool) -> tuple[datetime, bool]:
    """The observation time of a response the local clock ``received``, whose ``Date``
    read ``service`` (``None``: none usable), and whether ``service`` was set aside
    for being too far from the local clock."""
    if service is None:
        return received, False
    low, high = trusted_span(received)
    if trust or low <= service <= high:
        return service, False
    return received, True


class ServiceClock:
    """A client's choice of clock, and whether it has warned of a skewed service clock.

    Shared by a client and its :meth:`as_async` twins, so that a run warns once: a
    skewed clock stays skewed.
    """

    def __init__(self, trust: bool) -> None:
        if not isinstance(trust, bool):
            raise TypeError(f"trust_service_clock must be a bool, not {type(trust).__name__}")
        self.trust = trust
        self._warned = False
        self._lock = threading.Lock()

    def observed_at(self, service: datetime | None) -> datetime:
        """When the service answered, by the rule (see the module); warns once."""
        when, skewed = judged(service, datetime.now(UTC), trust=self.trust)
        if skewed and service is not None:
            with self._lock:
                first, self._warned = not self._warned, True
            if first:
                warnings.warn(
                    f"the service's clock reads {service:%Y-%m-%d %H:%M:%S} UTC, more than "
                    f"{CLOCK_SKEW.total_seconds() / 60:.0f} minutes from this machine's: "
                    "observed_at is the local clock at receipt instead (make the client with "
                    "trust_service_clock=True to keep the service's time, as a "
                    "simulated-clock sandbox needs)",
                    ClockSkewWarning,
                    stacklevel=2,
                )
        return when

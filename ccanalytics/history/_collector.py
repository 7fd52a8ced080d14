"""The scheduled collector: snapshots on fixed ticks, within the rate-limit budget.

:func:`collect_every` is what ``ccanalytics collect --every`` runs; the CLI only
parses its arguments and prints one line per snapshot. The loop:

- learns the quota from the first snapshot's ``RateLimit-Policy`` and, if the
  schedule would use more than ``budget_share`` of any window, raises
  :class:`~ccanalytics.errors.ScheduleError` before writing anything, naming the
  shortest interval that fits (:func:`~ccanalytics.history.budget_refusal`);
- finishes a snapshot before it sleeps, and goes on after a failed one (the
  callback is told; the run counts it);
- keeps fixed ticks: a late snapshot does not shift the schedule, missed ticks are
  skipped;
- stops after ``count`` snapshots, when ``stop`` is set, or (``stop_on_signals``, in
  the main thread) on SIGTERM or the first Ctrl-C, after the snapshot under way is
  written; a second Ctrl-C interrupts at once.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from os import PathLike
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeAlias

from ccanalytics._durations import parse_duration
from ccanalytics.errors import CCAnalyticsError, ScheduleError
from ccanalytics.history._collect import (
    CLOCK_SKEW,
    CollectResult,
    Snapshot,
    append_snapshot,
    clock_warning,
    take_snapshot,
)
from ccanalytics.history._schedule import budget_refusal

if TYPE_CHECKING:
    from ccanalytics.api import AsyncClient, Client

__all__ = ["CLOCK_SKEW", "CollectorRun", "SnapshotOutcome", "collect_every"]

#: What a snapshot came to: what was written, or why nothing was (the store, the
#: service). A snapshot where some clusters failed is a result with ``errors``.
SnapshotOutcome: TypeAlias = CollectResult | CCAnalyticsError | OSError

# CLOCK_SKEW (re-exported): a service clock further than this from ours is not
# this machine's "now"; its one home is _collect, which acts on it.


@dataclass(frozen=True)
class CollectorRun:
    """How a :func:`collect_every` run went.

    ``taken`` snapshots were attempted; ``failed`` of them lost a cluster or were not
    written; ``stopped`` is true when a stop event or a signal (``signal_name``) ended
    the run before its ``count``.
    """

    taken: int
    failed: int
    stopped: bool
    signal_name: str | None = None


def collect_every(
    cluster_ids: str | Iterable[str],
    store: str | PathLike[str],
    *,
    every: timedelta | str,
    count: int | None = None,
    client: Client | AsyncClient | None = None,
    budget_share: float = 0.5,
    on_snapshot: Callable[[int, SnapshotOutcome], object] | None = None,
    stop: threading.Event | None = None,
    stop_on_signals: bool = True,
    trust_service_clock: bool = False,
) -> CollectorRun:
    """Take a snapshot of ``cluster_ids`` every ``every`` into ``store`` (see the module).

    Parameters
    ----------
    every:
        The interval: a ``timedelta`` or a duration such as ``"5m"`` or ``"1h30m"``.
    count:
        Stop after this many snapshots; ``None``: until stopped.
    budget_share:
        The share of each rate-limit window the schedule may use (0 to 1]; the rest is
        left to everything else using the same key.
    on_snapshot:
        Called after each snapshot with its number (from 1) and its outcome.
    stop:
        An event that ends the run after the snapshot under way.
    stop_on_signals:
        Also stop on SIGTERM and Ctrl-C (in the main thread only).
    trust_service_clock:
        As for :func:`~ccanalytics.history.collect`: ``False`` times listings whose
        ``Date`` is further than ``CLOCK_SKEW`` (5 minutes) from the local clock by the
        local clock, with one :class:`~ccanalytics.errors.ClockSkewWarning` per run.

    Raises :class:`~ccanalytics.errors.ScheduleError` (nothing written) for a schedule
    over budget, ``ValueError`` for bad arguments.
    """
    ids = (cluster_ids,) if isinstance(cluster_ids, str) else tuple(cluster_ids)
    seconds = _interval(every)
    if count is not None and count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    if not 0 < budget_share <= 1:
        raise ValueError(f"budget_share must be in (0, 1], got {budget_share}")
    with _stopping(stop, stop_on_signals) as stopper:
        return _loop(
            ids,
            store,
            seconds,
            count,
            client,
            budget_share,
            on_snapshot,
            stopper,
            trust_service_clock,
        )


def _interval(every: timedelta | str) -> float:
    seconds = parse_duration(every) if isinstance(every, str) else every.total_seconds()
    if not seconds > 0:
        raise ValueError(f"every must be longer than zero, got {every!r}")
    return seconds


def _loop(
    ids: tuple[str, ...],
    store: str | PathLike[str],
    every: float,
    count: int | None,
    client: Client | AsyncClient | None,
    share: float,
    on_snapshot: Callable[[int, SnapshotOutcome], object] | None,
    stopper: _Stopper,
    trust_clock: bool,
) -> CollectorRun:
    judged = warned = False
    taken = failed = 0
    start = time.monotonic()
    while count is None or taken < count:
        outcome: SnapshotOutcome
        try:
            snapshot = take_snapshot(ids, client, trust_service_clock=trust_clock)
            if not judged and client is not None and client.rate_limit is not None:
                judged = True  # the first response that carried a policy
                _refuse_over_budget(client, snapshot, every, count, share)
            if snapshot.retimed and not warned:
                warned = True  # once per run: a skewed clock stays skewed
                clock_warning(snapshot)
            outcome = append_snapshot(store, snapshot)
        except ScheduleError:
            raise
        except (CCAnalyticsError, OSError) as err:
            outcome = err.with_traceback(None)
        taken += 1
        failed += not isinstance(outcome, CollectResult) or bool(outcome.errors)
        if on_snapshot is not None:
            on_snapshot(taken, outcome)
        if stopper.event.is_set() or (count is not None and taken >= count):
            break
        ticks = math.ceil((time.monotonic() - start) / every)
        if stopper.event.wait(max(0.0, start + max(ticks, taken) * every - time.monotonic())):
            break
    stopped = stopper.event.is_set()
    return CollectorRun(taken, failed, stopped, stopper.signal_name)


def _refuse_over_budget(
    client: Client | AsyncClient,
    snapshot: Snapshot,
    every: float,
    count: int | None,
    share: float,
) -> None:
    assert client.rate_limit is not None
    clusters = len(snapshot.cluster_ids)
    refusal = budget_refusal(client.rate_limit.windows, clusters, every, count, share)
    if refusal is not None:
        raise ScheduleError(refusal + _clock_note(snapshot.service_clock))


def _clock_note(service: datetime | None) -> str:
    """When the service's ``Date`` is far from the local clock (a simulated sandbox's),
    say so: its rate-limit windows count that clock's time, not the wall clock's."""
    if service is None:  # within CLOCK_SKEW of ours (take_snapshot judged it)
        return ""
    return (
        f" (the service's clock reads {service:%Y-%m-%d %H:%M} UTC, not now: its windows "
        "count that clock's time, as a simulated sandbox's do; with --speed they pass "
        "faster than real time)"
    )


class _Stopper:
    """Set by the caller's event, SIGTERM or the first Ctrl-C; a second Ctrl-C
    interrupts at once."""

    def __init__(self, event: threading.Event | None) -> None:
        self.event = event if event is not None else threading.Event()
        self.signal_name: str | None = None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.event.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signal_name = signal.Signals(signum).name
        self.event.set()


@contextmanager
def _stopping(event: threading.Event | None, on_signals: bool) -> Iterator[_Stopper]:
    stopper = _Stopper(event)
    if not on_signals or threading.current_thread() is not threading.main_thread():
        yield stopper  # signals reach only the main thread; nothing to install
        return
    previous: dict[int, Any] = {
        s: signal.signal(s, stopper.handle) for s in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield stopper
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

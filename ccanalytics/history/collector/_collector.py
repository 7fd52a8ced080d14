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
  written; a second Ctrl-C interrupts at once;
- compacts each UTC day it wrote to once it has written a snapshot of a later day
  (``compact_closed_days``, on by default): a month of 5-minute snapshots is then
  one file per table per day, not 8,640 small ones. A failed compaction leaves the
  day's files as they were (see :func:`~ccanalytics.history.compact`), is reported
  to ``on_compact`` and the loop goes on; ``ccanalytics compact`` can finish it later.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from os import PathLike
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeAlias

from ccanalytics._durations import parse_duration
from ccanalytics.errors import CCAnalyticsError, ScheduleError
from ccanalytics.history.collector._collect import (
    CLOCK_SKEW,
    CollectResult,
    Snapshot,
    append_snapshot,
    clock_warning,
    take_snapshot,
)
from ccanalytics.history.collector._schedule import budget_refusal
from ccanalytics.history.store import CompactResult, compact, partition_day

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
    compact_closed_days: bool = True,
    on_compact: Callable[[CompactResult | CCAnalyticsError], object] | None = None,
) -> CollectorRun:
    """Take a snapshot of ``cluster_ids`` every ``every`` into ``store`` (see the module).

    Parameters
    ----------
    every:
        The interval: a ``timedelta`` or a duration such as ``"5m"`` or ``"1h30m"``.
    count:
        Stop after this many snapshots; ``None``: until stopped.
    client:
        A :class:`~ccanalytics.Client` or :class:`~ccanalytics.AsyncClient`; ``None``:
        one from ``CCANALYTICS_API_KEY`` and ``CCANALYTICS_BASE_URL`` for the whole run.
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
    compact_closed_days:
        Compact each UTC day this run wrote to once a snapshot of a later day is
        written (the default); ``False`` leaves compaction to ``ccanalytics compact``.
    on_compact:
        Called after each compaction with its result, or its
        :class:`~ccanalytics.errors.StoreError` (the loop goes on).

    Raises
    ------
    ScheduleError
        The schedule is over the quota budget (nothing is written).
    ValueError
        A bad argument.
    """
    ids = (cluster_ids,) if isinstance(cluster_ids, str) else tuple(cluster_ids)
    seconds = _interval(every)
    if count is not None and count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    if not 0 < budget_share <= 1:
        raise ValueError(f"budget_share must be in (0, 1], got {budget_share}")
    with _stopping(stop, stop_on_signals) as stopper, _run_client(client) as run_client:
        compactor = _Compactor(store, on_compact) if compact_closed_days else None
        return _loop(
            ids,
            store,
            seconds,
            count,
            run_client,
            budget_share,
            on_snapshot,
            stopper,
            trust_service_clock,
            compactor,
        )


@contextmanager
def _run_client(client: Client | AsyncClient | None) -> Iterator[Client | AsyncClient]:
    """The caller's client, or one from the environment for the whole run (closed at
    the end): one pacer learns the quota, so the budget is judged and kept."""
    if client is not None:
        yield client
        return
    from ccanalytics.api import Client

    with Client() as own:
        yield own


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
    client: Client | AsyncClient,
    share: float,
    on_snapshot: Callable[[int, SnapshotOutcome], object] | None,
    stopper: _Stopper,
    trust_clock: bool,
    compactor: _Compactor | None,
) -> CollectorRun:
    judged = warned = False
    taken = failed = 0
    start = time.monotonic()
    while count is None or taken < count:
        outcome: SnapshotOutcome
        try:
            snapshot = take_snapshot(ids, client, trust_service_clock=trust_clock)
            if not judged and client.rate_limit is not None:
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
        if compactor is not None and isinstance(outcome, CollectResult):
            compactor.written(outcome)
        if stopper.stopped or (count is not None and taken >= count):
            break
        ticks = math.ceil((time.monotonic() - start) / every)
        if stopper.wait(max(0.0, start + max(ticks, taken) * every - time.monotonic())):
            break
    return CollectorRun(taken, failed, stopper.stopped, stopper.signal_name)


class _Compactor:
    """Compacts the days a run wrote to, each once a later day has been written."""

    def __init__(
        self,
        store: str | PathLike[str],
        report: Callable[[CompactResult | CCAnalyticsError], object] | None,
    ) -> None:
        self.store = store
        self.report = report
        self.open_days: set[str] = set()

    def written(self, result: CollectResult) -> None:
        days = {day for path in result.files if (day := partition_day(path)) is not None}
        if not days:
            return
        self.open_days |= days
        newest = max(self.open_days)
        for day in sorted(d for d in self.open_days if d < newest):
            self.open_days.discard(day)  # tried once: a failure is left to `compact`
            outcome: CompactResult | CCAnalyticsError
            try:
                outcome = compact(self.store, day)
            except CCAnalyticsError as err:
                outcome = err.with_traceback(None)
            if self.report is not None:
                self.report(outcome)


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
    interrupts at once.

    The signal handler takes no lock: it runs in the main thread between any two
    bytecodes, also while that thread holds the lock inside ``Event.wait``, and a
    handler that took it (``Event.set``) would wait on itself forever. It sets a flag
    and releases ``_gate``, a plain lock the waiting thread holds; releasing never
    blocks. A caller's event cannot be woken that way (only ``set`` wakes it), so with
    one the wait looks at the flag every ``_SLICE`` seconds.
    """

    _SLICE = 0.2

    def __init__(self, event: threading.Event | None) -> None:
        self.caller_event = event
        self.signal_name: str | None = None
        self._signalled = False
        self._gate = threading.Lock()
        self._gate.acquire()

    @property
    def stopped(self) -> bool:
        return self._signalled or (self.caller_event is not None and self.caller_event.is_set())

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.stopped and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signal_name = signal.Signals(signum).name
        self._signalled = True
        with suppress(RuntimeError):  # already released by an earlier signal
            self._gate.release()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a stop; true once stopped."""
        deadline = time.monotonic() + timeout
        while not self.stopped:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if self.caller_event is None:
                self._gate.acquire(timeout=remaining)
            else:
                self.caller_event.wait(min(remaining, self._SLICE))
        return True


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

"""``ccanalytics collect``: snapshots of clusters appended to a history store.

One snapshot per run (for cron), or ``--every 5m [--count N]`` for a loop that:

- refuses up front (exit 2, nothing written) a schedule that would use more than
  ``--budget-share`` of any rate-limit window, learnt from the first response's
  ``RateLimit-Policy``, and says the shortest interval that fits;
- finishes a snapshot before it sleeps, and keeps going after a failed one (one line);
- stops cleanly on SIGTERM or Ctrl-C: the snapshot under way is finished and written
  (files appear whole or not at all), then it exits; a second Ctrl-C stops at once;
- prints one line per snapshot to stderr.

Exit status: 0 every snapshot complete; 1 a cluster or the store failed in some
snapshot; 2 bad usage or a schedule over budget.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from types import FrameType
from typing import TYPE_CHECKING, Any

from ccanalytics.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    Formatter,
    add_api_options,
    api_client,
    cluster_id,
    duration,
    fraction,
    positive_int,
)
from ccanalytics.cli._schedule import budget_refusal

if TYPE_CHECKING:
    from ccanalytics.history import CollectResult

__all__ = ["add_parser", "run"]


_DESCRIPTION = "\n\n".join(
    textwrap.fill(paragraph, 78)
    for paragraph in (
        "One snapshot per run (for cron), or a loop with --every. The loop refuses up front "
        "a schedule that would use more than --budget-share of any rate-limit window (learnt "
        "from the first response) and names the shortest interval that fits; it finishes each "
        "snapshot before sleeping, goes on after a failed one, and stops cleanly on SIGTERM "
        "or Ctrl-C. One line per snapshot goes to stderr.",
        "Exit status: 0 every snapshot complete; 1 a cluster or the store failed in some "
        "snapshot; 2 bad usage, or a schedule over budget (nothing written).",
    )
)


def add_parser(sub: Any) -> None:
    collect = sub.add_parser(
        "collect",
        help="append a snapshot of clusters to a history store (once, or every DURATION)",
        formatter_class=Formatter,
        description=_DESCRIPTION,
        epilog="Examples:\n"
        "  ccanalytics collect cl-a cl-b --store /data/ccstore            # from cron\n"
        "  ccanalytics collect cl-a --store ./store --every 5m --count 288 --sandbox",
    )
    collect.add_argument("cluster_ids", nargs="+", metavar="CLUSTER_ID", type=cluster_id)
    collect.add_argument("--store", required=True, metavar="DIR", help="the store's folder")
    collect.add_argument(
        "--every", type=duration, metavar="DURATION", help="repeat every DURATION (30s, 5m, 1h)"
    )
    collect.add_argument(
        "--count", type=positive_int, metavar="N", help="with --every: stop after N snapshots"
    )
    collect.add_argument(
        "--budget-share",
        type=fraction,
        default=0.5,
        metavar="FRACTION",
        help="share of each rate-limit window the loop may use (default: 0.5)",
    )
    add_api_options(collect)
    collect.set_defaults(func=run)


#: A service clock further than this from ours is not this machine's "now".
CLOCK_SKEW = timedelta(minutes=5)


def _clock_note(pods: Any) -> str:
    """When the service's ``Date`` is far from the local clock (a simulated sandbox's),
    say so: its rate-limit windows count that clock's time, not the wall clock's."""
    if "observed_at" not in pods or pods.empty:
        return ""
    service = pods["observed_at"].max()
    if abs(service.to_pydatetime() - datetime.now(UTC)) <= CLOCK_SKEW:
        return ""
    return (
        f" (the service's clock reads {service:%Y-%m-%d %H:%M} UTC, not now: its windows "
        "count that clock's time, as a simulated sandbox's do; with --speed they pass "
        "faster than real time)"
    )


def _line(index: int, count: int | None, result: CollectResult) -> str:
    when = result.snapshot_time or datetime.now(UTC)
    of = f"/{count}" if count else ""
    text = (
        f"{when:%Y-%m-%dT%H:%M:%SZ} snapshot {index}{of}: {len(result.clusters)} cluster(s), "
        f"{result.pod_rows} pod rows, {result.gpu_rows} GPU rows, {len(result.files)} files"
    )
    if result.errors:
        failed = "; ".join(
            f"{cid}: {' '.join(str(err).split())}" for cid, err in result.errors.items()
        )
        text += f"; FAILED {len(result.errors)}: {failed}"
    return text


def _say(text: str) -> None:
    print(f"ccanalytics collect: {text}", file=sys.stderr, flush=True)


class _Stop:
    """Set by SIGTERM or the first Ctrl-C; a second Ctrl-C interrupts at once."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal_name = ""

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.event.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signal_name = signal.Signals(signum).name
        self.event.set()


@contextmanager
def _stop_on_signals() -> Iterator[_Stop]:
    stop = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop  # signals reach only the main thread; nothing to install
        return
    previous = {s: signal.signal(s, stop.handle) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run(args: argparse.Namespace) -> int:
    if args.count is not None and args.every is None:
        _say("--count needs --every (one snapshot per run without it)")
        return EXIT_USAGE
    with api_client(args) as (client, _):
        if args.every is None:
            from ccanalytics.errors import StoreError
            from ccanalytics.history import collect

            try:
                result = collect(args.cluster_ids, args.store, client=client, errors="collect")
            except (OSError, StoreError) as err:  # the store failed: 1, like the API failing
                _say(f"cannot write the store: {' '.join(str(err).split())}")
                return EXIT_FAILURE
            _say(_line(1, None, result))
            return EXIT_FAILURE if result.errors else EXIT_OK
        return _loop(args, client)


def _loop(args: argparse.Namespace, client: Any) -> int:
    """Snapshots on a fixed tick until --count or a signal; see the module docstring."""
    from ccanalytics.errors import CCAnalyticsError
    from ccanalytics.history._collect import append_snapshot, take_snapshot

    every, count = args.every.total_seconds(), args.count
    judged = failed = False
    taken = 0
    start = time.monotonic()
    with _stop_on_signals() as stop:
        while count is None or taken < count:
            try:
                snapshot = take_snapshot(args.cluster_ids, client)
                if not judged and client.rate_limit is not None:
                    judged = True  # the first response that carried a policy
                    refusal = budget_refusal(
                        client.rate_limit.windows,
                        len(snapshot.cluster_ids),
                        every,
                        count,
                        args.budget_share,
                    )
                    if refusal is not None:
                        _say(f"refused: {refusal}{_clock_note(snapshot.pods)}")
                        return EXIT_USAGE
                result = append_snapshot(args.store, snapshot)
            except (CCAnalyticsError, OSError) as err:
                failed = True
                _say(f"snapshot {taken + 1} failed, going on: {' '.join(str(err).split())}")
            else:
                failed = failed or bool(result.errors)
                _say(_line(taken + 1, count, result))
            taken += 1
            if stop.event.is_set() or (count is not None and taken >= count):
                break
            # Fixed ticks: a late snapshot does not shift the schedule; missed ticks are skipped.
            ticks = math.ceil((time.monotonic() - start) / every)
            if stop.event.wait(max(0.0, start + max(ticks, taken) * every - time.monotonic())):
                break
        if stop.event.is_set():
            _say(f"stopped by {stop.signal_name} after {taken} snapshots")
    return EXIT_FAILURE if failed else EXIT_OK

"""``ccanalytics collect``: snapshots of clusters appended to a history store.

One snapshot per run (for cron), or ``--every 5m [--count N]`` for a loop that:

- refuses up front (exit 2, nothing written) a schedule that would use more than
  ``--budget-share`` of any rate-limit window, learnt from the first response's
  ``RateLimit-Policy``, and says the shortest interval that fits;
- finishes a snapshot before it sleeps, and keeps going after a failed one (one line);
- stops cleanly on SIGTERM or Ctrl-C: the snapshot under way is finished and written
  (files appear whole or not at all), then it exits; a second Ctrl-C stops at once;
- prints one line per snapshot to stderr;
- compacts each UTC day it wrote to once it writes a later day (one line;
  ``--no-compact`` opts out); a failed compaction is a line and exit 1, and the loop
  goes on.

A service ``Date`` more than 5 minutes from this machine's clock is not trusted: the
local clock times those snapshots and one ``warning:`` line says so;
``--trust-service-clock`` keeps the service's time (a simulated-clock sandbox).

Exit status: 0 every snapshot complete; 1 a cluster or the store failed in some
snapshot; 2 bad usage or a schedule over budget.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ccanalytics.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    Formatter,
    add_api_options,
    add_quiet_option,
    api_client,
    cluster_id,
    duration,
    fraction,
    positive_int,
)

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
    collect.add_argument(
        "--store", required=True, metavar="STORE", help="the store: a folder or s3://bucket/prefix"
    )
    collect.add_argument(
        "--every",
        type=duration,
        metavar="DURATION",
        help="repeat every DURATION (units s, m, h, d, w: 30s, 5m, 1h)",
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
    collect.add_argument(
        "--no-compact",
        dest="compact",
        action="store_false",
        help="with --every: leave closed days uncompacted (by default each UTC day the "
        "loop wrote to is compacted once it has written a later day)",
    )
    collect.add_argument(
        "--trust-service-clock",
        action="store_true",
        help="keep the service's Date even when it is more than 5 minutes from this "
        "machine's clock (a simulated-clock sandbox); by default the local clock times "
        "such snapshots, with one warning",
    )
    add_quiet_option(collect, "line per snapshot or compaction")
    add_api_options(collect)
    collect.set_defaults(func=run)


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


@contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """A ClockSkewWarning as one line of ours on stderr, not Python's two-line format."""
    from ccanalytics.errors import ClockSkewWarning

    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *rest: Any, **kw: Any) -> None:
        if issubclass(category, ClockSkewWarning):
            _say(f"warning: {' '.join(str(message).split())}")
        else:
            shown(message, category, *rest, **kw)

    with warnings.catch_warnings():
        warnings.simplefilter("always", ClockSkewWarning)  # the library warns once per run
        warnings.showwarning = show
        yield


def run(args: argparse.Namespace) -> int:
    if args.count is not None and args.every is None:
        _say("--count needs --every (one snapshot per run without it)")
        return EXIT_USAGE
    with api_client(args) as client, _warnings_as_lines():
        if args.every is None:
            from ccanalytics.errors import StoreError
            from ccanalytics.history import collect

            try:
                result = collect(
                    args.cluster_ids,
                    args.store,
                    client=client,
                    errors="collect",
                    trust_service_clock=args.trust_service_clock,
                )
            except (OSError, StoreError) as err:  # the store failed: 1, like the API failing
                _say(f"cannot write the store: {' '.join(str(err).split())}")
                return EXIT_FAILURE
            if result.errors or not args.quiet:  # --quiet: only what went wrong
                _say(_line(1, None, result))
            return EXIT_FAILURE if result.errors else EXIT_OK
        return _loop(args, client)


def _loop(args: argparse.Namespace, client: Any) -> int:
    """``collect_every`` with one line per snapshot; see the module docstring."""
    from ccanalytics.errors import ScheduleError
    from ccanalytics.history import CollectResult, CompactResult, collect_every

    count = args.count
    compaction_failed = False

    def compacted(outcome: object) -> None:
        nonlocal compaction_failed
        if isinstance(outcome, CompactResult):
            before, after = sum(outcome.files_before.values()), sum(outcome.files_after.values())
            if not args.quiet:
                _say(f"compacted {outcome.day}: {before} files into {after}")
        else:
            compaction_failed = True
            _say(f"compaction failed, going on: {' '.join(str(outcome).split())}")

    def say(index: int, outcome: object) -> None:
        if isinstance(outcome, CollectResult):
            if outcome.errors or not args.quiet:
                _say(_line(index, count, outcome))
        else:
            _say(f"snapshot {index} failed, going on: {' '.join(str(outcome).split())}")

    try:
        run = collect_every(
            args.cluster_ids,
            args.store,
            every=args.every,
            count=count,
            client=client,
            budget_share=args.budget_share,
            on_snapshot=say,
            trust_service_clock=args.trust_service_clock,
            compact_closed_days=args.compact,
            on_compact=compacted,
        )
    except ScheduleError as err:
        _say(f"refused: {err}")
        return EXIT_USAGE
    if run.signal_name is not None:
        _say(f"stopped by {run.signal_name} after {run.taken} snapshots")
    return EXIT_FAILURE if run.failed or compaction_failed else EXIT_OK

"""``ccanalytics check``: thresholds and budgets over the recent history in a store, for cron.

Exit status: 0 every threshold holds; 3 one is breached (one plain sentence per breach
on stdout, so cron mail carries it); 4 breached, but every breach is snoozed; 1 the store
cannot be read, holds no snapshot, the alert state cannot be saved, or ``--textfile``
cannot be written (one line; the alerts are still sent); 2 bad usage (a
wrong argument, a malformed policy file or webhook URL, or a rule whose clusters match
no cluster of the store, after the others ran). Thresholds come from flags (one
set, judged over the whole store) or from ``--policy FILE`` (rules per cluster or glob,
see :mod:`ccanalytics.history.alerts._policy`), or both. With ``--notify URL`` (or a rule's own
route) a Slack-compatible message is POSTed when an alert's state changes
(:mod:`ccanalytics.history.alerts._alerts` keeps the state, in ``STORE/check-state.json``).
This module parses and prints; :func:`ccanalytics.history.check` does the rest.
"""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ccanalytics.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    Formatter,
    UsageError,
    add_rule_options,
    duration,
    non_negative_float,
    non_negative_int,
    rule_params,
)

if TYPE_CHECKING:
    from ccanalytics.history import CheckRun

__all__ = ["EXIT_BREACHED", "EXIT_SNOOZED", "add_parser", "run"]

EXIT_BREACHED = 3
#: Breached, but every breach belongs to a snoozed rule: cron stays quiet, a script can tell.
EXIT_SNOOZED = 4


def add_parser(sub: Any) -> None:
    check = sub.add_parser(
        "check",
        help="judge budgets, idle cost and stragglers over recent history; exit 3 when breached",
        formatter_class=Formatter,
        description="Judge thresholds over the window that ends at the store's newest "
        "snapshot, from flags or a policy file. Exit 0: fine; 3: breached (one sentence per "
        "breach on stdout); 4: breached but every breach snoozed; 1: the store cannot be "
        "read, is empty, the alert state or the textfile cannot be saved, or a notification "
        "cannot be posted (the breaches still print: the alert reached no one), or anything "
        "else fails; 2: bad "
        "usage or a bad policy, also a rule whose clusters match no cluster of the store "
        "(after the other rules are judged and sent; may_match_nothing = true accepts it). "
        "A budget's warn_at warning is posted, but is not a breach "
        "(exit 0).",
        epilog="Examples (cron, every 10 minutes):\n"
        "  */10 * * * *  ccanalytics check --store /data/cc --window 1h "
        "--max-idle-cost 50 --max-stragglers 0\n"
        "  */10 * * * *  ccanalytics check --store /data/cc --policy budgets.toml "
        "--textfile /var/lib/node_exporter/ccanalytics.prom\n"
        "  ccanalytics check --store /data/cc --policy budgets.toml --snooze inference "
        "--for 4h --who alice --why 'load test'",
    )
    check.add_argument(
        "--store",
        required=True,
        metavar="STORE",
        help="the history store: a folder or s3://bucket/prefix",
    )
    check.add_argument(
        "--policy", metavar="FILE", help="a TOML policy: budgets and thresholds per cluster"
    )
    check.add_argument(
        "--window",
        type=duration,
        default=timedelta(hours=1),
        metavar="DURATION",
        help="how far back from the newest snapshot the flags judge (default: 1h)",
    )
    check.add_argument(
        "--max-idle-cost",
        type=non_negative_float,
        metavar="USD",
        help="breached when idle GPUs cost more than this in the window",
    )
    check.add_argument(
        "--max-stragglers",
        type=non_negative_int,
        metavar="N",
        help="breached when more than N ranks straggled in at least --chronic-share of the "
        "snapshots",
    )
    check.add_argument(
        "--notify",
        metavar="URL",
        help="POST a Slack-compatible message here when a state changes (rules without a route)",
    )
    check.add_argument(
        "--textfile",
        metavar="PATH",
        help="with --policy: write the judged figures for node_exporter's textfile collector",
    )
    check.add_argument("--snooze", metavar="RULE", help="silence a policy rule (with --for)")
    check.add_argument(
        "--for", dest="snooze_for", type=duration, metavar="DURATION", help="how long to snooze"
    )
    check.add_argument("--who", metavar="NAME", help="with --snooze: who snoozed it")
    check.add_argument("--why", metavar="TEXT", help="with --snooze: why")
    check.add_argument(
        "-v", "--verbose", action="store_true", help="also print every figure judged"
    )
    add_rule_options(check)
    check.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ccanalytics.errors import StoreError

    _check_usage(args)
    try:
        if args.snooze is not None:
            return _snooze(args)
        return _judge(args)
    except StoreError as err:
        _fail(err)
        return EXIT_FAILURE


def _check_usage(args: argparse.Namespace) -> None:
    """The snooze flags' combinations (check() judges the rest, and the URL)."""
    if args.snooze is not None:
        if args.policy is None or args.snooze_for is None:
            raise UsageError("--snooze RULE needs --policy FILE and --for DURATION")
        return
    if args.snooze_for is not None or args.who is not None or args.why is not None:
        raise UsageError("--for, --who and --why go with --snooze")
    # The thresholds, the textfile and --notify are check()'s to refuse (ArgumentsError,
    # spelled with these flags by main).


def _snooze(args: argparse.Namespace) -> int:
    from ccanalytics.history import load_policy, snooze

    rule = load_policy(args.policy).rule(args.snooze).name
    entry = snooze(args.store, rule, duration=args.snooze_for, who=args.who, why=args.why)
    print(f"Rule {rule!r} {entry.describe()}.")
    return EXIT_OK


def _judge(args: argparse.Namespace) -> int:
    from ccanalytics.history import check

    # Bad arguments are an ArgumentsError, a bad policy a PolicyError: bad usage, 2 (main).
    outcome = check(
        args.store,
        window=args.window,
        max_idle_cost=args.max_idle_cost,
        max_stragglers=args.max_stragglers,
        policy=args.policy,
        notify=args.notify,
        textfile=args.textfile,
        params=rule_params(args),
    )
    _print_outcome(outcome, verbose=args.verbose)
    # A failed POST is the network failing (1), whatever was judged: a 3 would tell cron
    # the alert went out when it reached no one.
    if outcome.textfile_error is not None or (outcome.notified and outcome.notified.failed):
        return EXIT_FAILURE
    if outcome.policy is not None and outcome.policy.unmatched:
        return EXIT_USAGE  # a rule that checks nothing is a bad policy, after the others ran
    if not outcome.breached:
        return EXIT_OK
    return EXIT_SNOOZED if outcome.all_snoozed else EXIT_BREACHED


def _print_outcome(outcome: CheckRun, *, verbose: bool) -> None:
    """Breaches on stdout (cron mails them), warnings and failures on stderr."""
    if (result := outcome.thresholds) is not None:
        _print(result.breaches)
        if verbose or result.breached:
            print(result.summary(), file=sys.stderr if result.breached else sys.stdout)
    if (report := outcome.policy) is not None:
        for unmatched in report.unmatched:
            print(f"ccanalytics check: {unmatched}", file=sys.stderr)
        _print(report.lines(every=verbose))
    if outcome.textfile_error is not None:  # a failure, not bad usage: 1, after the alerts
        _fail(outcome.textfile_error)
    if outcome.notified is not None:
        for _, reason in outcome.notified.failed:
            print(f"ccanalytics check: notification failed: {reason}", file=sys.stderr)


def _fail(err: Exception) -> None:
    print(f"ccanalytics check: {' '.join(str(err).split())}", file=sys.stderr)


def _print(lines: list[str]) -> None:
    for line in lines:
        print(line)

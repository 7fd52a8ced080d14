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
    period_limit,
    rule_params,
    share_of_one,
)
from ccanalytics.cli._exits import EXIT_BREACHED, EXIT_SNOOZED

if TYPE_CHECKING:
    from ccanalytics.history import CheckRun

__all__ = ["EXIT_BREACHED", "EXIT_SNOOZED", "add_parser", "run"]


def add_parser(sub: Any) -> None:
    check = sub.add_parser(
        "check",
        help="judge budgets, idle cost and stragglers over recent history; exit 3 when breached",
        formatter_class=Formatter,
        description="Judge thresholds over the window that ends at the store's newest "
        "snapshot, from flags or a policy file. A budget's warn_at warning is posted, but "
        "is not a breach (exit 0).",
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
        help="how far back from the newest snapshot the flags judge "
        "(units s, m, h, d, w; default: 1h)",
    )
    _add_limit_options(check)
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
    check.add_argument(
        "--textfile-label",
        dest="textfile_labels",
        type=_label,
        action="append",
        metavar="NAME=VALUE",
        help="a label on every sample of the textfile, naming its source; repeatable "
        "(default: store=the store's folder name, so two stores' files never collide)",
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


#: The argparse type and metavar of a limit, by the unit its measure is formatted in.
_LIMIT_TYPES: dict[str, tuple[Any, str]] = {
    "usd": (non_negative_float, "USD"),
    "count": (non_negative_int, "N"),
    "share": (share_of_one, "SHARE"),
    "hours": (non_negative_float, "HOURS"),
    "z": (non_negative_float, "Z"),
}


def _add_limit_options(parser: argparse.ArgumentParser) -> None:
    """One ``--max-...`` flag per policy key of the registry, judged as a policy rule over
    every cluster together (``--max-spend day=400``: a periodic one, per UTC period)."""
    from ccanalytics.measures import MEASURES

    group = parser.add_argument_group("limits (each a policy key, judged over --window)")
    for m in MEASURES:
        if not m.policy_key:
            continue
        flag = "--" + m.policy_key.replace("_", "-")
        if m.periodic:
            group.add_argument(
                flag,
                type=period_limit,
                action="append",
                metavar="PERIOD=USD",
                help=f"breached when {m.name} ({_escaped(m.meaning)}) is above USD in the UTC PERIOD "
                "(day, week or month; repeatable)",
            )
            continue
        kind, metavar = _LIMIT_TYPES[m.fmt]
        group.add_argument(
            flag,
            type=kind,
            metavar=metavar,
            help=f"breached when {m.name} ({_escaped(m.meaning)}) is above this",
        )


def _escaped(text: str) -> str:
    """``text`` as argparse help, which reads ``%`` as a format."""
    return text.replace("%", "%%")


def _limits(args: argparse.Namespace) -> dict[str, Any]:
    """The limits given, by policy key (a periodic one as ``{period: USD}``)."""
    from ccanalytics.measures import policy_keys

    limits: dict[str, Any] = {}
    for key in policy_keys():
        value = getattr(args, key)
        if value is not None:
            limits[key] = dict(value) if isinstance(value, list) else value
    return limits


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


def _label(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` (the name's rules are the library's, ``source_labels``)."""
    name, equals, value = text.partition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, such as store=prod, not {text!r}")
    return name, value


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
        limits=_limits(args),
        policy=args.policy,
        notify=args.notify,
        textfile=args.textfile,
        textfile_labels=dict(args.textfile_labels or ()),
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

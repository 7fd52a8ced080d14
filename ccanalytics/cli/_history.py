"""``ccanalytics history QUERY``: each of History's queries as a command, as sqlite-utils does.

One subcommand per public :class:`~ccanalytics.history.History` method that answers with a
frame (``idle_cost`` is ``history idle-cost``), each parameter given by one option.
:data:`QUERIES` says which option gives each parameter of each method; it is spelled here,
so that ``--help`` imports no pandas, and ``tests/cli/test_history_command.py`` checks it
against History's signatures: a new query, or a new parameter, fails there until it has
its command. Only the options given are passed, so every default is History's own.

Exit statuses: ``_exits.EXIT_STATUSES["history"]``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from ccanalytics.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    FORMATS,
    Formatter,
    UsageError,
    add_output_options,
    add_rule_options,
    cluster_id,
    duration,
    non_negative_number,
    output_format,
    positive_int,
    rule_params,
)

__all__ = ["BY_WORDS", "DIMENSION_WORDS", "QUERIES", "Query", "add_parser", "run"]

# How a parameter is given. WINDOW: --window DURATION or --since TIME (since=); UNTIL:
# --until TIME; CLUSTERS: CLUSTER_ID ... (cluster_ids=); RULES: the rule thresholds
# (--idle-threshold, --straggler-z, --min-gap, --chronic-share) as params=; COVERED: a
# threshold the RULES options give through params= (the method reads it from there);
# DEPRECATED: an old spelling, not offered; the others are one option each.
WINDOW, UNTIL, CLUSTERS, RULES, COVERED, DEPRECATED = (
    "window",
    "until",
    "clusters",
    "rules",
    "covered",
    "deprecated",
)
BY, MAX_GAP, FREQ, AT, QUERY, NOT_GIVEN = "by", "max_gap", "freq", "at", "query", "not given"
GPU_TYPES, HEADROOM, LIMIT, WEEKS, Z = "gpu_types", "headroom", "limit", "weeks", "z"
TEAMS = "teams"
# IDLE_RULES: --idle-for and --idle-threshold as rules= (ccanalytics.cli._backtest);
# REGRET: --regret, there too.
IDLE_RULES, REGRET = "idle rules", "regret"
# NAMES: MEASURE ... (names=); BY_MANY: --by given once per dimension.
NAMES, BY_MANY = "names", "by many"
#: The dimensions' names (ccanalytics.measures._dimensions.DIMENSIONS, which the command
#: does not import to start: the measures load pandas); tests/measures/test_dimensions.py
#: holds the two equal.
DIMENSION_WORDS = ("cluster", "team", "gpu_type", "pod", "rank", "day", "hour")


@dataclass(frozen=True)
class Query:
    """A History method as a command: its one-line help, how each parameter is given
    (in the signature's order), and ``--by``'s choices (the method's ``Literal``)."""

    help: str
    given: dict[str, str]
    by: tuple[str, ...] = ()


_SPAN = {"since": WINDOW, "until": UNTIL}

#: Every History query and how the command line gives each of its parameters. A query
#: added to History (``showback``, say) fails tests/cli/test_history_command.py until it
#: has its entry here.
QUERIES: dict[str, Query] = {
    "pods": Query("every snapshot's pod rows in the window", {**_SPAN, "cluster_ids": CLUSTERS}),
    "gpus": Query("every snapshot's GPU rows in the window", {**_SPAN, "cluster_ids": CLUSTERS}),
    "snapshots": Query(
        "one row per cluster per snapshot: its listing's outcome",
        {**_SPAN, "cluster_ids": CLUSTERS},
    ),
    "coverage": Query(
        "per cluster: snapshots taken, failed and missing, and why the last one failed", _SPAN
    ),
    "idle_cost": Query(
        "spend, idle spend and unused-GPU spend in the window",
        {
            **_SPAN,
            "by": BY,
            "idle_threshold": COVERED,
            "max_gap": MAX_GAP,
            "params": RULES,
            "threshold": DEPRECATED,
        },
        by=("cluster", "day", "pod", "none"),
    ),
    "utilization": Query(
        "GPU utilization per --freq bucket",
        {**_SPAN, "freq": FREQ, "by": BY, "max_gap": MAX_GAP},
        by=("cluster", "rank", "pod"),
    ),
    "stragglers": Query(
        "ranks that straggled in at least --chronic-share of their snapshots",
        {
            **_SPAN,
            "min_share": COVERED,  # params.chronic_share (--chronic-share) is its default
            "idle_threshold": COVERED,
            "z": COVERED,
            "min_gap": COVERED,
            "params": RULES,
        },
    ),
    "straggler_flags": Query(
        "every judgement of the straggler rule: one row per snapshot and rank",
        {**_SPAN, "params": RULES},
    ),
    "pod_lifetimes": Query(
        "per pod: first and last seen, statuses, hours, cost and idle share",
        {
            **_SPAN,
            "idle_threshold": COVERED,
            "max_gap": MAX_GAP,
            "params": RULES,
            "threshold": DEPRECATED,
        },
    ),
    "spend": Query(
        "spend so far this UTC day, ISO week and month, and the month's projection",
        {"at": AT, "by": BY, "max_gap": MAX_GAP, "limit": LIMIT},
        by=("cluster", "none"),
    ),
    "spend_anomalies": Query(
        "each cluster's latest hour of spend against the same hour of past weeks",
        {"at": AT, "weeks": WEEKS, "z": Z},
    ),
    "waste": Query(
        "what each waste class cost: idle and empty, idle with a model loaded, stragglers, "
        "idle GPUs in busy pods, low compute",
        {**_SPAN, "by": BY, "max_gap": MAX_GAP, "params": RULES},
        by=("cluster", "pod", "none"),
    ),
    "rightsizing": Query(
        "right-sizing hints (fewer GPUs, a cheaper GPU type) with their monthly saving",
        {
            **_SPAN,
            "gpu_types": GPU_TYPES,
            "headroom": HEADROOM,
            "max_gap": MAX_GAP,
            "params": RULES,
        },
    ),
    "showback": Query(
        "what each pod cost per UTC hour or day, and its team (FOCUS: export showback)",
        {
            **_SPAN,
            "by": BY,
            "teams": TEAMS,
            "idle_threshold": COVERED,
            "max_gap": MAX_GAP,
            "params": RULES,
        },
        by=("hour", "day"),
    ),
    "measures": Query(
        "any of the registry's sums and shares, split by any dimensions (--by, repeated)",
        {
            NAMES: NAMES,
            **_SPAN,
            "by": BY_MANY,
            "params": RULES,
            "max_gap": MAX_GAP,
            "teams": TEAMS,
        },
        by=(*DIMENSION_WORDS, "none"),
    ),
    "backtest": Query(
        "what idle rules would have saved, and the work their false stops would have cut",
        {"rules": IDLE_RULES, **_SPAN, "by": BY, "regret": REGRET, "max_gap": MAX_GAP},
        by=("cluster", "pod", "none"),
    ),
    "sql": Query(
        "any SQL over the store's views (pods, gpus, snapshots)",
        {"query": QUERY, "params": NOT_GIVEN},  # $name parameters: write values in the query
    ),
}

#: ``--by`` words that are not the method's own value: ``none`` is ``by=None``.
BY_WORDS: dict[str, Any] = {"none": None}

_EPILOG = """\
Examples:
  ccanalytics history idle-cost --store /data/cc --window 7d --by day
  ccanalytics history stragglers --store s3://bucket/cc --window 24h --format csv
  ccanalytics history spend --store /data/cc --format json -o spend.json"""


def add_parser(sub: Any) -> None:
    history = sub.add_parser(
        "history",
        help="answer a question over a history store: idle cost, stragglers, spend, ...",
        formatter_class=Formatter,
        description="Run one of History's queries over a store (a folder or "
        "s3://bucket/prefix) and write its answer as a table, CSV, JSON or Parquet.",
        epilog=_EPILOG,
    )
    queries = history.add_subparsers(dest="query", metavar="QUERY", required=True)
    for method, query in QUERIES.items():
        command = queries.add_parser(
            method.replace("_", "-"),
            help=query.help,
            description=f"History.{method}: {query.help}.",
            formatter_class=Formatter,
            epilog=_example(method, query),
        )
        _add_arguments(command, query)
        command.set_defaults(func=run, method=method)


def _example(method: str, query: Query) -> str:
    kinds = set(query.given.values())
    words = ["ccanalytics history", method.replace("_", "-")]
    words += ['"SELECT cluster_id, count(*) AS n FROM pods GROUP BY ALL"'] if QUERY in kinds else []
    words += ["--store /data/cc"]
    words += ["--window 7d"] if WINDOW in kinds else []
    words += ["--by day"] if "day" in query.by else []
    words += ["--idle-for 30m,2h --idle-threshold 1,10"] if IDLE_RULES in kinds else []
    words += ["--format csv"]
    return "Example:\n  " + " ".join(words)


def _add_arguments(parser: argparse.ArgumentParser, query: Query) -> None:
    kinds = set(query.given.values())
    if QUERY in kinds:
        parser.add_argument("sql_query", metavar="QUERY", help="the SQL to run")
    if NAMES in kinds:
        parser.add_argument(
            "names", nargs="+", metavar="MEASURE", help="measure names (docs: the measures page)"
        )
    if CLUSTERS in kinds:
        parser.add_argument(
            "cluster_ids",
            nargs="*",
            metavar="CLUSTER_ID",
            type=cluster_id,
            help="only these clusters (default: every one)",
        )
    parser.add_argument(
        "--store", required=True, metavar="STORE", help="the store: a folder or s3://bucket/prefix"
    )
    if WINDOW in kinds:
        span = parser.add_mutually_exclusive_group()
        span.add_argument(
            "--window",
            type=duration,
            metavar="DURATION",
            help="how far back from the newest snapshot (units s, m, h, d, w: 24h, 7d, 1w, "
            "1h30m; default: all)",
        )
        span.add_argument("--since", metavar="TIME", help="from TIME (ISO 8601, UTC if naive)")
    if UNTIL in kinds:
        parser.add_argument("--until", metavar="TIME", help="up to TIME, excluded")
    if AT in kinds:
        parser.add_argument(
            "--at", metavar="TIME", help="the instant to judge (default: the newest snapshot)"
        )
    if BY in kinds:
        parser.add_argument(
            "--by", choices=query.by, help="one row per: %(choices)s (none: the whole window)"
        )
    if BY_MANY in kinds:
        parser.add_argument(
            "--by",
            choices=query.by,
            action="append",
            help="split by: %(choices)s, once per dimension (default: cluster; none: no split)",
        )
    if FREQ in kinds:
        parser.add_argument(
            "--freq", type=duration, metavar="DURATION", help="bucket length (default: 1h)"
        )
    if MAX_GAP in kinds:
        parser.add_argument(
            "--max-gap",
            type=duration,
            metavar="DURATION",
            help="a longer gap between snapshots is unobserved time",
        )
    _add_value_options(parser, kinds)
    if IDLE_RULES in kinds:
        from ccanalytics.cli import _backtest

        _backtest.add_arguments(parser)
    add_output_options(parser, FORMATS)
    parser.add_argument("--force", action="store_true", help="replace --output FILE if it exists")
    if RULES in kinds:
        add_rule_options(parser)


def _add_value_options(parser: argparse.ArgumentParser, kinds: set[str]) -> None:
    """The options that each give one value of a query's own (files, figures)."""
    from ccanalytics.measures.rules import (
        RIGHTSIZING_HEADROOM,
        SPEND_ANOMALY_Z,
        SPEND_BASELINE_WEEKS,
    )

    if GPU_TYPES in kinds:
        parser.add_argument(
            "--gpu-types",
            metavar="FILE",
            help="a TOML file of GPU memory per type, extending the packaged table",
        )
    if TEAMS in kinds:
        parser.add_argument(
            "--teams",
            metavar="FILE",
            help="a TOML team mapping (cluster and pod-name globs; default: unallocated)",
        )
    if HEADROOM in kinds:
        parser.add_argument(
            "--headroom",
            type=non_negative_number,
            metavar="SHARE",
            help=f"memory kept free above the observed peak (default: {RIGHTSIZING_HEADROOM:g})",
        )
    if LIMIT in kinds:
        parser.add_argument(
            "--limit",
            type=_limit,
            action="append",
            metavar="USD|PERIOD=USD",
            help="a budget: breach_at says when the projection reaches it (one figure "
            "for every period, or per period: --limit month=4000 --limit day=150)",
        )
    if WEEKS in kinds:
        parser.add_argument(
            "--weeks",
            type=positive_int,
            metavar="N",
            help=f"weeks of baseline (default: {SPEND_BASELINE_WEEKS})",
        )
    if Z in kinds:
        parser.add_argument(
            "--z",
            type=non_negative_number,
            metavar="Z",
            help=f"an hour is unusual above this robust z (default: {SPEND_ANOMALY_Z:g})",
        )


def _arguments(args: argparse.Namespace, query: Query) -> tuple[list[Any], dict[str, Any]]:
    """The method's arguments: each parameter the options gave, and no other."""
    kinds = {kind: name for name, kind in query.given.items()}
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    if QUERY in kinds:
        positional.append(args.sql_query)
    if NAMES in kinds:
        positional.append(args.names)
    if CLUSTERS in kinds and args.cluster_ids:
        keywords[kinds[CLUSTERS]] = args.cluster_ids
    if WINDOW in kinds and (args.window is not None or args.since is not None):
        keywords[kinds[WINDOW]] = args.window if args.window is not None else args.since
    for kind, dest in (
        (UNTIL, "until"),
        (AT, "at"),
        (FREQ, "freq"),
        (MAX_GAP, "max_gap"),
        (GPU_TYPES, "gpu_types"),
        (TEAMS, "teams"),
        (HEADROOM, "headroom"),
        (WEEKS, "weeks"),
        (Z, "z"),
    ):
        if kind in kinds and getattr(args, dest) is not None:
            keywords[kinds[kind]] = getattr(args, dest)
    if BY in kinds and args.by is not None:
        keywords[kinds[BY]] = BY_WORDS.get(args.by, args.by)
    if BY_MANY in kinds and args.by is not None:
        keywords[kinds[BY_MANY]] = None if args.by == ["none"] else list(args.by)
    if LIMIT in kinds and args.limit is not None:
        keywords[kinds[LIMIT]] = _limits(args.limit)
    if RULES in kinds:
        keywords[kinds[RULES]] = rule_params(args)
    if IDLE_RULES in kinds:
        from ccanalytics.cli import _backtest

        keywords |= _backtest.keywords(args)
    return positional, keywords


_PERIODS = ("day", "week", "month")


def _limit(text: str) -> tuple[str | None, float]:
    """``--limit``: ``4000`` (every period) or ``month=4000``."""
    period, _, usd = text.rpartition("=")
    if period and period not in _PERIODS:
        raise argparse.ArgumentTypeError(
            f"expected USD or PERIOD=USD with a period of {', '.join(_PERIODS)}, not {text}"
        )
    return (period or None, non_negative_number(usd))


def _limits(given: list[tuple[str | None, float]]) -> float | dict[str, float]:
    """One figure for every period, or one per period named: never both, never twice."""
    periods = [period for period, _ in given]
    if len(set(periods)) < len(periods):
        raise UsageError("--limit: given twice for the same period")
    if None in periods and len(given) > 1:
        raise UsageError("--limit: give one USD figure, or PERIOD=USD per period, not both")
    if periods == [None]:
        return given[0][1]
    return {str(period): usd for period, usd in given}


def run(args: argparse.Namespace) -> int:
    import sys

    import duckdb

    from ccanalytics.cli._output import write_frame
    from ccanalytics.errors import StoreError
    from ccanalytics.history import History

    fmt = output_format(args.format, args.output)  # before the store opens: fail fast
    if fmt == "parquet" and args.output in (None, "-"):
        raise UsageError("--format parquet needs --output FILE (it is binary)")
    if not args.force and args.output not in (None, "-"):
        from pathlib import Path

        if Path(args.output).exists():
            raise UsageError(f"{args.output} exists: add --force to replace it")
    positional, keywords = _arguments(args, QUERIES[args.method])
    try:
        with History(args.store) as history:
            frame = getattr(history, args.method)(*positional, **keywords)
    except StoreError as err:  # the store failed, as the API failing: 1
        print(f"ccanalytics history: {' '.join(str(err).split())}", file=sys.stderr)
        return EXIT_FAILURE
    except duckdb.Error as err:  # ``sql``'s own query is wrong: bad usage
        raise UsageError(f"the query failed: {err}") from None
    try:
        write_frame(frame, fmt, args.output, replace=args.force)
    except FileExistsError:  # created since it was checked: still never replaced
        raise UsageError(f"{args.output} exists: add --force to replace it") from None
    return EXIT_OK

"""``ccanalytics check``: thresholds over the recent history in a store, for cron and CI.

Exit status: 0 every threshold holds, 3 one is breached (one plain sentence per breach
on stdout, so cron mail carries it), 1 the store cannot be read or holds nothing,
2 bad usage. With ``--notify URL`` it POSTs a Slack-compatible ``{"text": ...}``
message, but only when the state changes from fine to breached or back
(edge-triggered): the last state is kept in ``STORE/check-state.json``, one entry per
set of thresholds, written atomically (temporary file, then rename). A failed POST
leaves the saved state as it was, so the next run tries again.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from ccanalytics._files import write_atomic
from ccanalytics.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    Formatter,
    duration,
    non_negative_float,
    non_negative_int,
)

__all__ = ["EXIT_BREACHED", "STATE_FILE", "add_parser", "run"]

EXIT_BREACHED = 3
#: The file in the store's folder that remembers each check's last state.
STATE_FILE = "check-state.json"
#: Seconds to wait for the notification endpoint.
NOTIFY_TIMEOUT = 10.0


def add_parser(sub: Any) -> None:
    check = sub.add_parser(
        "check",
        help="judge idle cost and stragglers over recent history; exit 3 when breached",
        formatter_class=Formatter,
        description="Judge thresholds over the window that ends at the store's newest "
        "snapshot. Exit 0: fine; 3: breached (one sentence per breach on stdout); "
        "1: the store cannot be read or is empty; 2: bad usage.",
        epilog="Example (cron, every 10 minutes):\n"
        "  */10 * * * *  ccanalytics check --store /data/cc --window 1h "
        "--max-idle-cost 50 --max-stragglers 0",
    )
    check.add_argument("--store", required=True, metavar="DIR", help="the history store")
    check.add_argument(
        "--window",
        type=duration,
        default=timedelta(hours=1),
        metavar="DURATION",
        help="how far back from the newest snapshot to judge (default: 1h)",
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
        help="breached when more than N ranks straggled in at least half of the snapshots",
    )
    check.add_argument(
        "--notify",
        metavar="URL",
        help="POST a Slack-compatible JSON message here when the state changes",
    )
    check.add_argument(
        "-v", "--verbose", action="store_true", help="also print a summary when all is fine"
    )
    check.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ccanalytics.errors import StoreError
    from ccanalytics.history._check import check_store

    if args.max_idle_cost is None and args.max_stragglers is None:
        raise ValueError("give at least one threshold: --max-idle-cost or --max-stragglers")
    if args.notify is not None and not args.notify.startswith(("http://", "https://")):
        raise ValueError("--notify takes an http:// or https:// URL")  # not echoed: a secret
    try:
        result = check_store(
            args.store,
            window=args.window,
            max_idle_cost=args.max_idle_cost,
            max_stragglers=args.max_stragglers,
        )
    except StoreError as err:
        print(f"ccanalytics check: {' '.join(str(err).split())}", file=sys.stderr)
        return EXIT_FAILURE
    for sentence in result.breaches:
        print(sentence)
    if args.verbose or result.breached:
        print(result.summary(), file=sys.stderr if result.breached else sys.stdout)
    if args.notify is not None:
        _notify_on_change(args, result)
    return EXIT_BREACHED if result.breached else EXIT_OK


def _check_key(args: argparse.Namespace) -> str:
    """Which check this is: its window and thresholds (each set keeps its own state)."""
    return (
        f"window={args.window.total_seconds():g}s "
        f"max-idle-cost={args.max_idle_cost} max-stragglers={args.max_stragglers}"
    )


def _notify_on_change(args: argparse.Namespace, result: Any) -> None:
    """POST when this check's state differs from the saved one; then save the new state."""
    path = Path(args.store) / STATE_FILE
    states = _read_states(path)
    key = _check_key(args)
    state = "breached" if result.breached else "fine"
    previous = states.get(key, {}).get("state", "fine")  # never run: nothing to recover from
    if state == previous:
        return
    if result.breached:
        text = "ccanalytics check: breached. " + " ".join(result.breaches)
    else:
        text = "ccanalytics check: fine again. " + result.summary()
    if not _post(args.notify, text):
        return  # keep the old state: the next run notifies again
    states[key] = {"state": state, "since": result.end.isoformat(), "breaches": result.breaches}
    _write_atomically(path, states)


def _read_states(path: Path) -> dict[str, Any]:
    try:
        states = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        print(f"ccanalytics check: ignoring unreadable {path}: {err}", file=sys.stderr)
        return {}
    return states if isinstance(states, dict) else {}


def _write_atomically(path: Path, states: dict[str, Any]) -> None:
    """Write ``states`` to ``path`` so a reader sees the old file or the new, never half."""
    text = json.dumps(states, indent=2, sort_keys=True)
    write_atomic(path, lambda sink: sink.write(text.encode("utf-8")))


def _post(url: str, text: str) -> bool:
    """POST ``{"text": text}`` to ``url``; False (and a line on stderr) when it fails."""
    import httpx

    try:
        response = httpx.post(url, json={"text": text}, timeout=NOTIFY_TIMEOUT)
        response.raise_for_status()
    except httpx.HTTPError as err:
        # The URL of a chat webhook is itself a secret: name the failure, not the URL.
        status = getattr(getattr(err, "response", None), "status_code", None)
        reason = f"HTTP {status}" if status else type(err).__name__
        print(f"ccanalytics check: notification failed: {reason}", file=sys.stderr)
        return False
    return True

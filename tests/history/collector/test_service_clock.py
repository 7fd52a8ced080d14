"""Time from the future: a ``Date`` far from the local clock is not trusted.

By default ``collect`` and ``collect_every`` time such a listing by the local clock and
warn once per run (:class:`ClockSkewWarning`); ``trust_service_clock=True`` keeps the
service's time (what the simulated-clock sandbox, whose ``Date`` is its own time, needs).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ccanalytics.errors import ClockSkewWarning
from ccanalytics.history import History, collect, collect_every
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

FUTURE = datetime(2099, 6, 1, tzinfo=UTC)


@contextmanager
def sandbox_at(start: datetime) -> Iterator[Any]:
    """A client of a simulated-clock sandbox whose ``Date`` reads ``start``."""
    with Sandbox(SandboxApp(clock=SimulatedClock(start))) as sb, sb.client(EXEMPT_KEY) as client:
        yield client


def _near_now(when: object) -> bool:
    assert isinstance(when, datetime)
    return abs(when - datetime.now(UTC)) < timedelta(minutes=1)


def test_a_date_in_2099_is_replaced_by_the_local_clock_with_one_warning(tmp_path: Path) -> None:
    with sandbox_at(FUTURE) as client, pytest.warns(ClockSkewWarning, match="2099") as caught:
        result = collect(["cl-infer-prod", "cl-llama70b-train"], tmp_path, client=client)
    assert len(caught) == 1
    assert "trust_service_clock" in str(caught[0].message)
    assert all(_near_now(when) for when in result.observed_at.values())
    with History(tmp_path) as h:
        assert _near_now(h.pods()["observed_at"].max().to_pydatetime())
        assert _near_now(h.gpus()["observed_at"].max().to_pydatetime())
        assert _near_now(h.snapshots()["observed_at"].max().to_pydatetime())


def test_trust_service_clock_keeps_the_service_time_silently(tmp_path: Path) -> None:
    with sandbox_at(FUTURE) as client, warnings.catch_warnings():
        warnings.simplefilter("error", ClockSkewWarning)
        result = collect(["cl-infer-prod"], tmp_path, client=client, trust_service_clock=True)
    assert result.observed_at["cl-infer-prod"].year == 2099


def test_collect_every_warns_once_per_run(tmp_path: Path) -> None:
    with sandbox_at(FUTURE) as client, pytest.warns(ClockSkewWarning) as caught:
        run = collect_every(
            ["cl-infer-prod"],
            tmp_path,
            every="0.05s",
            count=3,
            client=client,
            stop_on_signals=False,
        )
    assert run.taken == 3 and run.failed == 0
    assert len([w for w in caught if issubclass(w.category, ClockSkewWarning)]) == 1
    with History(tmp_path) as h:
        assert _near_now(h.pods()["observed_at"].max().to_pydatetime())


def test_a_date_within_the_bound_is_the_observation_time(tmp_path: Path) -> None:
    near = datetime.now(UTC) - timedelta(minutes=2)  # inside the 5-minute bound
    with sandbox_at(near) as client, warnings.catch_warnings():
        warnings.simplefilter("error", ClockSkewWarning)
        result = collect(["cl-infer-prod"], tmp_path, client=client)
    assert abs(result.observed_at["cl-infer-prod"] - near) < timedelta(seconds=5)

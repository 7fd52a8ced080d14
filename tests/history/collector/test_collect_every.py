"""The scheduled collector as a library: no CLI involved.

``collect_every`` takes snapshots on fixed ticks, refuses up front a schedule over the
rate-limit budget (:class:`ScheduleError`, nothing written), goes on after a failed
snapshot, reports each one to a callback, and stops cleanly when asked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from ccanalytics import CCAnalyticsError, NotFoundError
from ccanalytics.errors import ScheduleError
from ccanalytics.history import CollectResult, History, collect_every, verify


def test_it_takes_its_count_and_reports_each_snapshot(make_sandbox: Any, tmp_path: Path) -> None:
    sb = make_sandbox(rate_limits={"day": (50_000, 86_400.0)})
    seen: list[tuple[int, Any]] = []
    with sb.client() as client:
        run = collect_every(
            ["cl-infer-prod", "cl-bringup"],
            tmp_path,
            every=timedelta(seconds=0.1),
            count=3,
            client=client,
            on_snapshot=lambda i, outcome: seen.append((i, outcome)),
        )
    assert (run.taken, run.failed, run.stopped) == (3, 0, False)
    assert [i for i, _ in seen] == [1, 2, 3]
    assert all(isinstance(o, CollectResult) for _, o in seen)
    per_snapshot = sum(len(sb.app.data.clusters[c]) for c in ("cl-infer-prod", "cl-bringup"))
    with History(tmp_path) as h:
        assert len(h.pods()) == 3 * per_snapshot


def test_a_schedule_over_budget_is_a_schedule_error_and_writes_nothing(
    make_sandbox: Any, tmp_path: Path
) -> None:
    sb = make_sandbox(rate_limits={"day": (100, 86_400.0)})
    with sb.client() as client, pytest.raises(ScheduleError) as caught:
        collect_every(["cl-infer-prod"], tmp_path / "s", every="1s", client=client)
    assert isinstance(caught.value, CCAnalyticsError) and isinstance(caught.value, ValueError)
    assert "the shortest interval that fits is" in str(caught.value)
    assert not list((tmp_path / "s").rglob("*.parquet"))


def test_a_failed_cluster_counts_and_the_loop_goes_on(make_sandbox: Any, tmp_path: Path) -> None:
    sb = make_sandbox()
    outcomes: list[Any] = []
    with sb.client() as client:
        run = collect_every(
            ["cl-infer-prod", "cl-nope"],
            tmp_path,
            every=timedelta(seconds=0.05),
            count=2,
            client=client,
            on_snapshot=lambda i, outcome: outcomes.append(outcome),
        )
    assert (run.taken, run.failed) == (2, 2)
    assert all(isinstance(o.errors["cl-nope"], NotFoundError) for o in outcomes)


def test_a_stop_event_ends_the_loop_after_the_snapshot_under_way(
    make_sandbox: Any, tmp_path: Path
) -> None:
    sb = make_sandbox()
    stop = threading.Event()

    def first_then_stop(index: int, outcome: Any) -> None:
        stop.set()

    with sb.client() as client:
        run = collect_every(
            ["cl-infer-prod"],
            tmp_path,
            every=timedelta(hours=1),
            client=client,
            stop=stop,
            on_snapshot=first_then_stop,
        )
    assert (run.taken, run.stopped) == (1, True)
    assert verify(tmp_path).ok and verify(tmp_path).files == 3  # pods, gpus, snapshots


def test_a_stop_event_set_by_another_thread_wakes_the_wait(
    make_sandbox: Any, tmp_path: Path
) -> None:
    sb = make_sandbox()
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()  # while the loop waits for an hour's tick
    began = time.monotonic()
    with sb.client() as client:
        run = collect_every(
            ["cl-infer-prod"], tmp_path, every=timedelta(hours=1), client=client, stop=stop
        )
    assert (run.taken, run.stopped) == (1, True)
    assert time.monotonic() - began < 10


@pytest.mark.parametrize(
    ("every", "count"), [(timedelta(0), 2), ("soon", 2), (timedelta(seconds=1), 0)]
)
def test_bad_arguments_are_value_errors_before_any_request(
    make_sandbox: Any, tmp_path: Path, every: Any, count: int
) -> None:
    sb = make_sandbox()
    with sb.client() as client, pytest.raises(ValueError):
        collect_every(["cl-infer-prod"], tmp_path, every=every, count=count, client=client)
    assert sb.app.statuses.get(200, 0) == 0


def test_without_a_client_one_client_from_the_environment_serves_the_whole_run(
    make_sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One client for the run: its pacer learns the quota, so the budget is judged (a
    # client per snapshot would never know the quota, and never refuse).
    sb = make_sandbox(rate_limits={"day": (100, 86_400.0)})
    monkeypatch.setenv("CCANALYTICS_API_KEY", sb.api_key)
    monkeypatch.setenv("CCANALYTICS_BASE_URL", sb.url)
    with pytest.raises(ScheduleError):
        collect_every(["cl-infer-prod"], tmp_path / "s", every="1s")
    assert not list((tmp_path / "s").rglob("*.parquet"))


# A signal handler runs in the main thread between any two bytecodes, also while that
# thread holds the lock inside `threading.Event.wait`; a handler that takes the same
# lock (`Event.set`) then waits on itself forever (CI hung on one `collect --every 30s`
# stopped by SIGINT, another by SIGTERM). The storm below makes that instant certain
# to come: the waits are short and the signals many.
_SIGNAL_STORM = """
import os, signal, threading, time
from ccanalytics.history.collector._collector import _stopping

done = threading.Event()

def storm() -> None:
    while not done.is_set():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.0005)

with _stopping(None, True) as stopper:
    sender = threading.Thread(target=storm)
    sender.start()
    waits = 0
    end = time.monotonic() + 2
    while time.monotonic() < end:
        assert stopper.wait(0.00001) is True
        waits += 1
    done.set()
    sender.join()
print("waited", waits, "times, stopped by", stopper.signal_name)
"""


def test_a_signal_at_any_instant_of_a_wait_stops_it_without_hanging() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _SIGNAL_STORM],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "stopped by SIGTERM" in proc.stdout

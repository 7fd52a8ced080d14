"""``ccanalytics collect``: cron runs, the bounded loop, its rate-limit budget and signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ccanalytics import History
from ccanalytics._durations import format_duration, parse_duration
from ccanalytics.api import RateLimitWindow
from ccanalytics.cli import main
from ccanalytics.history import budget_refusal, verify
from ccanalytics.sandbox import FULL_ACCESS_KEY, Sandbox, make_data

# -- durations and the budget, by hand --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30), ("5m", 300), ("1h", 3600), ("1h30m", 5400), ("0.5s", 0.5), ("1d", 86400)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5", "m", "5x", "0s", "-5m", "5 mx", "1h-30m"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"duration|longer than zero"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"), [(30, "30s"), (86.4, "1m27s"), (3600, "1h"), (5400, "1h30m"), (0.2, "1s")]
)
def test_format_duration_rounds_up_to_whole_seconds(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


DAY_50K = {"day": RateLimitWindow(quota=50_000, window=86_400.0)}


def test_the_documented_example_is_refused_with_the_shortest_interval_that_fits() -> None:
    # 25 clusters every minute: 1,440 snapshots x 25 = 36,000 requests a day, over
    # 50% of 50,000 = 25,000. Fits: 1,000 snapshots a day, one every 86.4 s -> 1m27s.
    message = budget_refusal(DAY_50K, clusters=25, every=60, count=None, share=0.5)
    assert message is not None
    assert "36,000 requests" in message and "'day' window" in message
    assert message.endswith("the shortest interval that fits is 1m27s")
    assert budget_refusal(DAY_50K, clusters=25, every=87, count=None, share=0.5) is None
    assert budget_refusal(DAY_50K, clusters=25, every=86, count=None, share=0.5) is not None


def test_the_tightest_window_sets_the_shortest_interval() -> None:
    windows = {
        "minute": RateLimitWindow(quota=60, window=60.0),  # 30 allowed: 10 clusters x 3
        "day": RateLimitWindow(quota=50_000, window=86_400.0),  # 25,000: 2,500 snapshots
    }
    message = budget_refusal(windows, clusters=10, every=10, count=None, share=0.5)
    # minute: 30 // 10 = 3 snapshots -> every 20 s; day: 25,000 // 10 = 2,500 -> every 34.56 s.
    assert message is not None and message.endswith("the shortest interval that fits is 35s")
    assert budget_refusal(windows, clusters=10, every=35, count=None, share=0.5) is None


def test_a_bounded_count_fits_when_all_its_requests_do() -> None:
    # 100 snapshots of 25 clusters = 2,500 requests, whatever the interval.
    assert budget_refusal(DAY_50K, clusters=25, every=1, count=100, share=0.5) is None
    assert budget_refusal(DAY_50K, clusters=25, every=1, count=1001, share=0.5) is not None


def test_a_snapshot_bigger_than_the_share_never_fits() -> None:
    windows = {"minute": RateLimitWindow(quota=10, window=60.0)}
    message = budget_refusal(windows, clusters=6, every=3600, count=None, share=0.5)
    assert message is not None and "one snapshot of 6 clusters" in message


def test_windows_without_a_policy_are_not_judged() -> None:
    windows = {"minute": RateLimitWindow(remaining=3, reset=10.0)}
    assert budget_refusal(windows, clusters=100, every=1, count=None, share=0.5) is None


# -- the command -------------------------------------------------------------------------


@pytest.fixture
def fleet(make_sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """25 clusters behind a 50,000-a-day quota, reached through the environment."""

    def start(**options: Any) -> Sandbox:
        sb: Sandbox = make_sandbox(**options)
        pods = sb.app.data.clusters["cl-finetune-7b"]
        sb.app.data.clusters = {f"cl-{i:02d}": pods for i in range(25)}
        monkeypatch.setenv("CCANALYTICS_BASE_URL", sb.url)
        monkeypatch.setenv("CCANALYTICS_API_KEY", FULL_ACCESS_KEY)
        return sb

    return start


CLUSTER_IDS = [f"cl-{i:02d}" for i in range(25)]


def test_one_run_writes_one_snapshot_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["collect", "cl-infer-prod", "cl-bringup", "--store", str(tmp_path), "--sandbox"]) == 0
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "snapshot 1: 2 cluster(s)" in err[0]
    with History(tmp_path) as h:
        assert set(h.pods()["cluster_id"]) == {"cl-infer-prod", "cl-bringup"}


def test_a_failing_cluster_exits_1_after_writing_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["collect", "cl-infer-prod", "cl-nope", "--store", str(tmp_path), "--sandbox"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "FAILED 1: cl-nope" in err and "404" in err
    with History(tmp_path) as h:
        assert set(h.pods()["cluster_id"]) == {"cl-infer-prod"}


@pytest.mark.parametrize(
    "extra",
    [
        ["--count", "3"],
        ["--every", "5x"],
        ["--every", "0s"],
        ["--budget-share", "0"],
        ["--budget-share", "2"],
    ],
)
def test_bad_usage_exits_2_and_writes_nothing(
    tmp_path: Path, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["collect", "cl-infer-prod", "--store", str(tmp_path / "s"), "--sandbox", *extra]
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own usage errors
        code = int(exit_.code or 0)
    assert code == 2
    assert not (tmp_path / "s").exists()


def test_a_schedule_over_budget_is_refused_up_front(
    fleet: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sb = fleet(rate_limits={"day": (50_000, 86_400.0)})
    store = tmp_path / "store"
    code = main(["collect", *CLUSTER_IDS, "--store", str(store), "--every", "1m"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("ccanalytics collect: refused: 25 clusters every 1m")
    assert err[0].endswith("the shortest interval that fits is 1m27s")
    assert not list(store.rglob("*.parquet"))  # nothing written
    assert sb.app.statuses[200] == 25  # it spent one snapshot's requests learning the quota


def test_a_schedule_within_budget_runs_its_count(
    fleet: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet(rate_limits={"day": (50_000, 86_400.0)})
    argv = [
        "collect",
        *CLUSTER_IDS[:3],
        "--store",
        str(tmp_path),
        "--every",
        "0.2s",
        "--count",
        "3",
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert [line.split(" snapshot ")[1].split(":")[0] for line in err] == ["1/3", "2/3", "3/3"]
    per_cluster = len(make_data().clusters["cl-finetune-7b"])
    with History(tmp_path) as h:
        assert len(h.pods()) == 3 * 3 * per_cluster


def test_the_loop_goes_on_after_a_failed_snapshot(
    fleet: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], fast_retries: None
) -> None:
    sb = fleet()
    sb.app.add_fault("status", status=503, path="/v2/clusters/cl-01/pods", times=4)
    argv = [
        "collect",
        "cl-00",
        "cl-01",
        "--store",
        str(tmp_path),
        "--every",
        "0.1s",
        "--count",
        "3",
    ]
    assert main(argv) == 1  # one snapshot lost a cluster
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3
    assert "FAILED 1: cl-01" in err[0] and "503" in err[0]
    assert "FAILED" not in err[1] and "FAILED" not in err[2]
    per_cluster = len(make_data().clusters["cl-finetune-7b"])
    with History(tmp_path) as h:
        assert len(h.pods()) == (3 + 2) * per_cluster  # cl-00 three times, cl-01 twice


# -- processes: signals and parallel collectors ---------------------------------------------


def start_collector(store: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ccanalytics",
            "collect",
            "cl-infer-prod",
            "cl-llama70b-train",
            "--store",
            str(store),
            "--sandbox",
            *extra,
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_loop_cleanly(tmp_path: Path, signum: int) -> None:
    proc = start_collector(tmp_path, "--every", "30s")
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the first snapshot is written
    assert "snapshot 1:" in first, first
    proc.send_signal(signum)
    rest = proc.communicate(timeout=30)[1]
    assert proc.returncode == 0, rest
    assert f"stopped by {signal.Signals(signum).name} after 1 snapshots" in rest
    assert not list(tmp_path.rglob(".*.tmp"))
    assert verify(tmp_path).ok and verify(tmp_path).files == 3  # pods, gpus, snapshots


@pytest.mark.slow
def test_two_collector_processes_in_parallel_lose_nothing(tmp_path: Path) -> None:
    procs = [start_collector(tmp_path, "--every", "0.1s", "--count", "4") for _ in range(2)]
    outputs = [p.communicate(timeout=60)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert sum(o.count(" snapshot ") for o in outputs) == 8
    assert verify(tmp_path).files == 24  # 8 snapshots x (pods, gpus, snapshots), none clobbered
    data = make_data()
    per_snapshot = len(data.clusters["cl-infer-prod"]) + len(data.clusters["cl-llama70b-train"])
    with History(tmp_path) as h:
        assert len(h.pods()) == 8 * per_snapshot


def test_a_fleet_load_leaves_the_clients_rate_limit_current(make_sandbox: Any) -> None:
    # The loop learns the quota from client.rate_limit after its first snapshot.
    from ccanalytics import load_cluster_frames

    sb = make_sandbox(rate_limits={"day": (50_000, 86_400.0)})
    with sb.client() as client:
        assert client.rate_limit is None
        load_cluster_frames(["cl-infer-prod", "cl-bringup"], client=client)
        assert client.rate_limit is not None
        day = client.rate_limit.windows["day"]
        assert (day.quota, day.window, day.remaining) == (50_000, 86_400.0, 49_998)


def test_a_store_that_cannot_be_written_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store should be")
    assert main(["collect", "cl-infer-prod", "--store", str(blocker), "--sandbox"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ccanalytics collect: cannot write the store")


def test_a_budget_refusal_says_when_the_windows_count_a_simulated_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    from ccanalytics.sandbox import FULL_ACCESS_KEY, Sandbox, SandboxApp, SimulatedClock

    clock = SimulatedClock(datetime(2026, 11, 2, tzinfo=UTC))  # the sandbox's own time
    with Sandbox(SandboxApp(clock=clock)) as sb:
        monkeypatch.setenv("CCANALYTICS_BASE_URL", sb.url)
        monkeypatch.setenv("CCANALYTICS_API_KEY", FULL_ACCESS_KEY)
        argv = ["collect", "cl-infer-prod", "--store", str(tmp_path), "--every", "1s"]
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert "refused: 1 clusters every 1s" in err
    assert "the service's clock reads 2026-11-02 00:00 UTC" in err
    assert "simulated" in err


@pytest.mark.parametrize("trust", [False, True])
def test_a_service_clock_in_2099_is_one_warning_line_unless_trusted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, trust: bool
) -> None:
    from datetime import UTC, datetime

    from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

    with Sandbox(SandboxApp(clock=SimulatedClock(datetime(2099, 6, 1, tzinfo=UTC)))) as sb:
        monkeypatch.setenv("CCANALYTICS_BASE_URL", sb.url)
        monkeypatch.setenv("CCANALYTICS_API_KEY", EXEMPT_KEY)
        argv = ["collect", "cl-infer-prod", "--store", str(tmp_path), "--every", "0.05s"]
        argv += ["--count", "2", *(["--trust-service-clock"] if trust else [])]
        assert main(argv) == 0
    err = capsys.readouterr().err.splitlines()
    warned = [line for line in err if "warning:" in line]
    with History(tmp_path) as h:
        year = h.pods()["observed_at"].max().year
    if trust:
        assert not warned and year == 2099
    else:
        assert len(warned) == 1 and year < 2099
        assert warned[0].startswith("ccanalytics collect: warning: the service's clock reads 2099")


def test_the_loop_says_when_it_compacts_a_closed_day(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime, timedelta

    from ccanalytics.history.collector import _collector
    from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

    # Snapshots 5 simulated minutes apart from 23:50: two on Nov 2, two on Nov 3.
    clock = SimulatedClock(datetime(2026, 11, 2, 23, 50, tzinfo=UTC))
    taken = _collector.take_snapshot

    def then_advance(*args: Any, **kw: Any) -> Any:
        snapshot = taken(*args, **kw)
        clock.advance(timedelta(minutes=5))
        return snapshot

    monkeypatch.setattr(_collector, "take_snapshot", then_advance)
    with Sandbox(SandboxApp(clock=clock)) as sb:
        monkeypatch.setenv("CCANALYTICS_BASE_URL", sb.url)
        monkeypatch.setenv("CCANALYTICS_API_KEY", EXEMPT_KEY)
        argv = ["collect", "cl-infer-prod", "--store", str(tmp_path), "--every", "0.1s"]
        assert main([*argv, "--count", "4", "--trust-service-clock"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if "compacted" in line] == [
        "ccanalytics collect: compacted 2026-11-02: 6 files into 3"
    ]

"""Shared fixtures: the sandbox over real loopback HTTP, fast retries, secret scanning, the
simulated day; and how the suite runs (tests/README.md): Hypothesis profiles, the order
xdist hands tests out in, and the CI rule that a skip must be documented."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import ci_skips
import pytest
from examples import FAST
from filelock import FileLock
from hypothesis import HealthCheck, settings
from simulated_day import SimulatedDay, build_once

from ccanalytics.sandbox import FULL_ACCESS_KEY, Sandbox, SandboxApp

pytest_plugins = ["pytester"]  # tests/test_ci_skips.py runs pytest on a made-up suite

# -- Hypothesis: few examples by default, many on demand ------------------------------
# A property test that pins no max_examples takes its profile's; one that pins a number
# (a costly example, or a cheap one worth many) keeps it. ``HYPOTHESIS_PROFILE=thorough
# pytest`` digs 20 times deeper than the "fast" profile every run loads by default.
settings.register_profile(
    "fast", max_examples=FAST, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# .ci/versions' fast subset on the other interpreters and the floors: each property is
# still tried there, on fewer examples (the README's suite runs the "fast" profile).
settings.register_profile(
    "quick", max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per core this process may use, and one more.

    Part of the suite waits rather than computes: for Retry-After and rate windows, for
    servers that drip, for a process to be killed, a kernel or a JVM to start. With one
    worker per core, two cores were busy 1.74 of the time on average (sampled each
    second); with one more, 1.91, and the suite took 236-243 s rather than 249-259 s.
    """
    return len(os.sched_getaffinity(0)) + 1


#: A worker's young-object collection threshold (Python's own is 700 allocations).
GC_YOUNG_THRESHOLD = 10_000


def pytest_collection_finish(session: pytest.Session) -> None:
    """Collect garbage less often in a test process: its heap is large, and a full
    collection walks all of it.

    A worker holds every test module, pandas, pyarrow, DuckDB, matplotlib and
    Hypothesis. With Python's settings the three workers' collections took 24 s of CPU a
    run (timed by ``gc.callbacks``), 16 s of it in 48 full collections of ~0.33 s each.
    What the collection of the tests left alive is moved out of the collector's sight
    (``gc.freeze``), and a young collection waits for 10,000 allocations rather than
    700: 14 s a run. Garbage is still collected, later; no test depends on when (those
    that watch the thresholds set their own and give them back).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each notebook's cells slow (each runs a whole story in its kernel), and under
    xdist hand out the longest chains first.

    ``--dist loadfile`` keeps a file's tests in one worker: a notebook's cells share one
    kernel and must run there in order. (``loadgroup`` would group by ``xdist_group``
    marks, but pytest 9.2's structured node ids make xdist 3.8 ignore them silently:
    pytest-dev/pytest-xdist#1386.) One module of the simulated day's users comes first,
    so that one worker builds the day while the others start the other long chains
    (:func:`_start_early`); the day's other users come after them, and find it built
    rather than wait on its lock (``--no-loadscope-reorder`` keeps this order): the long
    chains start at once rather than trail at the end of the run on one worker; every
    worker sorts alike.
    """
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
            # A notebook's longest cell (04's month of 720 collects: 21 s, 39 s with the
            # machine busy) is well within the suite's 120 s; the margin is for a slower one.
            item.add_marker(pytest.mark.timeout(600))
        elif _uses_the_day(item):
            # Its setup may build the day (50 s on a quiet machine) or wait on the lock
            # while another worker builds it: past 120 s on a busy one, and the timeout
            # ended the worker (xdist then failed the run with an internal error).
            item.add_marker(pytest.mark.timeout(DAY_USER_TIMEOUT_S))
    if hasattr(config, "workerinput"):
        day_users = sorted(item.path for item in items if _uses_the_day(item))
        builder = day_users[0] if day_users else None
        items.sort(key=lambda item: _start_early(item, builder))


#: The timeout of a test that uses the simulated day, its setup included.
DAY_USER_TIMEOUT_S = 600


def _uses_the_day(item: pytest.Item) -> bool:
    return "simulated_day" in getattr(item, "fixturenames", ())


def _start_early(item: pytest.Item, builder: object) -> tuple[int, float, int]:
    """The day's builder first, then the longest chains: a test given a timeout above the
    suite's says it is one (the forecast's eight weeks, the Spark agreement, the
    notebooks), and started last it would trail alone on one worker. Of equal timeouts,
    the day's users last, so that they find the day built."""
    if item.path == builder:
        return 0, 0.0, 0
    marker = item.get_closest_marker("timeout")
    timeout = float(marker.args[0]) if marker is not None and marker.args else 0.0
    return 1, -timeout, int(_uses_the_day(item))


@pytest.fixture(scope="session")
def simulated_day(tmp_path_factory: pytest.TempPathFactory) -> SimulatedDay:
    """The sandbox's timeline fleet for one day, 288 snapshots (tests/simulated_day.py).

    Built once per run: under xdist the first worker to need it builds it beside every
    worker's temporary folder, under a lock, and the others read what it left there.
    """
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each worker's own
    with FileLock(shared / "simulated-day.lock"):
        return build_once(shared / "simulated-day")


def pytest_configure(config: pytest.Config) -> None:
    ci_skips.register(config)  # under CI=true, an undocumented skip fails the run


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """A fresh sandbox (default seed, generous quotas) served on a free 127.0.0.1 port."""
    with Sandbox() as sb:
        yield sb


@pytest.fixture
def make_sandbox() -> Iterator[object]:
    """Factory for sandboxes with custom quotas, latency or faults; all stopped at teardown."""
    started: list[Sandbox] = []

    def make(**options: object) -> Sandbox:
        sb = Sandbox(SandboxApp(**options)).start()  # type: ignore[arg-type]
        started.append(sb)
        return sb

    yield make
    for sb in started:
        sb.stop()


@pytest.fixture
def client(sandbox: Sandbox) -> Iterator[object]:
    """A Client on the loopback sandbox, with full access."""
    with sandbox.client() as c:
        yield c


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrink backoff delays so retry tests take milliseconds, not seconds."""
    import ccanalytics.api._retry as retry

    monkeypatch.setattr(retry, "INITIAL_RETRY_DELAY", 0.01)
    monkeypatch.setattr(retry, "MAX_RETRY_DELAY", 0.05)


@pytest.fixture
def api_key() -> str:
    return FULL_ACCESS_KEY


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    """Close matplotlib figures a test left open (only if matplotlib was imported)."""
    yield
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")

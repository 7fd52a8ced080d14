"""Figures drawn on every core give the same bytes as drawn one by one."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")

import pytest
from sandbox_fleet import NOW

import ccanalytics
from ccanalytics.report import _draw, render_report
from ccanalytics.sandbox import Sandbox

# Each test starts a pool of drawing processes and renders every figure, seconds each
# (the two that watch write_report share one run: the module fixture below).
pytestmark = pytest.mark.slow


def _in_a_fresh_process(script: str, *args: str, env: dict[str, str] | None = None) -> str:
    """What ``script`` prints, run by a new interpreter: a process with no other thread,
    where the figures' workers may be forked."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        check=True,
        env=env or {**os.environ, "MPLBACKEND": "Agg"},
    ).stdout.strip()


_RENDER = textwrap.dedent(
    """
    import hashlib, sys, threading
    from datetime import datetime
    from sandbox_fleet import fleet_frames
    from ccanalytics.report import render_report
    pods, gpus = fleet_frames()
    assert threading.active_count() == 1
    document = render_report(pods, gpus, generated_at=datetime.fromisoformat(sys.argv[1]))
    print(hashlib.sha256(document.encode()).hexdigest())
    """
)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: no pool to compare")
def test_the_pool_draws_the_same_bytes_as_one_by_one(fleet_report: str) -> None:
    """The same fleet at the same time, drawn by a pool in a fresh process and here one
    by one (``fleet_report``, conftest.py: shared with test_report.py's page)."""
    serial = hashlib.sha256(fleet_report.encode()).hexdigest()
    tests = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": os.pathsep.join(sys.path)}
    assert _in_a_fresh_process(_RENDER, NOW.isoformat(), env=tests) == serial


def _line(ax: object) -> None:
    ax.plot([0, 1])  # type: ignore[attr-defined]


def test_with_other_threads_running_figures_are_drawn_here() -> None:
    import threading

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        drawers = _draw.Drawers()
        assert drawers._workers is None  # a fork now could copy a lock the thread holds
        drawn = drawers.draw([_draw._Job(_line, (2.0, 1.0), "a", "b")] * 5)
    finally:
        stop.set()
        thread.join()
    assert len(drawn) == 5 and all(d.startswith("<figure>") for d in drawn)


_RAW_THREAD = textwrap.dedent(
    """
    import _thread, threading, time
    from ccanalytics.report import _draw
    held = _thread.allocate_lock()
    held.acquire()
    def serve():  # Python code on a thread ``threading`` does not know of, as xdist's
        held.acquire()
    _thread.start_new_thread(serve, ())
    time.sleep(0.05)  # it is running
    assert threading.active_count() == 1
    with _draw.Drawers(10) as drawers:
        print("forked" if drawers._workers is not None else "here")
    held.release()
    """
)


def test_a_thread_threading_does_not_list_also_keeps_the_workers_unforked() -> None:
    """A fork copies only the forking thread, so a lock another thread holds stays held
    in the child for ever, and the report waits on it. ``threading`` lists only its own
    threads; pytest-xdist's run Python on threads started by ``_thread``."""
    assert _in_a_fresh_process(_RAW_THREAD) == "here"


_WRITE = textwrap.dedent(
    """
    import json, sys, threading
    from ccanalytics.report import _draw, _writer, write_report
    started, events = [], []
    start, load = _draw.Drawers.__init__, _writer._load
    send, fill = _draw.Drawers.start, _writer.fill_figures
    def spy(self, expected=None, **options):
        start(self, expected, **options)
        started.append(["workers" if self._workers else "none", "matplotlib" in sys.modules])
    def loading(*args):
        started.append("load")
        return load(*args)
    def sent(self, index, job):
        events.append("sent" if self._workers else "no workers")
        return send(self, index, job)
    def filling(document, jobs, drawers=None):
        events.append(f"page of {len(jobs)}")
        return fill(document, jobs, drawers)
    _draw.Drawers.__init__, _writer._load = spy, loading
    _draw.Drawers.start, _writer.fill_figures = sent, filling
    assert threading.active_count() == 1
    write_report(sys.argv[1].split(","), sys.argv[2])
    print(json.dumps(
        {"started": started, "matplotlib": "matplotlib" in sys.modules, "events": events}
    ))
    """
)


def _sandbox_env(sandbox: object) -> dict[str, str]:
    """A child's environment that reaches ``sandbox`` as the CLI and write_report do."""
    from ccanalytics.sandbox import FULL_ACCESS_KEY

    return {
        **os.environ,
        "MPLBACKEND": "Agg",
        "CCANALYTICS_BASE_URL": sandbox.url,  # type: ignore[attr-defined]
        "CCANALYTICS_API_KEY": FULL_ACCESS_KEY,
    }


def _images(document: str) -> list[str]:
    return re.findall(r'<img src="data:image/png;base64,([^"]+)"', document)


@pytest.fixture(scope="module")
def written(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Sandbox, str, dict[str, Any]]]:
    """write_report on every cluster of a fresh sandbox, in a fresh process, watched by
    ``_WRITE``: the sandbox, the page and what the process saw. Run once (a pool of
    drawing processes, every figure: seconds) for the two tests that read it; the
    sandbox stays up for the comparison that loads the clusters again."""
    with Sandbox() as sandbox:
        ids = sorted(sandbox.app.data.clusters)
        out = tmp_path_factory.mktemp("pool") / "report.html"
        env = _sandbox_env(sandbox)
        seen = json.loads(_in_a_fresh_process(_WRITE, ",".join(ids), str(out), env=env))
        yield sandbox, out.read_text(), seen


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: no pool to compare")
def test_write_report_draws_in_workers_started_before_the_load(
    written: tuple[Sandbox, str, dict[str, Any]],
) -> None:
    """The workers are forked before anything is loaded, while the process is single-
    threaded, and draw every figure: the process itself never imports matplotlib, and
    the images are those drawn here, one by one (threads running: no pool)."""
    sandbox, document, seen = written
    ids = sorted(sandbox.app.data.clusters)
    assert seen["started"] == [["workers", False], "load"] and seen["matplotlib"] is False
    with sandbox.client() as client:
        pods, gpus = ccanalytics.load_cluster_frames(ids, client=client)
    here = render_report(pods, gpus, cluster_ids=ids)
    assert _images(document) == _images(here) and len(_images(here)) >= 10


_KILL = textwrap.dedent(
    """
    import os, signal, threading
    from ccanalytics.report import _draw
    def line(ax):
        ax.plot([0, 1])
    assert threading.active_count() == 1
    with _draw.Drawers() as drawers:
        assert drawers._workers is not None
        for pid in list(drawers._workers._processes):
            os.kill(pid, signal.SIGKILL)
        drawn = drawers.draw([_draw._Job(line, (2.0, 1.0), "a", "b")] * 5)
    print(sum(d.startswith("<figure>") for d in drawn))
    """
)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: no pool")
def test_a_worker_that_dies_leaves_the_figures_to_be_drawn_here() -> None:
    """A killed worker (the OOM killer, a signal) costs time, not the report. In a
    fresh process: here other tests' threads may be running, and then there is no pool."""
    assert _in_a_fresh_process(_KILL) == "5"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: no pool")
def test_each_figure_goes_to_the_workers_as_the_page_notes_it(
    written: tuple[Sandbox, str, dict[str, Any]],
) -> None:
    """The workers draw while the rest of the page is rendered, not only once it is."""
    _, document, seen = written
    figures = len(_images(document))
    assert figures >= 10
    assert seen["events"] == ["sent"] * figures + [f"page of {figures}"]

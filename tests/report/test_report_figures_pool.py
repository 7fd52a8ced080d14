"""Figures drawn on every core (issue 19.10) give the same bytes as drawn one by one."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from ccanalytics.frames import gpus_frame, pods_frame
from ccanalytics.report import _html, render_report
from ccanalytics.sandbox import SandboxApp

_RENDER = textwrap.dedent(
    """
    import hashlib, threading
    import pandas as pd
    from ccanalytics.frames import gpus_frame, pods_frame
    from ccanalytics.report import render_report
    from ccanalytics.sandbox import SandboxApp
    clusters = SandboxApp().data.clusters
    pods = pd.concat([pods_frame(p, cluster_id=c) for c, p in clusters.items()], ignore_index=True)
    gpus = pd.concat([gpus_frame(p, cluster_id=c) for c, p in clusters.items()], ignore_index=True)
    assert threading.active_count() == 1
    document = render_report(pods, gpus)
    print(hashlib.sha256(document.encode()).hexdigest())
    """
)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: no pool to compare")
def test_the_pool_draws_the_same_bytes_as_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    clusters = SandboxApp().data.clusters
    pods = pd.concat([pods_frame(p, cluster_id=c) for c, p in clusters.items()], ignore_index=True)
    gpus = pd.concat([gpus_frame(p, cluster_id=c) for c, p in clusters.items()], ignore_index=True)
    monkeypatch.setattr(_html, "MIN_FIGURES_FOR_POOL", 10**6)  # one by one, here
    serial = hashlib.sha256(render_report(pods, gpus).encode()).hexdigest()
    pooled = subprocess.run(
        [sys.executable, "-c", _RENDER],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
    ).stdout.strip()
    assert pooled == serial


def test_with_other_threads_running_figures_are_drawn_here() -> None:
    import threading

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        drawn = _html._draw_all([(lambda ax: ax.plot([0, 1]), (2.0, 1.0), "a", "b")] * 5)
    finally:
        stop.set()
        thread.join()
    assert len(drawn) == 5 and all(d.startswith("<figure>") for d in drawn)

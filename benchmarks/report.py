"""Figure 5: ``ccanalytics report`` on 500 clusters x 100 pods, whole process.

Targets: <= 1.3x the load alone and <= 6 s for the whole process on this 2-core machine,
against a loopback sandbox with those clusters and no rate limits, with an output that
stays readable (charts capped).

Baselines, run interleaved with it in the same session:

- **the load alone**: a fresh ``python -c`` that imports ccanalytics and loads both
  frames of the same 500 clusters from the same sandbox: what any report must pay
  before it can say anything. ``report / load`` is the cost of the analysis, the
  figures and the file, as a multiple of the load;
- **the small report**: the same command on the sandbox's own fleet (7 clusters,
  70 pods): the report's fixed part (imports, the figures that do not grow);
- with ``--against DIR`` (another checkout, e.g. ``git worktree add --detach DIR main``),
  **the same report by that code**, interleaved: ``report / against`` says what a change
  costs (both run as ``python -m ccanalytics`` with their own tree first on the path).

Where the time goes (profiled, 2026-11-25): the load is ~2.4 s of client CPU on a quiet
machine (HTTP ~0.6 s, framing 50,000 pods and 400,000 GPU rows ~1.1 s in one pass,
collections, asyncio), the analysis ~0.2 s, and 17 figures ~3.1-3.4 s of CPU at 2x
DPI (constrained layout ~10 % of it, PNG encoding ~15 %). What the report does about
it: one pass of framing for the whole fleet (``frames._build.FleetFrames``); no full
collection during the load (the oldest generation's threshold raised); each figure drawn once on
a ``FigureCanvasAgg`` and encoded by our own "Up"-filter PNG writer; the figures drawn
by one worker per core, forked before the load so that they import matplotlib while
the parent loads (the report process never imports it) and sent only what each figure
reads; ``gc.freeze`` at exit (the interpreter's last collections).

Profiled again 2026-12-02 (cProfile, the 500 x 100 frames built in process, every figure
drawn in one process, a busy machine: compare shares, not seconds): of the render's
18.7 s of CPU, the 17 figures are 16.6 s (89 %). Within them matplotlib's ``draw`` is
66 % and half of it (35 % of all figure time) is constrained layout measuring tick
labels and titles (``get_tightbbox``, ``Text.get_window_extent``); the plot functions
themselves (judging pods, building artists) 18 %; PNG encoding at 2x the rest (~15 %).
By figure: the 20-bar waste chart by cluster (10 x 10 in, 4 Mpx at 2x) 2.5 s, the
cost chart by cluster 1.2 s, the scatter 1.05 s, each rank plot 0.9-1.2 s and each
heatmap 0.7-1.4 s (6 clusters, 12 figures, 11.0 s: two thirds of the figures). The
levers left, in that order: fewer rank-plot pairs on the first screen (they are below
the fold), a layout computed once per figure kind instead of constrained layout per
figure, and 1x for the tall bar charts.

Profiled a second time 2026-12-02 (each figure's process CPU with no profiler attached,
and a report run with its phases and each worker's figures timed): the parent's CPU is
3.8 s (load 2.6-2.7 s, findings 0.5 s, the page 0.3 s), the workers' 5.0 s (0.35 s each
importing matplotlib during the load, 4.5 s of figures). Per figure: the plot function
20 %, constrained layout 25 %, rendering 40 %, PNG 15 %; the 10 x 10 in charts 0.29-0.35 s,
the scatter 0.27 s, each rank plot or heatmap 0.19-0.23 s (12 figures, 2.5 s). In a
worker, the first figure that judged pods cost 0.25-0.35 s more: it imported sqlglot and
DuckDB, parsed the rules and opened a database. Done since: three clusters drawn rank by
rank by default, not six (the workers' CPU 5.0 -> 3.3 s); each plot is sent the
findings' verdicts of its pods, so no worker judges. Measured and left: a layout in one
pass (the axes' tight box measured once and placed as constrained layout places it, to
0.1 px) saves only 5-10 % of a figure, since measuring the text is the cost, not the
layout's second pass; a layout without measuring needs margins known in advance, and the
legends' and tick labels' widths vary by figure. 1x for the 10 x 10 in charts would save
~0.15 s of CPU each but blur their text on high-DPI screens. What is left after the
load: the findings and the page (0.8 s in the parent), then ~1.3 s of figures on two
workers (2.7 s of CPU); at 1.3x a 2.6 s load leaves ~0.8 s for all of it.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _harness import interleaved, report, script, verdict

from ccanalytics.sandbox import FULL_ACCESS_KEY, Sandbox, SandboxApp, make_cluster_pods

CLUSTERS, PODS = 500, 100
TARGET_S = 6.0
#: ...and at most this multiple of the load alone: what a machine's speed cannot move.
TARGET_RATIO = 1.3
REPEAT = 3


def fleet_app() -> SandboxApp:
    """500 homogeneous training clusters, every 50th with a straggler; no rate limits."""
    app = SandboxApp(rate_limits={})
    app.data.clusters = {
        f"cl-{i:03d}": make_cluster_pods(
            f"cl-{i:03d}", PODS, seed=i, straggler_ranks=(7,) if i % 50 == 0 else ()
        )
        for i in range(CLUSTERS)
    }
    return app


def _env(url: str, tree: str | None = None) -> dict[str, str]:
    env = {
        **os.environ,
        "CCANALYTICS_BASE_URL": url,
        "CCANALYTICS_API_KEY": FULL_ACCESS_KEY,
        "MPLBACKEND": "Agg",
    }
    if tree is not None:  # that checkout's ccanalytics, not the installed one
        env["PYTHONPATH"] = os.pathsep.join([tree, *filter(None, [env.get("PYTHONPATH")])])
    return env


def _run(cmd: list[str], env: dict[str, str]) -> Callable[[], None]:
    return lambda: subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)


def _cpu_seconds(cmd: list[str], env: dict[str, str]) -> float:
    """User + system CPU time of one run of ``cmd`` (less sensitive than wall time to a
    busy machine; the report is single-threaded, so on an idle machine wall ~ CPU)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench(against: str | None = None) -> None:
    print(
        f"5. report: {CLUSTERS} clusters x {PODS} pods, whole process, "
        f"target <= {TARGET_RATIO:g}x the load alone and <= {TARGET_S:g} s",
        flush=True,
    )
    exe = script()
    if not exe:
        print("  skipped: the ccanalytics script is not on PATH")
        return
    big, small = Sandbox(fleet_app()).start(), Sandbox(SandboxApp(rate_limits={})).start()
    ids, small_ids = sorted(big.app.data.clusters), sorted(small.app.data.clusters)
    load_code = f"import ccanalytics; ccanalytics.load_cluster_frames({ids!r}, progress=False)"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "fleet.html"
            commands = {
                "report": ([exe, "report", *ids, "-o", str(out)], _env(big.url)),
                "load": ([sys.executable, "-c", load_code], _env(big.url)),
                "small": (
                    [exe, "report", *small_ids, "-o", str(Path(tmp) / "small.html")],
                    _env(small.url),
                ),
            }
            if against is not None:
                here = str(Path(__file__).resolve().parents[1])
                other = Path(tmp) / "against.html"
                module = [sys.executable, "-m", "ccanalytics", "report", *ids]
                commands["report"] = ([*module, "-o", str(out)], _env(big.url, here))
                commands["against"] = ([*module, "-o", str(other)], _env(big.url, against))
            t = interleaved({k: _run(*c) for k, c in commands.items()}, repeat=REPEAT)
            cpu = {k: _cpu_seconds(*c) for k, c in commands.items()}
            size_mb = out.stat().st_size / 1e6
    finally:
        big.stop()
        small.stop()
    report(
        f"report, {CLUSTERS}x{PODS} pods vs the load alone "
        f"(target <= {TARGET_RATIO:g}x and <= {TARGET_S:g} s)",
        f"{t['report']:.2f} s",
        f"{t['load']:.2f} s",
        f"{t['report'] / t['load']:.2f}x: "
        f"{verdict(t['report'] <= TARGET_RATIO * t['load'] and t['report'] <= TARGET_S)}",
        value=t["report"] / t["load"],
        headline=f"`ccanalytics report`, {CLUSTERS}x{PODS} pods, vs its load alone",
    )
    report(
        f"same, vs the report on the {len(small_ids)}-cluster sandbox",
        f"{t['report']:.2f} s",
        f"{t['small']:.2f} s",
        f"{t['report'] / t['small']:.2f}x",
    )
    print(
        f"  CPU time (user + system) of one run: report {cpu['report']:.2f} s, "
        f"load alone {cpu['load']:.2f} s, small report {cpu['small']:.2f} s",
        flush=True,
    )
    if against is not None:
        report(
            f"same, this tree vs {against}",
            f"{t['report']:.2f} s",
            f"{t['against']:.2f} s",
            f"{t['report'] / t['against']:.3f}x (CPU {cpu['report'] / cpu['against']:.3f}x)",
        )
    print(
        f"  whole process {t['report']:.2f} s (target <= {TARGET_S:g} s): "
        f"{verdict(t['report'] <= TARGET_S)}; HTML {size_mb:.1f} MB",
        flush=True,
    )


if __name__ == "__main__":
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--against", metavar="DIR", help="also time the report of this checkout")
    bench(cli.parse_args().against)

"""Figure 5: ``ccanalytics report`` on 500 clusters x 100 pods, whole process.

Target (issue 16): <= 6 s for the whole process, against a loopback sandbox with those
clusters and no rate limits, with an output that stays readable (charts capped).

Baselines, run interleaved with it in the same session:

- **the load alone**: a fresh ``python -c`` that imports ccanalytics and loads both
  frames of the same 500 clusters from the same sandbox: what any report must pay
  before it can say anything. ``report / load`` is the cost of the analysis, the
  figures and the file, as a multiple of the load;
- **the small report**: the same command on the sandbox's own 6-cluster, 65-pod
  fleet: how the report's time grows from a small fleet to a large one (its fixed
  part being imports and the figures that do not grow with the fleet).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _harness import interleaved, report, script, verdict

from ccanalytics.sandbox import FULL_ACCESS_KEY, Sandbox, SandboxApp, make_cluster_pods

CLUSTERS, PODS = 500, 100
TARGET_S = 6.0
REPEAT = 5


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


def _env(url: str) -> dict[str, str]:
    return {
        **os.environ,
        "CCANALYTICS_BASE_URL": url,
        "CCANALYTICS_API_KEY": FULL_ACCESS_KEY,
        "MPLBACKEND": "Agg",
    }


def _run(cmd: list[str], env: dict[str, str]) -> Callable[[], None]:
    return lambda: subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)


def bench() -> None:
    print(
        f"5. report: {CLUSTERS} clusters x {PODS} pods, whole process, target <= {TARGET_S:g} s",
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
            t = interleaved(
                {
                    "report": _run([exe, "report", *ids, "-o", str(out)], _env(big.url)),
                    "load": _run([sys.executable, "-c", load_code], _env(big.url)),
                    "small": _run(
                        [exe, "report", *small_ids, "-o", str(Path(tmp) / "small.html")],
                        _env(small.url),
                    ),
                },
                repeat=REPEAT,
            )
            size_mb = out.stat().st_size / 1e6
    finally:
        big.stop()
        small.stop()
    report(
        f"report, {CLUSTERS}x{PODS} pods vs the load alone",
        f"{t['report']:.2f} s",
        f"{t['load']:.2f} s",
        f"{t['report'] / t['load']:.2f}x",
    )
    report(
        "same, vs the report on the 6-cluster sandbox",
        f"{t['report']:.2f} s",
        f"{t['small']:.2f} s",
        f"{t['report'] / t['small']:.2f}x",
    )
    print(
        f"  whole process {t['report']:.2f} s (target <= {TARGET_S:g} s): "
        f"{verdict(t['report'] <= TARGET_S)}; HTML {size_mb:.1f} MB",
        flush=True,
    )


if __name__ == "__main__":
    bench()

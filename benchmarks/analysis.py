"""Figure 8: the live analyses at 50,000 pods, one SQL engine against the pandas renderings.

Target: the four analyses a report runs (``cluster_summary``, ``idle_pods``,
``stragglers``, ``cost_per_gpu_hour``) over a 50,000-pod frame (500 clusters x 100
ranks, every 50th cluster with a straggler) take no longer with DuckDB running the
store's SQL over the frame than they took with their pandas renderings.

Baseline, run interleaved in the same session: **the previous implementation**, the
pandas ``analysis`` module and the ``_rules`` module it rendered the rules with, read
from git at :data:`BEFORE` (from before the analyses moved to SQL) and run on the same
frame. Both answer the same questions; the ratio is ours over theirs.
"""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path
from typing import Any

from _harness import interleaved, report, verdict

from ccanalytics import analysis
from ccanalytics.frames._build import pods_frame
from ccanalytics.sandbox import make_cluster_pods

CLUSTERS, PODS = 500, 100
REPEAT = 9
#: The last commit with the pandas renderings of the rules.
BEFORE = "0e0d14b"
ROOT = Path(__file__).resolve().parents[1]


def fleet_frame() -> Any:
    pods: list[dict[str, Any]] = []
    for i in range(CLUSTERS):
        slow = (7,) if i % 50 == 0 else ()
        pods += make_cluster_pods(f"cl-{i:03d}", PODS, seed=i, straggler_ranks=slow)
    return pods_frame(pods)


def _source(path: str) -> str:
    return subprocess.run(
        ["git", "show", f"{BEFORE}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def previous_analysis() -> types.ModuleType:
    """The pandas implementation as it was at BEFORE (its accessor left out)."""
    rules = types.ModuleType("_previous_rules")
    exec(compile(_source("ccanalytics/_rules.py"), "_previous_rules", "exec"), rules.__dict__)
    sys.modules["_previous_rules"] = rules
    text = _source("ccanalytics/analysis.py")
    text = text.replace("from ccanalytics import _rules", "import _previous_rules as _rules")
    text = text.split('@pd.api.extensions.register_dataframe_accessor("cc")')[0]
    module = types.ModuleType("_previous_analysis")
    exec(compile(text, "_previous_analysis", "exec"), module.__dict__)
    return module


def _all_four(module: Any, frame: Any) -> None:
    module.cluster_summary(frame)
    module.idle_pods(frame)
    module.stragglers(frame)
    module.cost_per_gpu_hour(frame)


def bench() -> None:
    print(f"8. live analyses: {CLUSTERS * PODS:,} pods, four analyses", flush=True)
    frame = fleet_frame()
    before = previous_analysis()
    ours, theirs = analysis.stragglers(frame), before.stragglers(frame)
    assert ours["rank"].tolist() == theirs["rank"].tolist()  # the same answer
    _all_four(analysis, frame)  # warm both (imports, the DuckDB connection)
    _all_four(before, frame)
    times = interleaved(
        {"ours": lambda: _all_four(analysis, frame), "before": lambda: _all_four(before, frame)},
        REPEAT,
    )
    for name in ("cluster_summary", "stragglers"):
        one = interleaved(
            {
                "ours": lambda n=name: getattr(analysis, n)(frame),
                "before": lambda n=name: getattr(before, n)(frame),
            },
            REPEAT,
        )
        ratio = one["ours"] / one["before"]
        report(
            f"   {name}",
            f"{one['ours'] * 1000:.0f} ms",
            f"{one['before'] * 1000:.0f} ms",
            f"x{ratio:.2f}",
            value=ratio,
        )
    ratio = times["ours"] / times["before"]
    report(
        "live analyses at 50k pods (target: no slower)",
        f"{times['ours'] * 1000:.0f} ms",
        f"{times['before'] * 1000:.0f} ms",
        f"x{ratio:.2f} {verdict(ratio <= 1.0)}",
        value=ratio,
    )

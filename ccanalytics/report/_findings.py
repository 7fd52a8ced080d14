"""What the report says, computed once: the findings and the opening sentences.

:func:`_findings` condenses a pods frame into the numbers the report leads with (what
the fleet costs, how much of it is idle, which ranks straggle, how many pods report no
metrics); :func:`_sentences` says them in plain sentences, which open the HTML report
and make up the summary ``ccanalytics report`` prints. Plain text: no markup here,
the HTML layer escapes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import pandas as pd

from ccanalytics.analysis import idle_pods, stragglers

# Underscored names are for ``report``, not public API.
__all__ = [
    "MAX_NAMED_STRAGGLERS",
    "_Findings",
    "_findings",
    "_not_reporting",
    "_plural",
    "_sentences",
    "_usd",
]

#: Straggling ranks named in the opening paragraph at most (all are in the table).
MAX_NAMED_STRAGGLERS: Final = 5


@dataclass(frozen=True)
class _Findings:
    clusters: int
    pods: int
    total_cost: float
    idle: pd.DataFrame
    stragglers: pd.DataFrame
    silent_pods: int
    silent_cost: float
    silent_states: dict[str, int]
    uncosted_pods: int
    idle_threshold: float

    @property
    def idle_pods(self) -> int:
        return len(self.idle)

    @property
    def idle_cost(self) -> float:
        return float(self.idle["wasted_cost_per_hour"].sum())

    @property
    def idle_share(self) -> float:
        return self.idle_cost / self.total_cost if self.total_cost > 0 else 0.0


def _not_reporting(pods: pd.DataFrame) -> pd.Series:
    """Pods with no runtime metrics at all (the rule of ``cluster_summary``'s ``pods_reporting``)."""
    return pods["gpu_util_mean"].isna() & pods["cpu_util"].isna()


def _findings(pods: pd.DataFrame, idle_threshold: float) -> _Findings:
    idle = idle_pods(pods, threshold=idle_threshold)
    silent = pods[_not_reporting(pods)]
    states = silent["status"].fillna("unknown state").str.lower().value_counts()
    return _Findings(
        clusters=int(pods["cluster_id"].nunique()),
        pods=len(pods),
        total_cost=float(pods["cost"].fillna(0.0).sum()),
        idle=idle,
        stragglers=stragglers(pods, idle_threshold=idle_threshold),
        silent_pods=len(silent),
        silent_cost=float(silent["cost"].fillna(0.0).sum()),
        silent_states={str(k): int(v) for k, v in sorted(states.items())},
        uncosted_pods=int(pods["cost"].isna().sum()),
        idle_threshold=idle_threshold,
    )


def _usd(value: float) -> str:
    return f"{value:,.2f} USD/h"


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _sentences(f: _Findings) -> list[str]:
    """The opening paragraph as plain sentences (no markup: escaped by the caller)."""
    out = [
        f"The {_plural(f.clusters, 'cluster')} ({_plural(f.pods, 'pod')}) "
        f"{'costs' if f.clusters == 1 else 'cost'} {_usd(f.total_cost)} in total."
    ]
    if f.idle_pods:
        out.append(
            f"{_usd(f.idle_cost)} of that ({f.idle_share:.1%}) pays for "
            f"{_plural(f.idle_pods, 'idle GPU pod')}, whose every GPU is below "
            f"{f.idle_threshold:g}% utilization."
        )
    else:
        out.append(f"No GPU pod is idle (every GPU below {f.idle_threshold:g}% utilization).")
    slow = f.stragglers
    if len(slow) == 1:
        row = next(slow.itertuples())
        out.append(
            f"1 rank straggles: rank {row.rank} of {row.cluster_id} at {row.gpu_util_mean:.1f}% "
            f"GPU utilization against its cluster's median of {row.cluster_median:.1f}%."
        )
    elif len(slow):
        named = [
            f"rank {row.rank} of {row.cluster_id} at {row.gpu_util_mean:.1f}% "
            f"(median {row.cluster_median:.1f}%)"
            for row in slow.head(MAX_NAMED_STRAGGLERS).itertuples()
        ]
        more = len(slow) - len(named)
        tail = f"; and {more} more (see the table)" if more > 0 else ""
        out.append(
            f"{len(slow)} ranks straggle, by GPU utilization against their cluster's median: "
            f"{'; '.join(named)}{tail}."
        )
    else:
        out.append("No rank straggles.")
    if f.silent_pods:
        states = ", ".join(f"{n} {state}" for state, n in f.silent_states.items())
        verb = "reports" if f.silent_pods == 1 else "report"
        out.append(
            f"{_plural(f.silent_pods, 'pod')} ({_usd(f.silent_cost)}) {verb} no metrics "
            f"({states}), so {'its' if f.silent_pods == 1 else 'their'} utilization is unknown."
        )
    else:
        out.append("Every pod reports metrics.")
    if f.uncosted_pods:
        out.append(f"{_plural(f.uncosted_pods, 'pod')} carry no cost and count as 0.")
    return out

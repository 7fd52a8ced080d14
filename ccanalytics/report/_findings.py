"""What the report says, computed once: the findings and the opening sentences.

:func:`_findings` condenses the frames into everything the report shows (the tables of
:mod:`ccanalytics.analysis`, each computed once, and the numbers the report leads
with); :func:`_sentences` says them in plain sentences, which open the HTML report and
make up the summary ``ccanalytics report`` prints. Plain text: no markup here, the
HTML layer escapes it. Sections, CSV files and plots all read the same findings, so
no figure is computed twice or two ways.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

import pandas as pd

from ccanalytics.analysis import (
    POD_STATES,
    cluster_summary,
    gpu_type_measures,
    idle_pods,
    judge_pods,
    measures_by,
    stragglers,
)
from ccanalytics.measures import Params, by_name, live_totals
from ccanalytics.measures.rules import DAYS_PER_MONTH

# Underscored names are for ``report``, not public API.
__all__ = [
    "MAX_NAMED_STRAGGLERS",
    "_Findings",
    "_findings",
    "_plural",
    "_sentences",
    "_state_counts",
    "_usd",
]

#: Straggling ranks named in the opening paragraph at most (all are in the table).
MAX_NAMED_STRAGGLERS: Final = 5
HOURS_PER_DAY: Final = 24


@dataclass(frozen=True)
class _Findings:
    """Everything the report shows, from one pass over the frames."""

    clusters: int
    pods: int
    idle_threshold: float
    summary: pd.DataFrame
    #: The summary's measures over every cluster (:func:`ccanalytics.measures.live_totals`),
    #: by live column: what the cards and sentences say of the fleet.
    totals: pd.Series
    idle: pd.DataFrame
    stragglers: pd.DataFrame
    #: Per GPU type of the running GPU pods reporting utilization: the registry's measures
    #: of the GPU-type table in their live columns (:func:`~ccanalytics.analysis.gpu_type_measures`).
    by_gpu: pd.DataFrame
    #: Per GPU type of the GPU pods (``unknown GPU`` for none): the registry's GPU spend,
    #: idle-pod cost, unused-capacity cost and what the waste chart draws (USD/h, and
    #: its share of the spend), by the engine: :data:`WASTE_BY_GPU`.
    waste_by_gpu: pd.DataFrame
    #: Running pods (or of unknown status) without the metric of their kind.
    silent: pd.DataFrame
    #: Pods in any state but RUNNING, and how many in each (lower-case state -> count).
    not_running: pd.DataFrame
    states: dict[str, int]
    #: When the service answered (``observed_at``): earliest and latest; None: unknown.
    reading: tuple[datetime, datetime] | None
    #: Every pod judged by the rules (:func:`~ccanalytics.analysis.judge_pods`), on the
    #: pods frame's index: what the plots draw, so that they do not judge again.
    verdicts: pd.DataFrame
    #: Clusters that could not be loaded: id -> why.
    failed: Mapping[str, str] = field(default_factory=dict)
    #: The thresholds every finding was judged at.
    params: Params = field(default_factory=Params)

    @property
    def idle_pods(self) -> int:
        return len(self.idle)

    def total(self, measure: str) -> float:
        """The fleet's figure of the registry measure ``measure`` (0 when undefined)."""
        value = self.totals.get(str(by_name(measure).live))
        return 0.0 if value is None or pd.isna(value) else float(value)

    @property
    def total_cost(self) -> float:
        return self.total("total_cost")

    @property
    def idle_cost(self) -> float:
        return self.total("idle_cost")

    @property
    def unused_cost(self) -> float:
        return self.total("unused_cost")

    @property
    def idle_cost_so_far(self) -> float:
        return float(self.idle["cost_so_far"].sum())

    @property
    def idle_cost_share(self) -> float:
        return self.total("idle_cost_share")

    @property
    def unused_share(self) -> float:
        return self.total("unused_cost_share")

    @property
    def silent_cost(self) -> float:
        return self.total("no_metrics_cost")

    @property
    def not_running_cost(self) -> float:
        return self.total("not_running_cost")

    @property
    def uncosted_pods(self) -> int:
        return int(self.total("uncosted_pod_hours"))

    @property
    def clusters_with_findings(self) -> set[str]:
        """Clusters with an idle pod or a straggling rank."""
        return set(self.idle["cluster_id"].dropna()) | set(self.stragglers["cluster_id"].dropna())


def _state_counts(status: pd.Series) -> dict[str, int]:
    """Lower-case state -> count, lifecycle states first in their order, then the rest."""
    counts = status.fillna("unknown state").astype(str).value_counts()
    order = [s for s in POD_STATES if s in counts.index]
    order += sorted(s for s in counts.index if s not in POD_STATES)
    return {state.lower(): int(counts[state]) for state in order}


def _reading(pods: pd.DataFrame) -> tuple[datetime, datetime] | None:
    if "observed_at" not in pods.columns or pods["observed_at"].isna().all():
        return None
    seen = pods["observed_at"].dropna()
    return seen.min().to_pydatetime(), seen.max().to_pydatetime()


def _findings(
    pods: pd.DataFrame,
    params: Params | float,
    failed: Mapping[str, str] | None = None,
    gpus: pd.DataFrame | None = None,
) -> _Findings:
    """The report's findings, each analysis run once over ``pods``, at ``params``.

    ``gpus``, the GPU frame of the same listing, gives the summary the idle GPUs of busy
    pods (a waste class: :func:`~ccanalytics.analysis.cluster_summary`).
    """
    judged_by = params if isinstance(params, Params) else Params(idle_threshold=params)
    slow = stragglers(pods, params=judged_by)
    verdicts = judge_pods(pods, judged_by)  # the rules, by the one engine
    running = verdicts["running"].to_numpy(dtype=bool)
    not_running = pods[~running].sort_values(["cluster_id", "rank"], kind="stable")
    silent = pods[running & verdicts["without_metrics"].to_numpy(dtype=bool)].sort_values(
        ["cluster_id", "rank"], kind="stable"
    )
    idle = idle_pods(pods, params=judged_by)
    summary = cluster_summary(pods, params=judged_by, gpus=gpus)
    return _Findings(
        clusters=int(pods["cluster_id"].nunique()),
        pods=len(pods),
        idle_threshold=judged_by.idle_threshold,
        summary=summary,
        totals=live_totals(summary),
        idle=idle,
        stragglers=slow,
        by_gpu=gpu_type_measures(pods),
        waste_by_gpu=_waste_by_gpu(pods, judged_by),
        silent=silent,
        not_running=not_running,
        states=_state_counts(not_running["status"]) if len(not_running) else {},
        reading=_reading(pods),
        verdicts=verdicts,
        failed=dict(failed or {}),
        params=judged_by,
    )


#: The waste by GPU type: the registry's measures, per GPU type by the engine (the waste
#: chart's idle cost, the unused capacity of pods in use, and their share of the spend).
WASTE_BY_GPU: Final = (
    "gpu_cost",
    "idle_cost",
    "unused_cost",
    "busy_unused_cost",
    "idle_and_unused_cost",
    "idle_and_unused_cost_share",
)
#: The GPU type of a GPU pod the service names none for.
UNKNOWN_GPU: Final = "unknown GPU"


def _waste_by_gpu(pods: pd.DataFrame, params: Params) -> pd.DataFrame:
    """Per GPU type, over the GPU pods (the rows GPU spend counts): :data:`WASTE_BY_GPU`'s
    live columns (the share's spend there is the GPU spend)."""
    rows = by_name("gpu_cost").where
    out = measures_by(pods, WASTE_BY_GPU, "gpu_type", params=params, where=rows)
    out["gpu_type"] = out["gpu_type"].fillna(UNKNOWN_GPU)
    return out.sort_values("gpu_type", kind="stable", ignore_index=True)


def _usd(value: float) -> str:
    return by_name("total_cost").format_live(value)


def _share(f: _Findings, measure: str) -> str:
    """The fleet's share ``measure`` (a registry share), as the registry writes it."""
    return by_name(measure).format(f.total(measure))


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _when(moment: datetime) -> str:
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def _reading_text(f: _Findings) -> str:
    if f.reading is None:
        return "a single reading"
    first, last = f.reading
    if _when(first) == _when(last):
        return f"a single reading taken at {_when(first)}"
    return f"a single reading taken between {_when(first)} and {_when(last)}"


def _cost_sentence(f: _Findings) -> str:
    day = f.total_cost * HOURS_PER_DAY
    return (
        f"The {_plural(f.clusters, 'cluster')} ({_plural(f.pods, 'pod')}) "
        f"{'costs' if f.clusters == 1 else 'cost'} {_usd(f.total_cost)} in total, from "
        f"{_reading_text(f)}: at this rate about {day:,.0f} USD per day and "
        f"{day * DAYS_PER_MONTH:,.0f} USD per {DAYS_PER_MONTH} days."
    )


def _idle_sentence(f: _Findings) -> str:
    if not f.idle_pods:
        return (
            f"No running GPU pod is idle (idle: every GPU below {f.idle_threshold:g}% utilization)."
        )
    so_far = ""
    if f.idle["cost_so_far"].notna().any():
        so_far = (
            f"; since their containers started they have cost {f.idle_cost_so_far:,.0f} USD "
            "(uptime × cost per hour, per pod in the table)"
        )
    return (
        f"Idle-pod cost, the whole cost of running GPU pods whose every GPU is below "
        f"{f.idle_threshold:g}% utilization, is {_usd(f.idle_cost)} ({_share(f, 'idle_cost_share')} of the total) for "
        f"{_plural(f.idle_pods, 'idle GPU pod')}{so_far}."
    )


def _unused_sentence(f: _Findings) -> str:
    return (
        f"Unused-capacity cost, each running GPU pod's cost times the share of its GPUs "
        f"left unused, Σ cost × (1 − utilization/100), is {_usd(f.unused_cost)} "
        f"({_share(f, 'unused_cost_share')}), idle pods included."
    )


def _straggler_sentence(f: _Findings) -> str:
    slow = f.stragglers
    if len(slow) == 1:
        row = next(slow.itertuples())
        return (
            f"1 rank straggles: rank {row.rank} of {row.cluster_id} at {row.gpu_util_mean:.1f}% "
            f"GPU utilization against its cluster's median of {row.cluster_median:.1f}%."
        )
    if len(slow):
        named = [
            f"rank {row.rank} of {row.cluster_id} at {row.gpu_util_mean:.1f}% "
            f"(median {row.cluster_median:.1f}%)"
            for row in slow.head(MAX_NAMED_STRAGGLERS).itertuples()
        ]
        more = len(slow) - len(named)
        tail = f"; and {more} more (see the table)" if more > 0 else ""
        return (
            f"{len(slow)} ranks straggle, by GPU utilization against their cluster's median: "
            f"{'; '.join(named)}{tail}."
        )
    return "No rank straggles."


def _silent_sentence(f: _Findings) -> str:
    n = len(f.silent)
    if not n:
        return "Every running pod reports metrics."
    return (
        f"{_plural(n, 'running pod')} ({_usd(f.silent_cost)}) "
        f"{'reports' if n == 1 else 'report'} no metrics, so "
        f"{'its' if n == 1 else 'their'} utilization is unknown."
    )


def _not_running_sentence(f: _Findings) -> str | None:
    n = len(f.not_running)
    if not n:
        return None
    states = ", ".join(f"{count} {state}" for state, count in f.states.items())
    return (
        f"{_plural(n, 'pod')} {'is' if n == 1 else 'are'} not running ({states}), "
        f"costing {_usd(f.not_running_cost)}; they are never counted as idle."
    )


def _failed_sentence(f: _Findings) -> str | None:
    if not f.failed:
        return None
    n = len(f.failed)
    return (
        f"{_plural(n, 'cluster')} could not be loaded ({', '.join(f.failed)}: see "
        f"“Could not load”); every figure here leaves {'it' if n == 1 else 'them'} out."
    )


def _sentences(f: _Findings) -> list[str]:
    """The opening paragraph as plain sentences (no markup: escaped by the caller)."""
    out = [
        _cost_sentence(f),
        _idle_sentence(f),
        _unused_sentence(f),
        _straggler_sentence(f),
        _silent_sentence(f),
    ]
    out += [s for s in (_not_running_sentence(f), _failed_sentence(f)) if s is not None]
    if f.uncosted_pods:
        out.append(f"{_plural(f.uncosted_pods, 'pod')} carry no cost and count as 0.")
    return out

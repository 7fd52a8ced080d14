"""One question, one answer, on every path, over random fleets and thresholds.

Hypothesis draws fleets of training clusters (ranks about a typical utilization, tied or
a point apart, with slow, idle and silent ranks among them; missing statuses, missing
metrics, 0-GPU and no-GPU-count pods, missing and zero costs) and the rules' thresholds (idle line, straggler ``z`` and ``min_gap``). The store holds the frame
at T0, the same pods all EXITED at T0+1h, and the frame again at T0+2h (the newest): the
first snapshot stands for exactly one hour (USD/h and USD are the same number), and over
the last hour only the newest snapshot can flag a rank, so a path that leaves it out
answers differently. Then every path must give the live frame's answer:

- which pods are idle: the live frame, History (per pod), the report's window (idle
  time), the plot data;
- which ranks straggle: the live frame, History, the report's window, ``check``'s flags,
  a policy (per cluster), the plot data;
- idle cost and its share of the spend per cluster: the live summary, History, a policy,
  the textfile.
"""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings, strategies as st
from test_rules_live_and_stored import HOUR, T0

from ccanalytics import analysis
from ccanalytics.frames import POD_COLUMNS
from ccanalytics.history import History, check_store, judge_policy, parse_policy, render_textfile
from ccanalytics.history.store._write import append_frame  # the store's append, on purpose
from ccanalytics.measures import Params
from ccanalytics.plots._style import _straggler_ranks
from ccanalytics.report._window import window_findings

_STATUS = st.sampled_from(["RUNNING"] * 6 + [None, "EXITED", "STARTING"])
_OUTLIER = st.sampled_from([0.0, 2.0, 9.0, 15.0, 25.0, 40.0, 55.0, 70.0])


@st.composite
def fleets(draw: st.DrawFn) -> pd.DataFrame:
    """Clusters of 3-9 ranks near a typical utilization, some far below it (stragglers at
    some thresholds, idle at others), some unjudgeable."""
    rows = []
    for cluster in draw(
        st.lists(st.sampled_from(["cl-a", "cl-b", "cl-c"]), min_size=1, max_size=3, unique=True)
    ):
        typical = draw(st.sampled_from([60.0, 80.0, 95.0]))
        for rank in range(draw(st.integers(min_value=3, max_value=9))):
            kind = draw(st.sampled_from(["typical"] * 5 + ["outlier", "outlier", "odd"]))
            util: float | None = typical + draw(st.sampled_from([-1.0, 0.0, 0.0, 1.0]))
            if kind == "outlier":
                util = draw(_OUTLIER)
            gpus: int | None = 8
            if kind == "odd":  # no metrics, no GPUs, or an unknown GPU count
                gpus, util = draw(st.sampled_from([(8, None), (0, None), (None, None), (8, 50.0)]))
            rows.append(
                {
                    "cluster_id": cluster,
                    "pod_id": f"{cluster}-p{rank}",
                    "name": f"{cluster}-p{rank}",
                    "rank": rank if draw(st.booleans()) or kind != "odd" else None,
                    "status": draw(_STATUS),
                    "gpu_type": "H100" if gpus else None,
                    "gpu_count": gpus,
                    "gpu_util_mean": util if gpus else None,
                    "gpu_util_max": None
                    if util is None or not gpus
                    else min(100.0, util + draw(st.sampled_from([0.0, 4.0]))),
                    "cpu_util": 30.0,
                    "cost": draw(st.sampled_from([None, 0.0, 2.32, 17.84, 17.84])),
                }
            )
    frame = pd.DataFrame(rows)
    for name, spec in POD_COLUMNS.items():
        if name not in frame:
            frame[name] = pd.NA
        frame[name] = frame[name].astype(spec.dtype)
    return frame[list(POD_COLUMNS)]


thresholds = st.builds(
    Params,
    idle_threshold=st.sampled_from([0.0, 3.0, 10.0, 20.0, 30.0, 50.0, 100.0]),
    z=st.sampled_from([0.0, 1.0, 3.5]),
    min_gap=st.sampled_from([0.0, 5.0, 10.0, 40.0]),
)


def _pairs(frame: pd.DataFrame, *columns: str) -> set[tuple[object, ...]]:
    return {
        tuple(None if pd.isna(v) else v for v in row)
        for row in frame[list(columns)].itertuples(index=False)
    }


def _cents(value: object) -> float:
    return 0.0 if pd.isna(value) else round(float(value), 2)  # type: ignore[arg-type]


def _policy(params: Params) -> str:
    return (
        f'[[rule]]\nwindow = "1h"\nidle_threshold = {params.idle_threshold}\n'
        f"straggler_z = {params.z}\nmin_gap = {params.min_gap}\n"
        "max_idle_cost = 0\nmax_idle_cost_share = 0\nmax_stragglers = 0\n"
    )


@settings(
    max_examples=examples(10),  # a store, three Histories and a policy each: ~1.3 s
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(frame=fleets(), params=thresholds)
def test_every_path_gives_the_live_answer(frame: pd.DataFrame, params: Params) -> None:
    idle = analysis.idle_pods(frame, params=params)
    slow = analysis.stragglers(frame, params=params)
    summary = analysis.cluster_summary(frame, params=params).set_index("cluster_id")
    idle_ids = set(idle["pod_id"])
    slow_ranks = _pairs(slow, "cluster_id", "rank")

    quiet = frame.assign(status="EXITED").astype({"status": "string"})
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder)
        for instant, pods in ((T0, frame), (T0 + HOUR, quiet), (T0 + 2 * HOUR, frame)):
            append_frame(store, "pods", pods.assign(observed_at=instant))
        with History(store) as h:
            per_pod = h.idle_cost(T0, T0 + HOUR, by="pod", params=params)
            first_hour = h.idle_cost(T0, T0 + HOUR, by="cluster", params=params)
            per_cluster = first_hour.set_index("cluster_id")
            last_hour = h.idle_cost(timedelta(hours=1), by="cluster", params=params)
            stored_slow = h.stragglers(params=params)  # flagged at T0 and T0+2h: 2 of 2
            report = judge_policy(parse_policy(_policy(params)), h)
        window = window_findings(store, timedelta(hours=2), params=params)
        flags = check_store(store, window=timedelta(hours=1), max_stragglers=0, params=params)

    # Idle pods: History (GPU-hours idle), the report's window (idle time), the plot data.
    assert set(per_pod.loc[per_pod["idle_gpu_hours"] > 0, "pod_id"]) == idle_ids
    lives = window.lifetimes
    assert set(lives.loc[lives["idle_time_share"].fillna(0) > 0, "pod_id"]) == idle_ids
    plotted = analysis.judge_pods(frame, params)
    assert set(frame.loc[plotted["idle"].to_numpy(dtype=bool), "pod_id"]) == idle_ids

    # Straggling ranks: History, the report's window, the flags, the plot data.
    assert _pairs(stored_slow, "cluster_id", "rank") == slow_ranks
    assert _pairs(window.stragglers, "cluster_id", "rank") == slow_ranks
    assert {(c, r) for c, r, _ in flags.stragglers} == slow_ranks  # the newest snapshot only
    for cluster_id, cluster in frame[frame["cluster_id"].notna()].groupby("cluster_id"):
        marked = _straggler_ranks(None, cluster, str(cluster_id), params)
        assert {(cluster_id, r) for r in marked} == {p for p in slow_ranks if p[0] == cluster_id}
    # The report's window never calls one rank both straggling and idle.
    idle_ranks = _pairs(idle[idle["rank"].notna()], "cluster_id", "rank")
    assert not (_pairs(window.stragglers, "cluster_id", "rank") & idle_ranks)

    # Per cluster: idle cost and its share of the spend (History over the first hour: the
    # live frame's; a policy over the last hour: History's), the stragglers (the policy,
    # over the last hour: the newest snapshot's, the live frame's), the textfile.
    values = {(j.threshold.figure, j.cluster_id): j.value for j in report.judgements}
    text = render_textfile(report).decode()
    last = last_hour.set_index("cluster_id")
    for cluster_id, row in summary.iterrows():
        assert cluster_id in per_cluster.index  # every cluster is stored, and covered
        stored = per_cluster.loc[cluster_id]
        assert _cents(stored["idle_cost"]) == _cents(row["idle_cost_per_hour"])
        assert _cents(stored["idle_cost_share"]) == _cents(row["idle_cost_share"])
        assert _cents(values["max_idle_cost", cluster_id]) == _cents(
            last.loc[cluster_id, "idle_cost"]
        )
        assert _cents(values["max_idle_cost_share", cluster_id]) == _cents(
            last.loc[cluster_id, "idle_cost_share"]
        )
        assert values["max_stragglers", cluster_id] == row["stragglers"]
        sample = f'ccanalytics_stragglers{{cluster="{cluster_id}",window="1h"}} {float(row["stragglers"])}'
        assert sample in text


def test_params_refuse_what_no_path_can_judge() -> None:
    with pytest.raises(ValueError, match="percent"):
        Params(idle_threshold=101)
    with pytest.raises(ValueError, match="share of snapshots"):
        Params(chronic_share=2)
    with pytest.raises(ValueError, match="0 or more"):
        Params(z=-1)

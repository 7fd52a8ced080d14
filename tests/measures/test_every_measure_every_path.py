"""Every registry measure has one answer on every path, at random thresholds.

Hypothesis draws fleets (with their GPU rows) and every threshold of the registry
(:data:`ccanalytics.measures.THRESHOLDS`), and asks each per-snapshot measure of
:data:`ccanalytics.measures.MEASURES` of every path: the live frame, History's raw
rows, its rollups, the live report (its fleet totals and cards), the report's window
(its totals and cards), ``check``'s flags (every cluster together), a policy (per
cluster) and its textfile. The store holds the fleet
at T0 and again at T0+1h, so the first snapshot stands for exactly the hour (USD/h and
USD are the same number). A measure of a new kind, or one a path leaves out, fails it.
"""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path

from examples import examples
from history_helpers import pod_row, pods_table
from hypothesis import HealthCheck, given, settings, strategies as st

from ccanalytics import analysis
from ccanalytics.frames import POD_COLUMNS
from ccanalytics.history import History, parse_policy
from ccanalytics.measures import Params
from ccanalytics.report._window import window_findings

TIMES = ("2026-11-20 10:00",)


#: Values each threshold is drawn from, by its unit (a unit without values fails here).
_VALUES = {
    "percent": [0.0, 5.0, 10.0, 30.0, 50.0, 95.0, 100.0],
    "z": [0.0, 1.0, 3.5],
    "points": [0.0, 5.0, 10.0, 40.0],
    "share": [0.5, 1.0],  # of two identical snapshots, a flagged rank straggles in both
}
#: The kinds judged per pod snapshot, which every path below answers.
_PER_SNAPSHOT = ("sum", "share", "waste", "count")
#: The kinds answered elsewhere: spend and budgets over calendar periods (test_spend,
#: test_budget_tiers), an hour against past weeks (test_spend_anomalies), a pod's time.
_ELSEWHERE = ("spend", "judgement", "anomaly", "pod_share", "backtest")
_UTIL = st.sampled_from([0.0, 3.0, 8.0, 15.0, 40.0, 60.0, 90.0, 97.0, 100.0])
_MEMORY = st.one_of(st.none(), st.sampled_from([0.0, 9.0, 10.0, 50.0, 95.0, 96.0, 100.0]))


def _registry_thresholds() -> st.SearchStrategy[Params]:
    from ccanalytics.measures import THRESHOLDS

    return st.builds(Params, **{t.name: st.sampled_from(_VALUES[t.unit.name]) for t in THRESHOLDS})


@st.composite
def _fleets(draw: st.DrawFn) -> tuple[object, object]:
    """Pods of 1-2 clusters (ranks about a typical utilization, slow, idle, saturated,
    silent, stopped ones among them) and their GPU rows: the least busy GPU at the pod's
    minimum, the others at its maximum, so both tables tell the same story."""
    pods, gpus = [], []
    for cluster in draw(st.lists(st.sampled_from(["cl-a", "cl-b"]), min_size=1, unique=True)):
        for rank in range(draw(st.integers(min_value=1, max_value=6))):
            count = draw(st.sampled_from([8, 8, 1, 0]))
            low, high = sorted((draw(_UTIL), draw(_UTIL)))
            silent = count == 0 or draw(st.integers(0, 5)) == 0
            pod_id = f"{cluster}-p{rank}"
            pods.append(
                pod_row(
                    cluster,
                    TIMES[0],
                    pod_id,
                    rank=rank,
                    status=draw(st.sampled_from(["RUNNING"] * 5 + ["EXITED", None])),
                    gpu_count=count,
                    cost=draw(st.sampled_from([None, 0.0, 2.32, 17.84])),
                    gpu_util_mean=None if silent else (low + high * (count - 1)) / count,
                    gpu_util_max=None if silent else high,
                    gpu_util_min=None if silent else low,
                    gpu_mem_util_max=None if silent else draw(_MEMORY),
                )
            )
            for index in range(0 if silent else count):
                util = low if index == 0 else high
                gpus.append(
                    {"cluster_id": cluster, "pod_id": pod_id, "gpu_index": index, "util": util}
                )
    return pods_table(pods)[list(POD_COLUMNS)], gpus


def _gpu_frame(rows: list[dict[str, object]], at: object) -> object:
    import pandas as pd

    from ccanalytics.frames import GPU_COLUMNS

    frame = pd.DataFrame(rows, columns=["cluster_id", "pod_id", "gpu_index", "util"])
    for name, spec in GPU_COLUMNS.items():
        frame[name] = frame[name].astype(spec.dtype) if name in frame else pd.NA
        frame[name] = frame[name].astype(spec.dtype)
    stamp = pd.Timestamp(at)  # type: ignore[arg-type]
    return frame[list(GPU_COLUMNS)].assign(
        observed_at=stamp if stamp.tzinfo else stamp.tz_localize("UTC")
    )


def _close(value: object, expected: object) -> bool:
    import math

    import pandas as pd

    a = 0.0 if value is None or pd.isna(value) else float(value)  # type: ignore[arg-type]
    b = 0.0 if expected is None or pd.isna(expected) else float(expected)  # type: ignore[arg-type]
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def _number(value: object) -> float:
    """A figure as a card shows it: NULL (no denominator) as 0."""
    import pandas as pd

    return 0.0 if value is None or pd.isna(value) else float(value)  # type: ignore[arg-type]


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


@settings(
    max_examples=examples(6),  # a store, compacted, and six paths over it: ~3 s each
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(fleet=_fleets(), params=_registry_thresholds())
def test_every_registry_measure_has_one_answer_on_every_path(
    fleet: tuple[object, object], params: Params
) -> None:
    import pandas as pd

    from ccanalytics.history import check_store, compact, judge_policy, render_textfile
    from ccanalytics.history.alerts._judge import ALL_CLUSTERS
    from ccanalytics.history.alerts._textfile import _BASE_UNITS
    from ccanalytics.history.store._write import append_frame
    from ccanalytics.measures import MEASURES, THRESHOLDS, sum_shares
    from ccanalytics.report._findings import _findings
    from ccanalytics.report._sections import _Report, live_cards
    from ccanalytics.report._window import window_cards

    frame, gpu_rows = fleet
    assert isinstance(frame, pd.DataFrame) and isinstance(gpu_rows, list)
    measures = [m for m in MEASURES if m.kind in _PER_SNAPSHOT]
    assert all(m.kind in (*_PER_SNAPSHOT, *_ELSEWHERE) for m in MEASURES)  # a new kind: here
    assert all(m.live for m in measures)  # the live frame answers each one

    live_gpus = _gpu_frame(gpu_rows, TIMES[0])
    live = analysis.cluster_summary(frame, params=params, gpus=live_gpus).set_index("cluster_id")
    found = _findings(frame, params, None, live_gpus)
    page = _Report(frame, live_gpus, found, "fleet", None, None, 0)
    live_shown = {label: (shown, flagged) for label, shown, _, flagged in live_cards(page)}
    live_waste = next(note for label, _, note, _ in live_cards(page) if label == "waste by class")
    keys = [m.policy_key for m in measures if m.policy_key]
    # What the rollups answer (sums and their shares), asked of History.measures; every
    # other summable measure (the waste classes, their sum and share) of History.waste.
    rolled_up = [m for m in measures if m.kind == "sum" or m in sum_shares()]
    sums = [m.name for m in rolled_up]
    knobs = "".join(f"{t.policy_key} = {getattr(params, t.name)!r}\n" for t in THRESHOLDS)
    rule = '[[rule]]\nwindow = "1h"\n' + knobs + "".join(f"{k} = 0\n" for k in keys)
    hour = pd.Timedelta(hours=1)
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder)
        t0 = pd.Timestamp(TIMES[0], tz="UTC")
        for at in (t0, t0 + hour):  # the first snapshot stands for the hour: USD/h = USD
            append_frame(store, "pods", frame.assign(observed_at=at))
            append_frame(store, "gpus", _gpu_frame(gpu_rows, at))
        with History(store) as h:
            raw = h.measures(sums, t0, t0 + hour, by="cluster", params=params)
            raw = raw.set_index("cluster_id")
            waste = h.waste(t0, t0 + hour, by="cluster", params=params).set_index("cluster_id")
            slow = h.stragglers(timedelta(hours=1), min_share=params.chronic_share, params=params)
            defaults = h.measures(sums, t0, t0 + hour, by="cluster").set_index("cluster_id")
            policy = judge_policy(parse_policy(rule), h)
        window = window_findings(store, timedelta(hours=1), params=params)
        flags = check_store(
            store, window=timedelta(hours=1), params=params, limits=dict.fromkeys(keys, 0)
        )
        compact(store, TIMES[0][:10])
        with History(store) as h:
            rolled = h.measures(sums, t0, t0 + hour, by="cluster").set_index("cluster_id")
            assert int(h.sql("SELECT days FROM _rolled_days")["days"].iloc[0]) == 1

    judged = {(j.threshold.figure, j.cluster_id): j.value for j in policy.judgements}
    assert flags.report is not None
    pooled = {j.threshold.figure: j.value for j in flags.report.judgements}
    assert {j.cluster_id for j in flags.report.judgements} == {ALL_CLUSTERS}
    text = render_textfile(policy).decode()
    cards = {label: shown for label, shown, _, _ in window_cards(window)}
    clusters = list(live.index)
    for m in measures:
        mine = live[m.live]
        if m.kind == "count":
            counted = slow["cluster_id"].value_counts()
            stored = {c: counted.get(c, 0) for c in clusters}
        else:
            table = raw if m in rolled_up else waste
            stored = {c: table.loc[c, m.name] for c in clusters}
        for c in clusters:  # History's raw rows, per cluster
            assert _close(stored[c], mine[c]), (m.name, c, "History", stored[c], mine[c])
        if m in rolled_up:  # the rollups, at the default thresholds
            for c in clusters:
                assert _close(rolled.loc[c, m.name], defaults.loc[c, m.name]), (m.name, c)
        fleet_value: object
        if m.kind == "share":
            by = {x.name: x for x in MEASURES}
            num, den = by[str(m.numerator)], by[str(m.denominator)]
            fleet_value = _ratio(live[num.live].sum(), live[den.live].sum())
        else:
            fleet_value = mine.sum()
        # The live report: the fleet's figure, and its card when marked (the waste
        # classes: each in the one waste card's note when it wastes anything).
        assert _close(found.totals[m.live], fleet_value), (m.name, "live report")
        shown_live = m.format_live(_number(found.totals[m.live]))
        if m.card and m.kind == "waste":
            assert (f"{m.label} {shown_live}" in live_waste) == (shown_live != "0.00 USD/h")
        elif m.card:
            assert live_shown[m.label][0] == shown_live, (m.name, "live card")
        # The report's window: its totals, and a card when marked.
        assert _close(window.totals[m.name], fleet_value), (m.name, "report")
        if m.card:
            assert cards[m.label] == m.format(_number(window.totals[m.name])), m.name
        if not m.policy_key:
            continue
        assert _close(pooled[m.policy_key], fleet_value), (m.name, "flags")
        for c in clusters:  # a policy, per cluster, and its textfile
            assert _close(judged[m.policy_key, c], mine[c]), (m.name, c, "policy")
            if m.metric is not None:
                sample = f'ccanalytics_{m.metric.name}{{cluster="{c}",window="1h"}} '
                line = next(x for x in text.splitlines() if x.startswith(sample))
                factor = _BASE_UNITS[m.unit][1]  # hours are written as seconds
                assert _close(float(line.split()[-1]), mine[c] * factor), (m.name, c, "textfile")

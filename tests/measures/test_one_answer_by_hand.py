"""One question, one answer: every path judges with the same thresholds, and gives every
registry measure the same value.

The property test at the end draws fleets and every threshold of the registry, and
asks each registry measure of every path: the live frame, History's raw rows, its
rollups, the report's window (and its cards), ``check``'s flags, a policy and its
textfile. A measure of a new kind, or one a path leaves out, fails it.

Each test is one of the defects the issue found, numbers by hand:

- five ranks at 90, 90, 90, 90 and 15 % with an idle threshold of 20: rank 4 is idle,
  and the four others are alike, so nothing straggles, live, in History and in the
  report's window (which must never call one rank both straggling and idle);
- ``check``'s flags and a policy with the same window and limit count the same ranks
  (the policy left out the newest snapshot);
- the rank plot at a threshold marks the stragglers ``analysis.stragglers`` finds there.
"""

from __future__ import annotations

import tempfile
import warnings
from datetime import timedelta
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from examples import examples
from history_helpers import pod_row, pods_table, write_store
from hypothesis import HealthCheck, given, settings, strategies as st
from matplotlib.colors import to_hex

from ccanalytics import analysis, plots
from ccanalytics.frames import POD_COLUMNS
from ccanalytics.history import History, check, parse_policy
from ccanalytics.measures import Params
from ccanalytics.plots import COLORS
from ccanalytics.report._window import window_findings

TIMES = ("2026-11-20 10:00", "2026-11-20 10:30", "2026-11-20 11:00")


def _ranks(t: str, utils: list[float], cluster: str = "cl-a") -> list[dict[str, object]]:
    return [
        pod_row(cluster, t, f"{cluster}-r{rank}", rank=rank, gpu_util_mean=u, gpu_util_max=u)
        for rank, u in enumerate(utils)
    ]


@pytest.fixture
def four_busy_one_at_15(tmp_path: Path) -> Path:
    write_store(tmp_path, [row for t in TIMES for row in _ranks(t, [90, 90, 90, 90, 15])])
    return tmp_path


def test_a_rank_below_the_threshold_is_idle_on_every_path_and_never_a_straggler(
    four_busy_one_at_15: Path,
) -> None:
    store = four_busy_one_at_15
    live = pods_table(_ranks(TIMES[-1], [90, 90, 90, 90, 15]))
    assert analysis.stragglers(live, idle_threshold=20).empty
    assert analysis.idle_pods(live, idle_threshold=20)["rank"].tolist() == [4]
    with History(store) as h:
        assert h.stragglers(idle_threshold=20, min_share=0.0)["flagged"].sum() == 0
        idle = h.idle_cost(by="pod", idle_threshold=20)
        assert idle.loc[idle["idle_cost"] > 0, "rank"].tolist() == [4]
        # At the default 10 %, rank 4 (15 %) is judged, and 75 points below the others.
        assert h.stragglers()["rank"].tolist() == [4]
    found = window_findings(store, timedelta(hours=1), idle_threshold=20)
    assert found.stragglers.empty and found.runs.empty
    mostly_idle = found.lifetimes[found.lifetimes["idle_time_share"] >= 0.5]
    assert mostly_idle["rank"].tolist() == [4]


@pytest.mark.slow
def test_the_window_report_straggles_and_idles_no_rank_at_any_threshold(
    four_busy_one_at_15: Path,
) -> None:
    for threshold in (5.0, 10.0, 20.0, 50.0, 95.0):
        found = window_findings(four_busy_one_at_15, timedelta(hours=1), idle_threshold=threshold)
        slow = {
            (c, int(r))
            for c, r in zip(found.stragglers["cluster_id"], found.stragglers["rank"], strict=True)
        }
        idle = found.lifetimes[found.lifetimes["idle_time_share"].fillna(0) > 0]
        assert not slow & {
            (c, int(r)) for c, r in zip(idle["cluster_id"], idle["rank"], strict=True)
        }


def test_the_flags_and_a_policy_judge_the_same_snapshots(tmp_path: Path) -> None:
    # Rank 4 straggles at 10:00 only. Over the hour to 11:00 it is flagged in 1 of the 3
    # snapshots (the newest counts): under half, so neither the flags nor the policy
    # count it. Left without the newest, the policy saw 1 of 2 and counted it.
    rows = _ranks(TIMES[0], [90, 90, 90, 90, 40])
    rows += [row for t in TIMES[1:] for row in _ranks(t, [90, 90, 90, 90, 90])]
    write_store(tmp_path, rows)
    flags = check(tmp_path, window=timedelta(hours=1), max_stragglers=0)
    policy = parse_policy('[[rule]]\nwindow = "1h"\nmax_stragglers = 0\n')
    judged = check(tmp_path, policy=policy)
    assert flags.thresholds is not None and flags.thresholds.stragglers == []
    assert judged.policy is not None
    assert [j.value for j in judged.policy.judgements] == [0.0]
    assert flags.breached is judged.breached is False


def test_check_and_a_policy_take_the_rules_thresholds(four_busy_one_at_15: Path) -> None:
    store = four_busy_one_at_15
    # At 10 % rank 4 straggles in every snapshot; at 20 % it is idle, not straggling.
    assert check(store, max_stragglers=0).breached
    assert not check(store, max_stragglers=0, params=Params(idle_threshold=20)).breached
    strict = parse_policy("[[rule]]\nmax_stragglers = 0\n")
    loose = parse_policy("[[rule]]\nidle_threshold = 20\nmax_stragglers = 0\n")
    assert check(store, policy=strict).breached
    assert not check(store, policy=loose).breached


def test_the_old_policy_key_warns_and_means_the_idle_cost_share() -> None:
    with pytest.warns(DeprecationWarning, match="max_idle_share is now max_idle_cost_share"):
        policy = parse_policy("[[rule]]\nmax_idle_share = 0.25\n")
    assert [t.figure for t in policy.rules[0].thresholds] == ["max_idle_cost_share"]


def test_the_rank_plot_marks_the_stragglers_found_at_its_threshold() -> None:
    # 80 x 4, 50 and 15 x 4. At 10 % all nine are judged: median 50, MAD 30, so the
    # 15s are 35 points below but z = -0.79: nothing straggles. At 20 % the 15s are idle
    # and the 50 is 30 points below four alike ranks (MAD 0): rank 4 straggles.
    frame = pods_table(_ranks(TIMES[0], [80, 80, 80, 80, 50, 15, 15, 15, 15]))
    assert analysis.stragglers(frame).empty
    assert analysis.stragglers(frame, idle_threshold=20)["rank"].tolist() == [4]
    _, ax = plt.subplots()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plots.utilization_by_rank(frame, cluster_id="cl-a", idle_threshold=20, ax=ax)
    bars = next(c for c in ax.containers if c.get_label() == "_gpu bars").patches
    slow = [
        i for i, b in enumerate(bars) if to_hex(b.get_facecolor()) == COLORS["straggler"].lower()
    ]
    plt.close("all")
    assert slow == [4]


def test_the_accessor_refuses_what_the_function_refuses() -> None:
    frame = pods_table(_ranks(TIMES[0], [5, 90]))
    with pytest.raises(TypeError, match="pass idle_threshold= only"):
        frame.cc.idle_pods(threshold=20, idle_threshold=20)
    with pytest.warns(DeprecationWarning, match="threshold= is now idle_threshold=") as caught:
        frame.cc.idle_pods(threshold=20)
    assert caught[0].filename == __file__  # the warning names the caller's line


def test_three_shares_three_names(four_busy_one_at_15: Path) -> None:
    cpu = pod_row("cl-a", TIMES[-1], "cpu", gpu_count=0, gpu_util_mean=None, cost=5.0)
    live = pods_table([*_ranks(TIMES[-1], [90, 90, 90, 90, 15]), {**cpu, "gpu_util_max": None}])
    row = analysis.cluster_summary(live, idle_threshold=20).iloc[0]
    # 5 GPU pods at 1 USD/h, one idle, plus a 5 USD/h CPU pod: 1/10 of all, 1/5 of GPU.
    assert row["idle_cost_share"] == pytest.approx(0.1)
    assert row["idle_gpu_cost_share"] == pytest.approx(0.2)
    with History(four_busy_one_at_15) as h:
        total = h.idle_cost(by=None, idle_threshold=20).iloc[0]
        assert total["idle_cost_share"] == pytest.approx(0.2)  # no CPU pod stored
        assert total["idle_gpu_cost_share"] == pytest.approx(0.2)
        lives = h.pod_lifetimes(idle_threshold=20)
        assert lives.loc[lives["rank"].eq(4), "idle_time_share"].tolist() == [1.0]
    assert "idle_share" not in row.index


# ---- every registry measure, every path ------------------------------------------------

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
_ELSEWHERE = ("spend", "judgement", "anomaly", "pod_share")
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
    from ccanalytics.history.store._write import append_frame
    from ccanalytics.measures import MEASURES, THRESHOLDS
    from ccanalytics.report._window import _registry_cards

    frame, gpu_rows = fleet
    assert isinstance(frame, pd.DataFrame) and isinstance(gpu_rows, list)
    measures = [m for m in MEASURES if m.kind in _PER_SNAPSHOT]
    assert all(m.kind in (*_PER_SNAPSHOT, *_ELSEWHERE) for m in MEASURES)  # a new kind: here
    assert all(m.live for m in measures)  # the live frame answers each one

    live_gpus = _gpu_frame(gpu_rows, TIMES[0])
    live = analysis.cluster_summary(frame, params=params, gpus=live_gpus).set_index("cluster_id")
    keys = [m.policy_key for m in measures if m.policy_key]
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
            raw = h.idle_cost(t0, t0 + hour, by="cluster", params=params).set_index("cluster_id")
            waste = h.waste(t0, t0 + hour, by="cluster", params=params).set_index("cluster_id")
            slow = h.stragglers(timedelta(hours=1), min_share=params.chronic_share, params=params)
            defaults = h.idle_cost(t0, t0 + hour, by="cluster").set_index("cluster_id")
            policy = judge_policy(parse_policy(rule), h)
        window = window_findings(store, timedelta(hours=1), params=params)
        flags = check_store(
            store, window=timedelta(hours=1), params=params, limits=dict.fromkeys(keys, 0)
        )
        compact(store, TIMES[0][:10])
        with History(store) as h:
            rolled = h.idle_cost(t0, t0 + hour, by="cluster").set_index("cluster_id")
            assert int(h.sql("SELECT days FROM _rolled_days")["days"].iloc[0]) == 1

    judged = {(j.threshold.figure, j.cluster_id): j.value for j in policy.judgements}
    assert flags.report is not None
    pooled = {j.threshold.figure: j.value for j in flags.report.judgements}
    assert {j.cluster_id for j in flags.report.judgements} == {ALL_CLUSTERS}
    text = render_textfile(policy).decode()
    cards = {label: shown for label, shown, _, _ in _registry_cards(window)}
    clusters = list(live.index)
    for m in measures:
        mine = live[m.live]
        if m.kind == "count":
            counted = slow["cluster_id"].value_counts()
            stored = {c: counted.get(c, 0) for c in clusters}
        else:
            table = waste if m.kind == "waste" else raw
            stored = {c: table.loc[c, m.name] for c in clusters}
        for c in clusters:  # History's raw rows, per cluster
            assert _close(stored[c], mine[c]), (m.name, c, "History", stored[c], mine[c])
        if m.kind in ("sum", "share"):  # the rollups, at the default thresholds
            for c in clusters:
                assert _close(rolled.loc[c, m.name], defaults.loc[c, m.name]), (m.name, c)
        fleet_value: object
        if m.kind == "share":
            by = {x.name: x for x in MEASURES}
            num, den = by[str(m.numerator)], by[str(m.denominator)]
            fleet_value = _ratio(live[num.live].sum(), live[den.live].sum())
        else:
            fleet_value = mine.sum()
        if m.kind != "count":  # the report's window: its totals, and a card when marked
            assert _close(window.totals[m.name], fleet_value), (m.name, "report")
            if m.card:
                assert cards[m.label] == m.format(float(window.totals[m.name] or 0.0))
        if not m.policy_key:
            continue
        assert _close(pooled[m.policy_key], fleet_value), (m.name, "flags")
        for c in clusters:  # a policy, per cluster, and its textfile
            assert _close(judged[m.policy_key, c], mine[c]), (m.name, c, "policy")
            if m.metric is not None:
                sample = f'ccanalytics_{m.metric.name}{{cluster="{c}",window="1h"}} '
                line = next(x for x in text.splitlines() if x.startswith(sample))
                assert _close(float(line.split()[-1]), mine[c]), (m.name, c, "textfile")

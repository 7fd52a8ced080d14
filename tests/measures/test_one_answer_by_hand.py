"""One question, one answer: every path judges with the same thresholds.

Each test is one defect where the paths once disagreed, numbers by hand:

- five ranks at 90, 90, 90, 90 and 15 % with an idle threshold of 20: rank 4 is idle,
  and the four others are alike, so nothing straggles, live, in History and in the
  report's window (which must never call one rank both straggling and idle);
- ``check``'s flags and a policy with the same window and limit count the same ranks
  (the policy left out the newest snapshot);
- the rank plot at a threshold marks the stragglers ``analysis.stragglers`` finds there.
"""

from __future__ import annotations

import warnings
from datetime import timedelta
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from history_helpers import pod_row, pods_table, write_store
from matplotlib.colors import to_hex

from ccanalytics import analysis, plots
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
        of_gpus = h.measures("idle_gpu_cost_share", by=None, params=Params(idle_threshold=20))
        assert of_gpus["idle_gpu_cost_share"].tolist() == [pytest.approx(0.2)]
        lives = h.pod_lifetimes(idle_threshold=20)
        assert lives.loc[lives["rank"].eq(4), "idle_time_share"].tolist() == [1.0]
    assert "idle_share" not in row.index

"""History.measures: any registry sum or share, split by any declared dimensions.

The store is :mod:`waste_store`'s (two hours, each snapshot standing for one hour); every
figure below is computed by hand from its docstring:

- spend per hour: cl-a 21.00 (empty 2, loaded 4, half 6, low 3, busy 5, silent 1, gone
  0), cl-b 40.00 (five ranks at 8): 61.00 an hour, 122.00 over the two hours;
- by GPU type over the two hours: L40S (empty, silent, gone) 2 x 3.00 = 6.00, A100
  (loaded, low) 2 x 7.00 = 14.00, H100 (half, busy, cl-b's ranks) 2 x 51.00 = 102.00;
- idle (busiest GPU below 10 %): empty 2 x 2.00 = 4.00 (L40S), loaded 2 x 4.00 = 8.00
  (A100); so idle_cost_share is 4/6 for L40S, 8/14 for A100, 0 for H100;
- straggler_cost: cl-b's rank 4 only, 2 x 8 x 40/100 = 6.40.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from history_helpers import pod_row, write_crash_leftover, write_store
from waste_store import A100, H100, L40S, write_waste_store

from ccanalytics.errors import ArgumentsError
from ccanalytics.history import History, parse_teams
from ccanalytics.measures import MEASURES
from ccanalytics.measures._dimensions import DIMENSIONS

TEAMS = parse_teams(
    '[[team]]\nname = "research"\nclusters = "cl-a"\npods = ["empty", "loaded"]\n'
    '[[team]]\nname = "training"\nclusters = "cl-b"\n'
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_waste_store(tmp_path_factory.mktemp("measures"))


def test_by_gpu_type_by_hand(store: Path) -> None:
    with History(store) as h:
        got = h.measures(["total_cost", "idle_cost", "idle_cost_share"], by="gpu_type")
    assert list(got.columns) == [
        "gpu_type",
        "pod_hours",
        "total_cost",
        "idle_cost",
        "idle_cost_share",
    ]
    rows = got.set_index("gpu_type")
    assert rows["total_cost"].to_dict() == pytest.approx({A100: 14.0, H100: 102.0, L40S: 6.0})
    assert rows["idle_cost"].to_dict() == pytest.approx({A100: 8.0, H100: 0.0, L40S: 4.0})
    assert rows.loc[L40S, "idle_cost_share"] == pytest.approx(4 / 6)
    assert rows.loc[A100, "idle_cost_share"] == pytest.approx(8 / 14)
    assert rows.loc[H100, "idle_cost_share"] == 0.0
    assert str(got["gpu_type"].dtype) == "string"
    assert all(str(got[c].dtype) == "Float64" for c in got.columns[1:])


def test_by_gpu_type_and_hour_cuts_each_hour(store: Path) -> None:
    with History(store) as h:
        got = h.measures("total_cost", by=["hour", "gpu_type"])
    assert list(got.columns[:2]) == ["gpu_type", "hour"]  # the registry's order of dimensions
    assert got["hour"].dtype == "datetime64[ns, UTC]"
    per_hour = got.groupby("hour")["total_cost"].sum()
    assert per_hour.index.tolist() == [
        pd.Timestamp("2026-11-20 10:00", tz="UTC"),
        pd.Timestamp("2026-11-20 11:00", tz="UTC"),
    ]
    assert per_hour.tolist() == pytest.approx([61.0, 61.0])


def test_a_waste_class_by_rank(store: Path) -> None:
    with History(store) as h:
        got = h.measures("straggler_cost", by="rank")
    flagged = got[got["straggler_cost"] > 0]
    assert flagged[["cluster_id", "rank"]].values.tolist() == [["cl-b", 4]]
    assert flagged["straggler_cost"].iloc[0] == pytest.approx(6.40)


def test_by_team_sums_each_team_and_takes_its_share_of_its_sums(store: Path) -> None:
    with History(store) as h:
        got = h.measures(["total_cost", "idle_cost", "idle_cost_share"], by="team", teams=TEAMS)
    rows = got.set_index("team")
    # research: empty and loaded, 2 x 6.00 all idle; training: cl-b, 80.00;
    # unallocated: the rest of cl-a, 2 x 15.00.
    assert rows["total_cost"].to_dict() == pytest.approx(
        {"research": 12.0, "training": 80.0, "unallocated": 30.0}
    )
    assert rows["idle_cost"].to_dict() == pytest.approx(
        {"research": 12.0, "training": 0.0, "unallocated": 0.0}
    )
    assert rows.loc["research", "idle_cost_share"] == 1.0


def test_the_views_are_measures(store: Path) -> None:
    """idle_cost and waste are measures' frames: the same numbers, column for column."""
    with History(store) as h:
        idle = h.idle_cost(by="cluster")
        same = h.measures(
            [
                c
                for c in idle.columns
                if c not in ("cluster_id", "observed_hours", "unobserved_hours")
            ],
            by="cluster",
        )
        waste = h.waste(by="pod")
        classes = [m.name for m in MEASURES if m.kind == "waste"]
        parts = h.measures(["total_cost", *classes], by="pod")
    pd.testing.assert_frame_equal(idle, same)
    pd.testing.assert_frame_equal(waste[parts.columns], parts)


@pytest.mark.parametrize("period", ["hour", "day"])
def test_showback_is_a_view_of_measures_by_pod_and_period(store: Path, period: str) -> None:
    """Showback's figures are measures' by pod and period, renamed: the same numbers."""
    classes = [m.name for m in MEASURES if m.kind == "waste"]
    renamed = {
        "cost": "total_cost",
        "idle_cost": "idle_cost",
        "unused_cost": "unused_cost",
        "idle_hours": "idle_pod_hours",
        "observed_hours": "pod_hours",
        **{c: c for c in classes},
    }
    with History(store) as h:
        rows = h.showback(by=period)  # type: ignore[arg-type]
        asked = [m for m in renamed.values() if m != "pod_hours"]
        same = h.measures([*asked, "gpu_utilization"], by=["pod", period])
    keys = ["cluster_id", "pod_id", "name", "rank", "gpu_type", "gpu_count"]
    rows = rows.sort_values(["cluster_id", "pod_id", "period_start"]).reset_index(drop=True)
    same = same.sort_values(["cluster_id", "pod_id", period]).reset_index(drop=True)
    pd.testing.assert_frame_equal(rows[keys], same[keys])
    # Each period's start is the hour's or day's, clipped to the window's (an hour's here).
    floor = rows["period_start"].dt.floor("D" if period == "day" else "h")
    assert (floor == same[period]).all()
    for column, measure in renamed.items():
        assert rows[column].tolist() == same[measure].tolist(), column
    percent = same["gpu_utilization"] * 100
    assert rows["gpu_util_mean"].isna().tolist() == percent.isna().tolist()
    assert rows["gpu_util_mean"].dropna().tolist() == percent.dropna().tolist()


@pytest.mark.parametrize(("freq", "period"), [("1h", "hour"), ("1d", "day")])
def test_utilization_buckets_are_the_registrys_gpu_utilization(
    store: Path, freq: str, period: str
) -> None:
    """utilization's mean per pod and bucket is measures' gpu_utilization there, in percent."""
    with History(store) as h:
        buckets = h.utilization(freq=freq, by="pod")
        same = h.measures(["gpu_utilization"], by=["pod", period])
    seen = buckets.dropna(subset=["gpu_util_mean"]).set_index(["cluster_id", "pod_id", "time"])
    percent = same.set_index(["cluster_id", "pod_id", period])["gpu_utilization"].dropna() * 100
    percent.index = percent.index.set_names(seen.index.names)
    assert len(seen) == len(percent) > 0
    np.testing.assert_allclose(
        seen["gpu_util_mean"].to_numpy(float), percent.loc[seen.index].to_numpy(float), rtol=1e-12
    )


def test_the_time_and_utilization_sums_by_hand(tmp_path: Path) -> None:
    """One hour (snapshots at 00:00 and 01:00), five pods:

    - ``busy``: 8 GPUs reporting at 40 %: 8 GPU-hours reporting, 8 x 0.40 = 3.2 used;
    - ``wide``: 2 GPUs, count reporting unknown (so all 2) at 90 %: 2 reporting, 1.8 used;
    - ``idle``: 1 GPU at 4 % (busiest 5 %): 1 reporting, 0.04 used, idle and judged;
    - ``maxonly``: 1 GPU, only its busiest GPU (3 %) known: idle, so judged, never
      reporting a mean (no GPU-hours reporting or used);
    - ``cpu``: no GPUs: none of these.

    idle_pod_hours 2, judged_pod_hours 4, reporting 11, used 5.04, so gpu_utilization
    5.04 / 11; per pod, the share is the pod's own mean.
    """
    at = ("2026-11-02T00:00", "2026-11-02T01:00")
    pods = {
        "busy": {"gpus_reporting": 8, "gpu_util_mean": 40.0, "gpu_util_max": 45.0},
        "wide": {"gpu_count": 2, "gpu_util_mean": 90.0, "gpu_util_max": 95.0},
        "idle": {"gpu_count": 1, "gpu_util_mean": 4.0, "gpu_util_max": 5.0},
        "maxonly": {"gpu_count": 1, "gpu_util_mean": None, "gpu_util_max": 3.0},
        "cpu": {"gpu_count": 0, "gpu_util_mean": None, "gpu_util_max": None},
    }
    write_store(tmp_path, [pod_row("cl-a", t, pod, **v) for t in at for pod, v in pods.items()])
    names = [
        "idle_pod_hours",
        "judged_pod_hours",
        "reporting_gpu_hours",
        "used_gpu_hours",
        "gpu_utilization",
    ]
    with History(tmp_path) as h:
        whole = h.measures(names, by=None).iloc[0]
        per_pod = h.measures(names, by="pod").set_index("pod_id")
    assert whole[names[:3]].tolist() == [2.0, 4.0, 11.0]
    assert whole["used_gpu_hours"] == pytest.approx(5.04, abs=1e-12)
    assert whole["gpu_utilization"] == pytest.approx(5.04 / 11, abs=1e-12)
    share = per_pod["gpu_utilization"]
    assert share[["busy", "wide", "idle"]].round(12).tolist() == [0.4, 0.9, 0.04]
    assert share[["maxonly", "cpu"]].isna().all()  # no GPU-hours reporting: no share
    assert per_pod.loc["maxonly", names[:3]].tolist() == [1.0, 1.0, 0.0]
    assert per_pod.loc["cpu", names[:4]].tolist() == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "by",
    [
        list(combo)
        for size in (1, 2)
        for combo in itertools.combinations([d.name for d in DIMENSIONS], size)
        if not {"day", "hour"} <= set(combo)
    ],
)
def test_every_split_sums_to_the_whole(store: Path, by: list[str]) -> None:
    names = [m.name for m in MEASURES if m.kind in ("sum", "waste")]
    with History(store) as h:
        whole = h.measures(names, by=None).iloc[0]
        split = h.measures(names, by=by, teams=TEAMS)
    assert whole["total_cost"] == pytest.approx(122.0)
    for name in names:
        assert float(split[name].sum()) == pytest.approx(float(whole[name]), abs=1e-9), name


def test_no_split_over_an_empty_store_is_one_row_of_zeros(tmp_path: Path) -> None:
    with History(write_crash_leftover(tmp_path)) as h:
        whole = h.measures(["straggler_cost", "idle_cost_share"], by=None)
        split = h.measures("straggler_cost", by="gpu_type")
    assert whole["straggler_cost"].tolist() == [0.0]
    assert whole["idle_cost_share"].isna().all()  # no spend: no share
    assert split.empty and list(split.columns) == ["gpu_type", "pod_hours", "straggler_cost"]


@pytest.mark.parametrize(
    ("names", "by", "error", "match"),
    [
        ("no_such_measure", "cluster", ValueError, "no measure 'no_such_measure'"),
        ("spent", "cluster", ValueError, "History.spend answers it"),
        ("stragglers", "day", ValueError, "per cluster or over the fleet"),
        ("total_cost", "weekday", ValueError, "no dimension 'weekday'"),
        ("total_cost", ["day", "hour"], ArgumentsError, "one time dimension"),
        ("total_cost", "team", ArgumentsError, "needs a team mapping: teams="),
        ([], "cluster", ValueError, "names no measure"),
    ],
)
def test_bad_arguments_say_what_is_wrong(
    store: Path, names: object, by: object, error: type[Exception], match: str
) -> None:
    with History(store) as h, pytest.raises(error, match=match):
        h.measures(names, by=by)  # type: ignore[arg-type]

"""Showback's waste by class: the registry's classes, per pod per UTC period.

Each showback row carries the USD of each waste class over its period, from the same
per-snapshot classification :meth:`History.waste` runs (``waste_rows_ctes``), so that
per pod and per cluster the rows sum to ``History.waste`` over the window, to the cent.
Hand stores first (every number computed in the docstrings), then random stores.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings, strategies as st
from waste_store import A100, H100, L40S, pod, write_listings, write_waste_store

from ccanalytics.history import SHOWBACK_COLUMNS, History, to_focus
from ccanalytics.measures import Params, waste_classes

CENT = 0.005
CLASSES = tuple(m.name for m in waste_classes())


def test_the_class_columns_are_the_registrys() -> None:
    assert CLASSES == (
        "idle_empty_cost",
        "idle_loaded_cost",
        "straggler_cost",
        "idle_gpus_cost",
        "low_compute_cost",
    )
    assert set(CLASSES) | {"waste_cost", "waste_class"} <= set(SHOWBACK_COLUMNS)


@pytest.fixture(scope="module")
def waste_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_waste_store(tmp_path_factory.mktemp("waste"))


#: Per pod, per hour (10:00 and 11:00), by hand: waste_store's docstring. Pods not listed
#: waste nothing in either hour.
HAND = {
    "empty": ("idle_empty_cost", 2.00, 2.00),
    "loaded": ("idle_loaded_cost", 4.00, 4.00),
    "half": ("idle_gpus_cost", 4.50, 4.50),  # 6 x 3/4; its mean (15 %) is low, class 4 first
    "low": ("low_compute_cost", 2.40, 0.00),  # 3 x (1 - 0.20); at 60 % no class
    "rank4": ("straggler_cost", 3.20, 3.20),  # 8 x 40/100
}
#: The row's waste_class per hour: the class holding most of its waste USD, 'none' when
#: it wasted nothing, 'unjudged' when it never ran reporting utilization.
HAND_CLASS = {
    "empty": ["idle_empty", "idle_empty"],
    "loaded": ["idle_loaded", "idle_loaded"],
    "half": ["idle_gpus", "idle_gpus"],
    "low": ["low_compute", "none"],
    "busy": ["none", "none"],
    "silent": ["unjudged", "unjudged"],  # running, no metrics
    "gone": ["unjudged", "unjudged"],  # EXITED
    "rank0": ["none", "none"],
    "rank4": ["straggler", "straggler"],
}


def test_each_row_carries_each_class_by_hand(waste_store: Path) -> None:
    with History(waste_store) as h:
        rows = h.showback(by="hour")
    assert list(rows.columns) == list(SHOWBACK_COLUMNS)
    assert sorted(set(rows["period_start"].dt.hour)) == [10, 11]
    for name, group in rows.groupby("name"):
        group = group.sort_values("period_start")
        column, first, second = HAND.get(str(name), ("idle_empty_cost", 0.0, 0.0))
        assert group[column].round(2).tolist() == [first, second], name
        others = [c for c in CLASSES if c != column]
        assert (group[others] == 0).all().all(), name
        assert group["waste_cost"].round(2).tolist() == [first, second], name
        if name in HAND_CLASS:
            assert group["waste_class"].tolist() == HAND_CLASS[str(name)], name
    # idle_cost is the two idle classes: empty 2.00 + loaded 4.00 in each hour.
    per_hour = rows.groupby(rows["period_start"].dt.hour)[
        ["idle_cost", "idle_empty_cost", "idle_loaded_cost", "waste_cost", "cost"]
    ].sum()
    assert per_hour["idle_cost"].round(2).tolist() == [6.00, 6.00]
    assert (per_hour["idle_empty_cost"] + per_hour["idle_loaded_cost"]).round(2).tolist() == [
        6.00,
        6.00,
    ]
    # All waste per hour: 2 + 4 + 4.50 + 2.40 + 3.20 = 16.10, then 13.70 (low is busy).
    assert per_hour["waste_cost"].round(2).tolist() == [16.10, 13.70]
    assert per_hour["cost"].round(2).tolist() == [61.00, 61.00]


def test_the_rows_sum_to_history_waste_by_hand(waste_store: Path) -> None:
    """Per cluster over both hours: cl-a 4.00 + 8.00 + 9.00 + 2.40 = 23.40, cl-b 6.40."""
    with History(waste_store) as h:
        rows = h.showback(by="day")
        per_cluster = h.waste(by="cluster").set_index("cluster_id")
    sums = rows.groupby("cluster_id")[[*CLASSES, "waste_cost"]].sum()
    assert sums["waste_cost"].round(2).to_dict() == {"cl-a": 23.40, "cl-b": 6.40}
    for column in (*CLASSES, "waste_cost"):
        assert (sums[column] - per_cluster[column]).abs().max() < CENT, column


QUARTERS = ["2026-11-02T00:00Z", "2026-11-02T00:15Z", "2026-11-02T00:30Z",
            "2026-11-02T00:45Z", "2026-11-02T01:00Z"]  # fmt: skip


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """cl-m, a snapshot every 15 minutes from 00:00 to 01:00 (the last stands for no
    time), four pods at 4.00 USD/h (1.00 USD a quarter) over the hour 00:00-01:00:

    - ``mix`` (1 GPU): idle, empty at 00:00 (1.00), idle with a model loaded at 00:15
      (1.00), low compute at 20 % at 00:30 and 00:45 (4 x 0.8 / 4 = 0.80 each, 1.60):
      waste 3.60, most of it low compute although it was idle half of the hour;
    - ``tie`` (1 GPU): idle, empty at 00:00 (1.00), loaded at 00:15 (1.00), busy at 95 %
      after: a tie of 1.00 each, and the first class of the registry's order wins;
    - ``cpu`` (no GPUs): 4.00 of cost, never judged: unjudged;
    - ``busy`` (1 GPU at 95 %): nothing wasted, judged: none.
    """
    util = {
        "mix": [(3, 5), (3, 50), (20, 40), (20, 40), (20, 40)],
        "tie": [(3, 5), (3, 50), (95, 40), (95, 40), (95, 40)],
        "busy": [(95, 40)] * 5,
    }
    listings = {
        when: [
            *(pod("cl-m", name, A100, 4.0, [gpus[i]]) for name, gpus in util.items()),
            pod("cl-m", "cpu", None, 4.0, None),
        ]
        for i, when in enumerate(QUARTERS)
    }
    return write_listings(tmp_path, listings)


def test_the_row_class_is_the_class_with_most_of_its_waste(mixed: Path) -> None:
    with History(mixed) as h:
        rows = h.showback(by="hour").set_index("name")
    assert len(rows) == 4  # one hour each
    mix = rows.loc["mix"]
    assert [round(float(mix[c]), 10) for c in CLASSES] == [1.0, 1.0, 0.0, 0.0, 1.6]
    assert round(float(mix["waste_cost"]), 10) == 3.6
    assert float(mix["idle_cost"]) == 2.0
    assert mix["waste_class"] == "low_compute"
    tie = rows.loc["tie"]
    assert [float(tie[c]) for c in CLASSES] == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert tie["waste_class"] == "idle_empty"
    assert rows.loc["cpu", "waste_class"] == "unjudged"
    assert float(rows.loc["cpu", "cost"]) == 4.0
    assert float(rows.loc["cpu", "waste_cost"]) == 0.0
    assert rows.loc["busy", "waste_class"] == "none"


def test_focus_carries_the_classes_and_the_row_class(mixed: Path) -> None:
    with History(mixed) as h:
        rows = h.showback(by="hour")
    focus = to_focus(rows).set_index("ResourceName")
    mix = focus.loc["mix"]
    assert round(float(mix["x_IdleEmptyCost"]), 10) == 1.0
    assert round(float(mix["x_IdleLoadedCost"]), 10) == 1.0
    assert float(mix["x_StragglerCost"]) == 0.0
    assert float(mix["x_IdleGpusCost"]) == 0.0
    assert round(float(mix["x_LowComputeCost"]), 10) == 1.6
    assert round(float(mix["x_WasteCost"]), 10) == 3.6
    assert float(mix["x_IdleCost"]) == 2.0
    assert mix["x_WasteClass"] == "low_compute"
    assert focus.loc["cpu", "x_WasteClass"] == "unjudged"


def test_thresholds_move_the_rows_between_classes(waste_store: Path) -> None:
    """Memory line at 70 %: "loaded" (60 %) is idle, empty: 4.00 per hour."""
    with History(waste_store) as h:
        rows = h.showback(by="hour", params=Params(idle_memory_threshold=70))
    loaded = rows[rows["name"] == "loaded"]
    assert loaded["idle_empty_cost"].tolist() == [4.0, 4.0]
    assert loaded["idle_loaded_cost"].tolist() == [0.0, 0.0]
    assert loaded["waste_class"].tolist() == ["idle_empty", "idle_empty"]


# -- random stores: showback's classes are History.waste's, per pod and per cluster -----

_GPU = st.tuples(
    st.sampled_from([0, 3, 9, 10, 15, 25, 29, 30, 50, 89, 90, 91, 95]),  # util %
    st.sampled_from([0, 5, 9, 10, 11, 60, 99]),  # memory %
)
_START = pd.Timestamp("2026-11-20T21:00Z")
_SPAN_MIN = 6 * 60  # 21:00 to 03:00: two UTC days, several hours


@st.composite
def fleets(draw: st.DrawFn) -> dict[str, list[dict[str, Any]]]:
    """Listings of 1-2 clusters at irregular times (gaps past the cap too): pods with 0-8
    GPUs, each GPU's util and memory drawn per snapshot (idle, loaded, busy, low, a
    straggling rank among 4-6), silent, exited and CPU pods, missing and zero costs."""
    listings: dict[str, list[dict[str, Any]]] = {}
    for cluster in draw(st.lists(st.sampled_from(["cl-a", "cl-b"]), min_size=1, unique=True)):
        minutes = draw(
            st.lists(st.integers(0, _SPAN_MIN), min_size=2, max_size=8, unique=True).map(sorted)
        )
        ranks = draw(st.integers(0, 6))
        others = draw(st.integers(1, 4))
        shapes: list[tuple[int, Any, str]] = [
            (
                draw(st.sampled_from([1, 1, 2, 4, 8])),
                draw(st.sampled_from([2.0, 4.0, 6.32, 17.84, None, 0.0])),
                draw(st.sampled_from([A100, H100, L40S])),
            )
            for _ in range(ranks + others)
        ]
        for minute in minutes:
            when = (_START + pd.Timedelta(minutes=minute)).isoformat()
            pods = listings.setdefault(when, [])
            for i, (count, cost, gpu_type) in enumerate(shapes):
                kind = draw(st.sampled_from(["gpus"] * 6 + ["silent", "exited", "cpu"]))
                name = f"p{i}"
                rank = i if i < ranks else None
                if kind == "cpu":
                    pods.append(pod(cluster, name, None, cost or 0.5, None, rank=rank))
                elif kind == "gpus":
                    if rank is not None and draw(st.booleans()):  # ranks alike, mostly
                        gpus = [(90, 40)] * count
                    else:
                        gpus = draw(st.lists(_GPU, min_size=count, max_size=count))
                    pods.append(pod(cluster, name, gpu_type, cost, gpus, rank=rank))
                else:
                    status = "RUNNING" if kind == "silent" else "EXITED"
                    pods.append(
                        pod(cluster, name, gpu_type, cost, None, count=count, rank=rank,
                            status=status)
                    )  # fmt: skip
    return listings


_PARAMS = st.builds(
    Params,
    idle_threshold=st.sampled_from([10.0, 10.0, 30.0]),
    idle_memory_threshold=st.sampled_from([10.0, 50.0]),
    low_compute_threshold=st.sampled_from([30.0, 60.0]),
    min_gap=st.sampled_from([10.0, 5.0]),
)


@pytest.mark.slow
@pytest.mark.timeout(600)
@settings(  # a store written and read twice per example
    max_examples=examples(10),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    listings=fleets(),
    start=st.integers(-30, _SPAN_MIN),
    length=st.integers(1, _SPAN_MIN + 60),
    by=st.sampled_from(["hour", "day"]),
    params=_PARAMS,
    max_gap=st.sampled_from([None, "20min", "2h"]),
)
def test_showback_classes_sum_to_history_waste_per_pod_and_cluster(
    listings: dict[str, list[dict[str, Any]]],
    start: int,
    length: int,
    by: Literal["hour", "day"],
    params: Params,
    max_gap: str | None,
) -> None:
    since = _START + pd.Timedelta(minutes=start)
    until = since + pd.Timedelta(minutes=length)
    with tempfile.TemporaryDirectory() as folder:
        write_listings(Path(folder), listings)
        with History(folder) as h:
            rows = h.showback(since, until, by=by, params=params, max_gap=max_gap)
            per_pod = h.waste(since, until, by="pod", params=params, max_gap=max_gap)
            per_cluster = h.waste(since, until, by="cluster", params=params, max_gap=max_gap)
    columns = [*CLASSES, "waste_cost"]
    # Within a row: the two idle classes are idle_cost, the classes sum to the waste,
    # which is at most the cost; the row's class holds the most of its waste.
    idle = rows["idle_empty_cost"] + rows["idle_loaded_cost"]
    assert ((idle - rows["idle_cost"]).abs() < 1e-9).all()
    assert ((rows[list(CLASSES)].sum(axis=1) - rows["waste_cost"]).abs() < 1e-9).all()
    assert (rows["waste_cost"] <= rows["cost"] + 1e-9).all()
    wasted = rows[rows["waste_cost"] > 0]
    for row in wasted.itertuples():
        assert getattr(row, f"{row.waste_class}_cost") == max(getattr(row, c) for c in CLASSES)
    assert set(rows.loc[rows["waste_cost"] == 0, "waste_class"]) <= {"none", "unjudged"}
    for keys, answer in ((["cluster_id", "pod_id"], per_pod), (["cluster_id"], per_cluster)):
        sums = rows.groupby(keys)[columns].sum()
        expected = answer.set_index(keys)[columns].add_suffix("_waste")
        joined = sums.join(expected, how="outer").astype("float64").fillna(0.0)
        for column in columns:
            gap = (joined[column] - joined[f"{column}_waste"]).abs()
            assert (gap < CENT).all(), (keys, column, gap.max())

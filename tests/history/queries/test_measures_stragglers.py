"""``History.measures("stragglers")``: the registry's count of chronic stragglers, by
cluster or over the fleet, and ``History.stragglers`` as its drill-down (the rows it
counts).

The store, by hand: cl-a runs six ranks at 80 %, rank 5 at 40 % in three of its four
snapshots and rank 4 at 40 % in one; cl-b runs six ranks at 80 % throughout. Rank 5 is
flagged in 3/4 of the snapshots, rank 4 in 1/4: at the chronic share 0.5 cl-a has one
straggler, at 0.25 two; cl-b none.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from history_helpers import pod_row, write_store

from ccanalytics.history import History
from ccanalytics.measures import Params

TIMES = [f"2026-11-02T00:{m:02d}" for m in (0, 10, 20, 30)]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    rows = []
    for i, t in enumerate(TIMES):
        for cluster in ("cl-a", "cl-b"):
            for rank in range(6):
                slow = cluster == "cl-a" and ((rank == 5 and i < 3) or (rank == 4 and i == 3))
                util = 40.0 if slow else 80.0
                rows.append(
                    pod_row(
                        cluster,
                        t,
                        f"{cluster}-{rank}",
                        rank=rank,
                        gpu_util_mean=util,
                        gpu_util_max=util + 2,
                    )
                )
    write_store(tmp_path / "store", rows)
    return tmp_path / "store"


def test_the_count_per_cluster_and_over_the_fleet_by_hand(store: Path) -> None:
    with History(store) as h:
        per_cluster = h.measures("stragglers", by="cluster").set_index("cluster_id")
        assert per_cluster["stragglers"].to_dict() == {"cl-a": 1, "cl-b": 0}
        loose = Params(chronic_share=0.25)
        per_cluster = h.measures("stragglers", by="cluster", params=loose)
        assert per_cluster.set_index("cluster_id")["stragglers"].to_dict() == {"cl-a": 2, "cl-b": 0}
        fleet = h.measures("stragglers", by=None, params=loose)
        assert fleet["stragglers"].tolist() == [2]


def test_the_drill_down_holds_the_rows_the_count_counts(store: Path) -> None:
    with History(store) as h:
        rows = h.stragglers(params=Params(chronic_share=0.25))
        counted = h.measures("stragglers", by=None, params=Params(chronic_share=0.25))
    assert len(rows) == int(counted["stragglers"].iloc[0])
    assert rows["share"].tolist() == [0.75, 0.25]


def test_a_count_split_by_what_it_cannot_is_refused(store: Path) -> None:
    with History(store) as h, pytest.raises(ValueError, match="stragglers"):
        h.measures("stragglers", by="day")
    with History(store) as h, pytest.raises(ValueError, match="stragglers"):
        h.measures(["stragglers", "idle_cost"], by="cluster")

"""A head or controller rank is judged with its workers, and the frames say which it is.

The published document gives each cluster pod a ``cluster.role`` (``SLURM_CONTROLLER``,
``SLURM_COMPUTE``, ``RAY_HEAD``, ``RAY_WORKER``): the pods frame keeps it as
``cluster_role``, live and in the history store. The decision, documented in the
frames guide: the straggler rule judges every GPU rank of a cluster alike, a head or
controller included (it is paid for like any rank, and the median and MAD are robust to
one rank whose work differs); a notebook that wants workers only filters on
``cluster_role``. These tests pin both halves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ccanalytics
from ccanalytics import History
from ccanalytics.analysis import stragglers

ROOT = Path(__file__).resolve().parents[2]
HEADS = ["SLURM_CONTROLLER", "RAY_HEAD"]
WORKER_OF = {"SLURM_CONTROLLER": "SLURM_COMPUTE", "RAY_HEAD": "RAY_WORKER"}


def _pod(rank: int, role: str, util: float) -> dict[str, Any]:
    return {
        "id": f"pod-{rank}",
        "name": f"rank-{rank}",
        "status": "RUNNING",
        "cost": 2.0,
        "gpu": {"id": "NVIDIA H100 80GB HBM3", "count": 2},
        "cluster": {"id": "cl-x", "rank": rank, "role": role},
        "runtime": {"gpus": [{"util": util}, {"util": util}]},
    }


@pytest.mark.parametrize("head", HEADS)
def test_a_slow_head_is_flagged_with_its_workers_and_its_role_says_what_it_is(head: str) -> None:
    # The head at 40 %, four workers at 90 %: median 90, MAD 0, so the 50-point gap decides.
    listing = [_pod(0, head, 40.0)] + [_pod(r, WORKER_OF[head], 90.0) for r in range(1, 5)]
    pods = ccanalytics.pods_frame(listing)
    assert pods["cluster_role"].tolist() == [head] + [WORKER_OF[head]] * 4
    flagged = stragglers(pods)
    assert flagged["rank"].tolist() == [0]
    assert flagged["deficit"].tolist() == [50.0]
    # Workers only, as the guide shows: the head is left out, and no worker straggles.
    workers = pods[~pods["cluster_role"].isin(HEADS).fillna(False)]
    assert len(workers) == 4 and stragglers(workers).empty


def test_the_history_store_keeps_each_pods_role(sandbox: Any, tmp_path: Path) -> None:
    with sandbox.client() as client:
        live = ccanalytics.load_cluster_pods("cl-slurm-hpc", client=client, progress=False)
        ccanalytics.collect("cl-slurm-hpc", tmp_path, client=client)
    with History(tmp_path) as h:
        stored = h.pods()
    by_rank = stored.set_index("rank")["cluster_role"]
    assert by_rank[0] == "SLURM_CONTROLLER"
    assert set(by_rank.drop(index=0)) == {"SLURM_COMPUTE"}
    assert stored["cluster_role"].dtype == pd.StringDtype()
    assert sorted(stored["cluster_role"].tolist()) == sorted(live["cluster_role"].tolist())


def test_the_frames_guide_states_the_decision() -> None:
    guide = " ".join((ROOT / "docs" / "guide" / "frames.md").read_text().split())
    assert "judged with its workers" in guide
    assert "cluster_role" in guide

"""A pod whose status is missing is counted but never judged: the same live and stored.

Only ``RUNNING`` pods have runtime metrics (provider notes), and a missing status is
not ``RUNNING`` (see ``ccanalytics.measures.rules``). The two paths once disagreed:
such a pod at 3 % GPU was idle for ``analysis.idle_pods`` and cost 0 idle USD in
``History.idle_cost(by="pod")``.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from ccanalytics import analysis
from ccanalytics.frames import POD_COLUMNS


def _frame(status: object) -> pd.DataFrame:
    row = {
        "cluster_id": "cl-a",
        "pod_id": "p1",
        "name": "p1",
        "rank": 0,
        "status": status,
        "gpu_type": "H100",
        "gpu_count": 8,
        "gpu_util_mean": 3.0,
        "gpu_util_max": 3.0,
        "cpu_util": 5.0,
        "cost": 2.0,
    }
    frame = pd.DataFrame([row])
    for name, spec in POD_COLUMNS.items():
        if name not in frame:
            frame[name] = pd.NA
        frame[name] = frame[name].astype(spec.dtype)
    return frame


def test_a_pod_with_no_status_is_not_idle_but_is_counted() -> None:
    frame = _frame(pd.NA)
    assert analysis.idle_pods(frame).empty
    row = analysis.cluster_summary(frame).iloc[0]
    assert row["pods_other_status"] == 1
    assert row["idle_pods"] == 0 and row["idle_cost_per_hour"] == 0.0
    assert row["cost_per_hour"] == 2.0 and row["unused_cost_per_hour"] == 0.0


def test_a_running_pod_at_three_percent_is_idle() -> None:
    idle = analysis.idle_pods(_frame("RUNNING"))
    assert idle["pod_id"].tolist() == ["p1"]


def test_threshold_is_the_old_spelling_of_idle_threshold() -> None:
    frame = _frame("RUNNING")
    with pytest.warns(DeprecationWarning, match="idle_threshold"):
        old = analysis.idle_pods(frame, threshold=2.0)
    with pytest.warns(DeprecationWarning, match="idle_threshold"):
        old_accessor = frame.cc.idle_pods(threshold=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = analysis.idle_pods(frame, idle_threshold=2.0)
    assert old.empty and new.empty and old_accessor.empty

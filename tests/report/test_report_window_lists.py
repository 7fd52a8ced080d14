"""A list of per-cluster figures names only the clusters where it is not zero."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd

from ccanalytics.report._window import WindowFindings, window_sentences


def _findings(unobserved: dict[str, float]) -> WindowFindings:
    by_cluster = pd.DataFrame(
        {
            "cluster_id": pd.array(list(unobserved), dtype="string"),
            "unobserved_hours": pd.array(list(unobserved.values()), dtype="Float64"),
        }
    )
    empty = pd.DataFrame(
        {
            "cluster_id": pd.array([], dtype="string"),
            "rank": pd.array([], dtype="Int64"),
            "share": pd.array([], dtype="Float64"),
            "idle_time_share": pd.array([], dtype="Float64"),
        }
    )
    start = pd.Timestamp("2026-11-02", tz="UTC")
    totals = pd.Series(
        {
            "total_cost": 100.0,
            "idle_cost": 0.0,
            "unused_cost": 0.0,
            "unobserved_hours": sum(unobserved.values()),
        }
    )
    return WindowFindings(
        window=timedelta(hours=24),
        start=start,
        end=start + timedelta(hours=24),
        totals=totals,
        by_cluster=by_cluster,
        by_day=empty,
        stragglers=empty,
        lifetimes=empty,
        utilization=empty,
        rank_utilization=empty,
        runs=pd.DataFrame(columns=["cluster_id", "rank", "start", "end", "snapshots"]),
    )


def test_clusters_observed_throughout_are_not_listed_as_unobserved() -> None:
    # 0.02 h (a minute) prints as 0.0 h: noise, left out like a true zero.
    text = " ".join(
        window_sentences(_findings({"cl-a": 13.6, "cl-b": 0.0, "cl-c": 0.02, "cl-d": 0.1}))
    )
    assert "(cl-a 13.6 h, cl-d 0.1 h)" in text
    assert "cl-b" not in text and "cl-c" not in text


def test_no_unobserved_sentence_when_every_cluster_was_observed() -> None:
    text = " ".join(window_sentences(_findings({"cl-a": 0.0, "cl-b": 0.01})))
    assert "Not observed" not in text

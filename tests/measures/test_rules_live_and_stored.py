"""The live rules and the stored rules agree: one snapshot, two paths, the same answers.

Hypothesis draws pod frames with missing statuses, null metrics, zero and missing costs
and CPU-only pods. ``analysis`` judges the frame; the same frame is appended to a store
(the store's own append) at two instants an hour apart, and ``History`` over the hour
between them must find the same idle pods and stragglers, and per pod and per cluster
the same idle, unused and total cost (the hour makes USD/h and USD the same number), to
the cent. A pod with no status at 3 % GPU was once idle live and not stored.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
from examples import examples
from hypothesis import HealthCheck, given, settings, strategies as st

from ccanalytics import analysis
from ccanalytics.frames import POD_COLUMNS
from ccanalytics.history import History
from ccanalytics.history.store._write import append_frame  # the store's append, on purpose

T0 = pd.Timestamp("2026-11-20T00:00:00Z")
HOUR = pd.Timedelta(hours=1)

# Values near the rules' edges: below/at/above the idle threshold, around a typical rank.
_UTILS = st.one_of(
    st.none(), st.sampled_from([0.0, 3.0, 9.99, 10.0, 20.0, 50.0, 88.0, 90.0, 91.0, 92.0, 100.0])
)
_STATUSES = st.one_of(
    st.none(), st.sampled_from(["RUNNING", "RUNNING", "RUNNING", "EXITED", "STARTING"])
)
_COSTS = st.one_of(st.none(), st.just(0.0), st.sampled_from([0.37, 1.25, 2.32, 17.84]))


@st.composite
def pod_frames(draw: st.DrawFn) -> pd.DataFrame:
    rows = []
    for cluster in draw(
        st.lists(st.sampled_from(["cl-a", "cl-b", "cl-c"]), min_size=1, max_size=3, unique=True)
    ):
        for i in range(draw(st.integers(min_value=1, max_value=9))):
            gpu_count = draw(
                st.one_of(st.none(), st.just(0), st.integers(min_value=1, max_value=8))
            )
            mean = draw(_UTILS)
            peak = (
                None if mean is None else min(100.0, mean + draw(st.sampled_from([0.0, 0.5, 8.0])))
            )
            rows.append(
                {
                    "cluster_id": cluster,
                    "pod_id": f"{cluster}-p{i}",
                    "name": f"{cluster}-p{i}",
                    "rank": draw(st.one_of(st.none(), st.just(i), st.just(i))),
                    "status": draw(_STATUSES),
                    "gpu_type": "H100" if gpu_count else None,
                    "gpu_count": gpu_count,
                    "gpu_util_mean": mean if gpu_count else None,
                    "gpu_util_max": peak if gpu_count else None,
                    "cpu_util": draw(_UTILS),
                    "cost": draw(_COSTS),
                }
            )
    frame = pd.DataFrame(rows)
    for name, spec in POD_COLUMNS.items():
        if name not in frame:
            frame[name] = pd.NA
        frame[name] = frame[name].astype(spec.dtype)
    return frame[list(POD_COLUMNS)]


def _stored(frame: pd.DataFrame, store: Path) -> None:
    for instant in (T0, T0 + HOUR):
        append_frame(store, "pods", frame.assign(observed_at=instant))


def _cents(series: pd.Series) -> list[float]:
    return [float(v) for v in series.fillna(0.0)]


def _same_to_the_cent(stored: pd.Series, live: pd.Series) -> bool:
    a, b = _cents(stored), _cents(live)
    return len(a) == len(b) and all(abs(x - y) < 0.005 for x, y in zip(a, b, strict=True))


# A store written and read per example (~0.2 s): fewer than the profile's own.
@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=pod_frames())
def test_live_and_stored_rules_agree(frame: pd.DataFrame) -> None:
    live_idle = analysis.idle_pods(frame)
    live_slow = analysis.stragglers(frame)
    live_summary = analysis.cluster_summary(frame).set_index("cluster_id")
    with tempfile.TemporaryDirectory() as folder:
        _stored(frame, Path(folder))
        with History(folder) as h:
            pods = h.idle_cost(T0, T0 + HOUR, by="pod").set_index(["cluster_id", "pod_id"])
            clusters = h.idle_cost(T0, T0 + HOUR, by="cluster").set_index("cluster_id")
            slow = h.stragglers(T0, T0 + HOUR, min_share=0.0)
            lifetimes = h.pod_lifetimes(T0, T0 + HOUR)

    # The same idle pods, each costing per hour what it cost in the hour.
    stored_idle = lifetimes[lifetimes["idle_hours"] > 0]
    assert set(zip(stored_idle["cluster_id"], stored_idle["pod_id"], strict=True)) == set(
        zip(live_idle["cluster_id"], live_idle["pod_id"], strict=True)
    )
    idle_keys = list(zip(live_idle["cluster_id"], live_idle["pod_id"], strict=True))
    assert _same_to_the_cent(pods.loc[idle_keys, "idle_cost"], live_idle["wasted_cost_per_hour"])

    # The same stragglers.
    flagged = slow[slow["flagged"] > 0]
    assert set(zip(flagged["cluster_id"], flagged["rank"], strict=True)) == set(
        zip(live_slow["cluster_id"], live_slow["rank"], strict=True)
    )

    # Per cluster: total, idle and unused-capacity cost to the cent.
    live = live_summary.loc[clusters.index]
    assert list(clusters.index) == sorted(frame["cluster_id"].unique())
    assert _same_to_the_cent(clusters["total_cost"], live["cost_per_hour"])
    assert _same_to_the_cent(clusters["idle_cost"], live["idle_cost_per_hour"])
    assert _same_to_the_cent(clusters["unused_cost"], live["unused_cost_per_hour"])
    assert clusters["observed_hours"].tolist() == [1.0] * len(clusters)

"""The burn rate is that of the newest listing that answered, empty ones included.

An empty listing is observed time at zero cost (the snapshots table): when a cluster's
newest answered listing held no pods, its burn rate is 0, not the rate of the last
listing that had pods (a false budget breach). A failed listing is unobserved time: it
changes nothing, and the rate stays that of the newest listing that answered.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from examples import examples
from history_helpers import pod_row, ts, write_store
from hypothesis import HealthCheck, given, settings, strategies as st

from ccanalytics.history import History

T0 = ts("2026-11-20T00:00Z")

#: A listing: ``None`` failed (HTTP 503), else the hourly costs of its pods (``[]``: empty).
Listing = list[float] | None


def _write_listings(store: Path, listings: list[Listing]) -> None:
    """Cluster ``a``'s listings, one an hour from T0, in both the pods and snapshots tables."""
    rows = []
    snapshots = []
    for hour, listing in enumerate(listings):
        when = T0 + pd.Timedelta(hours=hour)
        for index, cost in enumerate(listing or []):
            rows.append(pod_row("a", when.isoformat(), f"p{index}", cost=cost))
        outcome = "ok" if listing is not None else "ServiceUnavailableError"
        snapshots.append((when, len(listing or []), outcome, None if listing is not None else 503))
    write_store(store, rows)
    folder = store / "snapshots" / f"date={T0:%Y-%m-%d}"
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "cluster_id": pa.array(["a"] * len(snapshots), pa.string()),
            "observed_at": pa.array([s[0] for s in snapshots], pa.timestamp("us", tz="UTC")),
            "pods": pa.array([s[1] for s in snapshots], pa.int64()),
            "outcome": pa.array([s[2] for s in snapshots], pa.string()),
            "http_status": pa.array([s[3] for s in snapshots], pa.int64()),
            "schema_version": pa.array([1] * len(snapshots), pa.int32()),
        }
    )
    pq.write_table(table, folder / f"{uuid.uuid4().hex}.parquet")


def _expected_rate(listings: list[Listing]) -> float:
    """By hand: the pods' costs of the newest listing that answered."""
    answered = [listing for listing in listings if listing is not None]
    return sum(answered[-1])


costs = st.lists(st.sampled_from([0.5, 1.0, 2.5, 4.0]), min_size=0, max_size=3)


# A store and a History per example (~0.3 s): scaled with the profile (tests/examples.py).
@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(st.sampled_from([0.5, 1.0, 2.5, 4.0]), min_size=1, max_size=3),
    rest=st.lists(st.one_of(st.none(), costs), min_size=0, max_size=6),
)
def test_burn_rate_is_the_newest_answered_listing_empty_is_zero(
    first: list[float], rest: list[Listing]
) -> None:
    listings: list[Listing] = [first, *rest]
    with tempfile.TemporaryDirectory() as folder:
        _write_listings(Path(folder), listings)
        with History(folder) as h:
            frame = h.spend()
    month = frame[frame["period"] == "month"].set_index("cluster_id")
    assert month.loc["a", "burn_rate"] == pytest.approx(_expected_rate(listings))


def test_an_empty_newest_listing_projects_no_further_spend(tmp_path: Path) -> None:
    # 00:00 and 01:00: two pods at 3 USD/h together; 02:00: the listing is empty.
    _write_listings(tmp_path, [[1.0, 2.0], [1.0, 2.0], []])
    with History(tmp_path) as h:
        month = h.spend().set_index("period").loc["month"]
    # Spent: 2 h x 3 USD/h = 6 USD (the empty listing's time costs nothing); burn 0, so
    # the projection to Dec 1 is what was spent.
    assert month["now"] == ts("2026-11-20T02:00Z")
    assert round(month["spent"], 2) == 6.00
    assert month["burn_rate"] == 0.0
    assert round(month["projected"], 2) == 6.00

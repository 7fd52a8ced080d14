"""Right-sizing hints: hand-computed savings, the table of GPU types, and, as a
property, no hint that the observed peak memory would not fit."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings, strategies as st
from waste_store import A100, H100, L40S, pod, write_waste_store

from ccanalytics import GpuTypesError, gpus_frame, pods_frame
from ccanalytics.history import History
from ccanalytics.history.store._write import append_frame
from ccanalytics.measures import gpu_types


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_waste_store(tmp_path_factory.mktemp("rightsizing"))


def test_the_hints_and_their_savings_by_hand(store: Path) -> None:
    # Observed prices per GPU-hour over the two hours (running pods reporting):
    # H100: (6 + 5 + 5 x 8) / (4 + 1 + 5 x 8) = 51/45; A100: (4 + 3) / 3; L40S: 2 / 1.
    with History(store) as h:
        hints = h.rightsizing()
    got = {
        (row.name, row.suggested_type, row.suggested_count): round(row.monthly_saving, 2)
        for row in hints.itertuples()
    }
    assert got == {
        # 3 of 4 GPUs idle in both snapshots; peak memory (30+1+1+1) % of 80 GB = 26.4 GB,
        # x 1.2 fits on one: 6 USD/h x 3/4 x 720 h.
        ("half", H100, 1): 3240.00,
        # 4 %, fullest GPU 60 % of 80 = 48 GB (57.6 with headroom): an H100 (80 GB) at
        # 51/45 USD per GPU-hour, not an L40S (48 GB): 2 x (2 - 51/45) x 720.
        ("loaded", H100, 2): round(2 * (2 - 51 / 45) * 720, 2),
        # 3 %, 2.4 GB: H100 is cheaper than its 2 USD/h (A100 at 7/3 is not).
        ("empty", H100, 1): round((2 - 51 / 45) * 720, 2),
    }
    assert list(hints["monthly_saving"]) == sorted(hints["monthly_saving"], reverse=True)
    loaded = hints.set_index("name").loc["loaded"]
    assert loaded["peak_memory_gb"] == pytest.approx(48.0)
    assert "averaged 4%" in loaded["reason"]


def test_a_pod_that_needs_its_memory_keeps_its_gpus(store: Path) -> None:
    # "loaded": both GPUs idle all along, but 92 % of 80 GB x 1.2 needs two GPUs.
    with History(store) as h:
        hints = h.rightsizing()
    assert not ((hints["name"] == "loaded") & (hints["suggested_type"] == A100)).any()


def test_an_extra_table_extends_and_overrides_the_packaged_one(tmp_path: Path) -> None:
    extra = tmp_path / "mine.toml"
    extra.write_text('[types]\n"NVIDIA L40S" = { memory_gb = 96 }\n"My GPU" = { memory_gb = 12 }\n')
    table = gpu_types(extra)
    assert table["NVIDIA L40S"] == 96.0 and table["My GPU"] == 12.0
    assert table[H100] == 80.0
    assert gpu_types({"Other": 8})["Other"] == 8.0
    for bad in ('[types]\n"X" = { memory_gb = -1 }\n', "[types\n", '[gpus]\n"X" = 1\n'):
        extra.write_text(bad)
        with pytest.raises(GpuTypesError, match=r"mine\.toml"):
            gpu_types(extra)
    with pytest.raises(GpuTypesError, match="cannot read"):
        gpu_types(tmp_path / "missing.toml")


def test_a_type_missing_from_the_table_gets_no_hint(tmp_path: Path) -> None:
    # "mystery" (1 GPU, 3 %, 2 USD/h) could move to an L40S seen at 0.50 USD/h, but
    # nothing says how much memory its GPU has until a table does.
    for when in ("2026-11-20T10:00Z", "2026-11-20T11:00Z", "2026-11-20T12:00Z"):
        listing = [
            pod("cl", "mystery", "Mystery GPU", 2.0, [(3, 5)]),
            pod("cl", "l40s", L40S, 0.5, [(90, 50)]),
        ]
        for table, frame in (("pods", pods_frame(listing)), ("gpus", gpus_frame(listing))):
            frame["observed_at"] = pd.Series(
                pd.Timestamp(when), index=frame.index, dtype="datetime64[ns, UTC]"
            )
            append_frame(tmp_path, table, frame)
    with History(tmp_path) as h:
        assert h.rightsizing().empty
        told = h.rightsizing(gpu_types={"Mystery GPU": 24})
    (row,) = told.itertuples()
    assert (row.name, row.suggested_type) == ("mystery", L40S)
    assert round(row.monthly_saving, 2) == round((2.0 - 0.5) * 720, 2)
    assert row.peak_memory_gb == pytest.approx(0.05 * 24)


# Close sizes, so that a fit without the headroom and one with it differ often.
_TYPES = {"T16": 16.0, "T20": 20.0, "T24": 24.0, "T30": 30.0}
# Low utilization mostly, so that both kinds of hint come up often.
_snapshot = st.lists(st.tuples(st.integers(0, 35), st.integers(0, 100)), min_size=4, max_size=4)


@settings(
    max_examples=examples(12),  # a store of six files written and read per example
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    pods=st.lists(
        st.tuples(
            st.sampled_from(sorted(_TYPES)),
            st.integers(1, 4),
            st.floats(0.1, 20.0),
            st.lists(_snapshot, min_size=3, max_size=3),
        ),
        min_size=1,
        max_size=4,
    ),
    headroom=st.sampled_from([0.0, 0.2, 0.5]),
)
@pytest.mark.slow
def test_no_hint_would_not_fit_the_observed_peak(
    pods: list[tuple[str, int, float, list[list[tuple[int, int]]]]], headroom: float
) -> None:
    times = ["2026-11-20T10:00Z", "2026-11-20T11:00Z", "2026-11-20T12:00Z"]
    with tempfile.TemporaryDirectory() as folder:
        for i, when in enumerate(times):
            listing = [
                pod("cl", f"p{n}", kind, cost, snaps[i][:count])
                for n, (kind, count, cost, snaps) in enumerate(pods)
            ]
            pf, gf = pods_frame(listing), gpus_frame(listing)
            for frame in (pf, gf):
                frame["observed_at"] = pd.Series(
                    pd.Timestamp(when), index=frame.index, dtype="datetime64[ns, UTC]"
                )
            append_frame(folder, "pods", pf)
            append_frame(folder, "gpus", gf)
        with History(folder) as h:
            hints = h.rightsizing(gpu_types=_TYPES, headroom=headroom)
    for row in hints.itertuples():
        kind, count, _, snaps = pods[int(str(row.name)[1:])]
        gb = _TYPES[kind]
        covering = [s[:count] for s in snaps[:2]]  # the last snapshot covers no time
        peak = max(m for s in covering for _, m in s) / 100 * gb
        total = max(sum(m for _, m in s) for s in covering) / 100 * gb
        new = _TYPES[str(row.suggested_type)]
        assert row.suggested_count * new >= total * (1 + headroom) - 1e-9
        if row.suggested_type != kind:
            assert new >= peak * (1 + headroom) - 1e-9
        else:
            idle = sum(all(s[g][0] < 10 for s in covering) for g in range(count))
            assert row.suggested_count >= max(count - idle, 1)
            assert row.suggested_count < count
        assert row.monthly_saving > 0 and math.isfinite(row.monthly_saving)

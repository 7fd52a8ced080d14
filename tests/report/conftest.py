"""Fixtures shared by the report tests."""

from __future__ import annotations

import pandas as pd
import pytest
from sandbox_fleet import NOW, fleet_frames

from ccanalytics.report import _draw, render_report


@pytest.fixture(scope="module")
def frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sandbox fleet's pods and GPU frames, every cluster."""
    return fleet_frames()


@pytest.fixture(scope="session")
def fleet_report() -> str:
    """The sandbox fleet's report at ``NOW``, every figure drawn here, one by one.

    Rendered once per run (every figure: seconds) for the tests that only read it
    (test_report.py) and for the comparison with a pool of drawing processes
    (test_report_figures_pool.py), which needs it drawn without one.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_draw, "MIN_FIGURES_FOR_POOL", 10**6)
        return render_report(*fleet_frames(), generated_at=NOW)

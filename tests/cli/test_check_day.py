"""``ccanalytics check`` after the simulated day (tests/simulated_day.py) prints History's
figures to the cent: the idle cost of the last 24 h and the chronic straggler."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from simulated_day import SimulatedDay

from ccanalytics import History
from ccanalytics.cli import main

pytestmark = pytest.mark.slow


def test_check_prints_historys_figures(
    simulated_day: SimulatedDay, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    day = simulated_day.copy(tmp_path / "store")  # check keeps its state in the store
    with History(day) as h:
        totals = h.idle_cost(timedelta(hours=24), by=None).iloc[0]
    code = main(
        [
            "check",
            "--store",
            str(day),
            "--window",
            "24h",
            "--max-idle-cost",
            "1",
            "--max-stragglers",
            "0",
        ]
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 3
    figure = f"idle GPUs cost {totals['idle_cost']:,.2f} USD in the last 24 h"
    assert out[0].startswith(f"all clusters: {figure}")
    assert out[1].startswith("all clusters: 1 rank straggled")
    assert "straggling ranks: cl-llama70b-train rank 13" in out[1]

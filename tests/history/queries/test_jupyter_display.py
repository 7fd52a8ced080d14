"""In Jupyter, ``History`` shows its store and ``CollectResult`` a small table.

A notebook is executed by a real kernel (nbclient, this interpreter's): it collects six
hourly snapshots of two sandbox clusters (and one that does not exist), then displays
the result and a History of the store; the test reads the outputs the kernel sent.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

SETUP = """\
from datetime import timedelta

import ccanalytics
from ccanalytics.sandbox import Sandbox, SandboxApp, SimulatedClock

clock = SimulatedClock()
with Sandbox(SandboxApp(clock=clock)) as sb, sb.client() as client:
    for _ in range(6):
        result = ccanalytics.collect(
            ["cl-infer-prod", "cl-etl-cpu", "cl-<b>nope</b>"], "store", client=client,
            errors="collect", trust_service_clock=True,
        )
        clock.advance(timedelta(hours=1))
"""


def _run(tmp_path: Path) -> list[dict[str, str]]:
    book = nbformat.v4.new_notebook()
    book.cells = [
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell("result"),
        nbformat.v4.new_code_cell("h = ccanalytics.History('store')\nh"),
    ]
    book.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    env_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    os.environ["PYTHONPATH"] = env_path  # the kernel imports this checkout
    client = NotebookClient(
        book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = []
    for cell in book.cells[1:]:
        (output,) = [o for o in cell.outputs if o["output_type"] == "execute_result"]
        outputs.append(dict(output["data"]))
    return outputs


def test_the_result_and_the_store_show_themselves(tmp_path: Path) -> None:
    result, history = _run(tmp_path)
    # The result: one line, then a table with a row per cluster; one file per table
    # (pods, gpus, snapshots).
    # 12 pods of cl-infer-prod and 5 of cl-etl-cpu; 18 GPUs on cl-infer-prod (6 x 2 + 6 x 1).
    assert result["text/plain"] == (
        "<CollectResult: 2 clusters, 17 pod rows, 18 GPU rows, 3 files; failed: cl-<b>nope</b>>"
    )
    table = result["text/html"]
    assert "<b>nope</b>" not in table and html.escape("cl-<b>nope</b>") in table
    assert re.search(
        r"<td>cl-infer-prod</td><td>written</td><td>2026-11-02 05:00:00 UTC</td>", table
    )
    assert "<td>failed</td>" in table and "404" in table
    # The store: tables, snapshots, clusters, span, size, coverage.
    shown = history["text/html"]
    assert history["text/plain"] == f"History('{tmp_path / 'store'}')"
    # Six snapshots of two clusters: 6 x 17 pod rows, 6 x 18 GPU rows; the failed
    # cluster is a snapshot row too (its listing's outcome), 6 x 3 rows.
    assert "pods: 102 rows, gpus: 108 rows, snapshots: 18 rows" in shown
    assert "<th style='text-align:left'>snapshots</th><td style='text-align:left'>6</td>" in shown
    assert "<th style='text-align:left'>clusters</th><td style='text-align:left'>3</td>" in shown
    assert "2026-11-02 00:00 to 2026-11-02 05:00 UTC (5.0 h)" in shown
    assert re.search(r"[\d.]+ kB in \d+ Parquet files", shown)
    assert "Coverage per cluster" in shown
    assert "<td>cl-infer-prod</td><td>6</td><td>0</td><td>0</td><td></td>" in shown

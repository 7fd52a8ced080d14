"""In Jupyter the report shows itself: the summary as a small table, the page inline.

A notebook is built here and executed by a real kernel (nbclient); the test reads
what the kernel sent back, as the notebook would show it.
"""

from __future__ import annotations

import html
import re
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow

SETUP = """\
from datetime import UTC, datetime
from pathlib import Path
import tempfile

from ccanalytics import pods_frame, gpus_frame
from ccanalytics.report import render_report, write_report
from ccanalytics.sandbox import Sandbox, SandboxApp

listing = SandboxApp().data.clusters["cl-research-dev"]
pods = pods_frame(listing, cluster_id="cl-research-dev")
gpus = gpus_frame(listing, cluster_id="cl-research-dev")
"""

SUMMARY = """\
with Sandbox() as sandbox, sandbox.client() as client, tempfile.TemporaryDirectory() as tmp:
    summary = write_report(["cl-research-dev"], Path(tmp) / "r.html", client=client,
                           max_rank_plots=0)
summary
"""

REPORT = "render_report(pods, gpus, max_rank_plots=0)"


@pytest.fixture(scope="module")
def outputs() -> list[list[dict[str, Any]]]:
    """Each cell's outputs, in order."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(src) for src in (SETUP, SUMMARY, REPORT)]
    NotebookClient(notebook, timeout=300, kernel_name="python3").execute()
    return [cell.outputs for cell in notebook.cells]


def _html(cell: list[dict[str, Any]]) -> str:
    (result,) = [o for o in cell if o["output_type"] == "execute_result"]
    return str(result["data"]["text/html"])


def test_the_summary_is_a_small_table_of_its_figures(outputs: list[list[dict[str, Any]]]) -> None:
    shown = _html(outputs[1])
    rows = dict(re.findall(r'<th scope="row"[^>]*>([^<]*)</th><td[^>]*>([^<]*)</td>', shown))
    # cl-research-dev: 6 pods, 4.41 USD/h; 3 idle at 10 % (0.98 + 0.98 + 0.49 USD/h).
    assert rows["clusters"] == "1 (6 pods)"
    assert rows["cost"] == "4.41 USD/h"
    assert rows["idle GPU pods"] == "3 (2.45 USD/h)"
    assert rows["straggling ranks"] == "0"
    assert rows["wasted"].startswith("58.80 USD/day (")  # 2.45 USD/h x 24
    assert rows["written to"].endswith("r.html")


def test_the_summary_is_still_its_paragraph_as_text(outputs: list[list[dict[str, Any]]]) -> None:
    (result,) = [o for o in outputs[1] if o["output_type"] == "execute_result"]
    # The plain text is the str's repr, quoted as Python quotes it.
    assert result["data"]["text/plain"][1:].startswith("The 1 cluster (6 pods) costs 4.41 USD/h")


def test_the_report_is_shown_inline_as_the_page_it_is(
    outputs: list[list[dict[str, Any]]],
) -> None:
    from ccanalytics import gpus_frame, pods_frame
    from ccanalytics.report import render_report
    from ccanalytics.sandbox import SandboxApp

    listing = SandboxApp().data.clusters["cl-research-dev"]
    page = render_report(
        pods_frame(listing, cluster_id="cl-research-dev"),
        gpus_frame(listing, cluster_id="cl-research-dev"),
        max_rank_plots=0,
    )
    found = re.fullmatch(
        r'<iframe class="ccanalytics-report" srcdoc="([^"]*)"[^>]*></iframe>', _html(outputs[2])
    )
    assert found, _html(outputs[2])[:200]
    assert html.unescape(found.group(1)) == page
    assert isinstance(page, str) and page.startswith("<!DOCTYPE html>")

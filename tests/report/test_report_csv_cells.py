"""The report's ``csv_dir`` holds hostile pod names inert: the frames are the caller's to open.

The loopback sandbox serves cl-etl-cpu with its first pods renamed to hostile names.
"""

from __future__ import annotations

from pathlib import Path

from csv_cells import HOSTILE, assert_inert, file_rows

from ccanalytics.report import write_report
from ccanalytics.sandbox import Sandbox


def test_the_pods_csv_names_are_inert(sandbox: Sandbox, tmp_path: Path) -> None:
    pods = sandbox.app.data.clusters["cl-etl-cpu"]
    assert len(pods) >= 3
    renamed = {pod["id"]: name for pod, name in zip(pods, HOSTILE[:3], strict=False)}
    for pod in pods[:3]:
        pod["name"] = renamed[pod["id"]]
    with sandbox.client() as client:
        write_report("cl-etl-cpu", tmp_path / "r.html", client=client, csv_dir=tmp_path / "csv")
    written = file_rows(tmp_path / "csv" / "pods.csv")
    names = [row["name"] for row in written if row["pod_id"] in renamed]
    assert_inert(names, [renamed[row["pod_id"]] for row in written if row["pod_id"] in renamed])
    assert all(float(row["cost"]) >= 0 for row in written)  # numbers stay numbers

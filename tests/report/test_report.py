"""The HTML report: rendered offline from sandbox frames, written through the client and the CLI."""

from __future__ import annotations

import asyncio
import base64
import os
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from sandbox_fleet import NOW

from ccanalytics import Client, FleetLoadError, NotFoundError
from ccanalytics.cli import main
from ccanalytics.frames import gpus_frame, pods_frame
from ccanalytics.report import CSV_FILES, ReportOutputError, render_report, write_report
from ccanalytics.sandbox import (
    FULL_ACCESS_KEY,
    IN_PROCESS_URL,
    SECRET_PREFIX,
    SandboxApp,
    SandboxTransport,
    make_cluster_pods,
)


class Page(HTMLParser):
    """What a reader (or a browser) would see: tags and attributes, paragraphs, tables."""

    def __init__(self, document: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.paragraphs: list[str] = []
        self.headings: list[str] = []
        self._paragraph: list[str] | None = None
        self._heading: list[str] | None = None
        self.feed(document)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "p":
            self._paragraph = []
        if tag in ("h1", "h2", "h3"):
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self._paragraph is not None:
            self.paragraphs.append("".join(self._paragraph))
            self._paragraph = None
        if tag in ("h1", "h2", "h3") and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None

    def handle_data(self, data: str) -> None:
        for sink in (self._paragraph, self._heading):
            if sink is not None:
                sink.append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for t, attrs in self.tags if t == tag]


@pytest.fixture(scope="module")
def app() -> SandboxApp:
    return SandboxApp()


@pytest.fixture(scope="module")
def document(fleet_report: str) -> str:
    """render_report on every sandbox cluster at NOW (conftest.py: rendered once a run)."""
    return fleet_report


@pytest.fixture(scope="module")
def page(document: str) -> Page:
    return Page(document)


@pytest.fixture
def client() -> Iterator[Client]:
    with Client(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=SandboxTransport()) as c:
        yield c


ALL_CLUSTERS = sorted(SandboxApp().data.clusters)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """write_report on every sandbox cluster at NOW, with CSVs: its summary and folder.

    Rendered once (a pool of drawing processes, every figure: seconds) for the tests
    that only read it; a test that writes makes its own folder."""
    folder = tmp_path_factory.mktemp("written")
    with Client(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=SandboxTransport()) as c:
        summary = write_report(
            ALL_CLUSTERS, folder / "report.html", client=c, csv_dir=folder / "csv", now=NOW
        )
    return summary, folder


# ---------------------------------------------------------------------------------
# Self-contained


@pytest.mark.slow
def test_nothing_is_loaded_from_outside(page: Page, document: str) -> None:
    for tag, attrs in page.tags:
        for name in ("src", "href", "srcset", "poster", "data", "action"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith(("data:", "#")), (tag, name, value[:60])
    assert page.all("script") == [] and page.all("link") == [] and page.all("iframe") == []
    for marker in ("http://", "https://", "url(", "@import"):
        assert marker not in document


def test_figures_are_embedded_png(page: Page) -> None:
    images = page.all("img")
    # 2 waste charts, 2 cost breakdowns, cost vs utilization, and by-rank + heatmap for
    # the default 3 of the 6 multi-rank clusters
    assert len(images) == 5 + 2 * 3
    for attrs in images:
        src = attrs["src"] or ""
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(b"\x89PNG\r\n\x1a\n")
        assert attrs.get("alt")


# ---------------------------------------------------------------------------------
# The first screen


def test_first_paragraph_states_cost_idle_stragglers_and_states(
    page: Page, frames: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    pods, _ = frames
    first = page.paragraphs[0]
    total = pods["cost"].sum()
    assert f"{total:,.2f} USD/h in total" in first
    assert (
        f"about {total * 24:,.0f} USD per day and {total * 24 * 30:,.0f} USD per 30 days" in first
    )
    assert "7.95 USD/h (0.8% of the total) for 6 idle GPU pods" in first
    assert "rank 13 of cl-llama70b-train at 46.9%" in first and "median of 93.2%" in first
    assert "Every running pod reports metrics." in first
    not_running = pods[pods["status"] != "RUNNING"]
    states = not_running["status"].str.lower().value_counts()
    assert f"{len(not_running)} pods are not running (" in first
    for state, n in states.items():
        assert f"{n} {state}" in first


def test_title_and_generation_time_come_first(page: Page, document: str) -> None:
    assert page.headings[0] == "GPU fleet report"
    assert "Generated 2026-11-20 12:05 UTC" in document
    assert document.index("Generated") < document.index("USD/h in total")


def test_tables_for_clusters_idle_pods_stragglers_gpu_types_and_silent_pods(page: Page) -> None:
    assert {"Clusters", "Idle pods", "Straggling ranks", "Cost by GPU type"} <= set(page.headings)
    assert "Pods not running" in page.headings
    # No "Running pods without metrics" section: every running sandbox pod reports.
    # Clusters and Idle pods each fold their further columns into a second table, and
    # the first screen folds the reading's figures.
    assert "Running pods without metrics" not in page.headings
    assert len(page.all("table")) == 7
    assert len(page.all("details")) == 3


def test_straggler_table_row(document: str) -> None:
    row = document[document.index('id="stragglers"') :].split("</tr>")[1]
    assert "cl-llama70b-train" in row and ">13<" in row and ">46.9<" in row and ">93.2<" in row


def test_the_clusters_with_findings_are_drawn_and_the_other_gpu_clusters_named(
    page: Page,
) -> None:
    # The default draws 3: the straggler's cluster and the two with idle pods are the
    # three with findings; the other multi-rank GPU clusters are named under the plots
    # (not cl-etl-cpu: no GPUs).
    drawn = {h for h in page.headings if h.startswith("cl-")}
    assert drawn == {"cl-llama70b-train", "cl-infer-prod", "cl-research-dev"}
    note = next(p for p in page.paragraphs if "Not drawn (see the tables): " in p)
    assert note.endswith("Not drawn (see the tables): cl-bringup, cl-finetune-7b, cl-slurm-hpc.")


@pytest.mark.slow
def test_rank_plots_are_capped(frames: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    pods, gpus = frames
    page = Page(render_report(pods, gpus, max_rank_plots=2))
    # Clusters with findings first (stragglers, idle pods), then the most expensive.
    assert [h for h in page.headings if h.startswith("cl-")] == [
        "cl-llama70b-train",
        "cl-infer-prod",
    ]
    assert any("Not drawn (see the tables): " in p for p in page.paragraphs)


# ---------------------------------------------------------------------------------
# Safety


def test_no_secret_and_no_api_key(document: str, app: SandboxApp) -> None:
    assert SECRET_PREFIX not in document
    assert FULL_ACCESS_KEY not in document
    for secret in app.data.secrets():
        assert secret not in document


def test_text_from_the_api_is_escaped(frames: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    pods, gpus = (f[f["cluster_id"] == "cl-infer-prod"].copy() for f in frames)
    evil_cluster = 'cl-<img src=x onerror="alert(1)">'
    pods["cluster_id"] = pods["cluster_id"].replace("cl-infer-prod", evil_cluster)
    gpus["cluster_id"] = gpus["cluster_id"].replace("cl-infer-prod", evil_cluster)
    pods.loc[pods["name"] == "infer-prod-vllm-004", "name"] = "<script>alert(2)</script>"
    document = render_report(pods, gpus, title="<b>weekly</b> & co")
    page = Page(document)
    assert page.all("script") == []
    assert all((a.get("src") or "").startswith("data:") for a in page.all("img"))
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in document
    assert "cl-&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in document
    assert "&lt;b&gt;weekly&lt;/b&gt; &amp; co" in document


# ---------------------------------------------------------------------------------
# Determinism and edge cases


def test_without_a_time_no_time_is_shown(frames: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    pods, gpus = frames
    small = pods[pods["cluster_id"] == "cl-etl-cpu"]
    assert "Generated" not in render_report(small, gpus.iloc[:0])


def test_clusters_without_pods_are_named(frames: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    pods, gpus = frames
    small = pods[pods["cluster_id"] == "cl-etl-cpu"]
    document = render_report(small, gpus.iloc[:0], cluster_ids=["cl-etl-cpu", "cl-empty"])
    assert "Clusters with no pods: cl-empty." in document


def test_an_empty_fleet_renders_without_plots() -> None:
    page = Page(render_report(pods_frame([]), gpus_frame([])))
    assert page.paragraphs[0] == "Nothing to do: no idle pod and no straggling rank."
    assert "0.00 USD/h in total" in page.paragraphs[1]
    assert page.all("img") == []
    assert any("no data to draw" in p for p in page.paragraphs)


def test_a_cpu_only_fleet_says_nothing_is_idle(frames: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    pods, gpus = frames
    page = Page(render_report(pods[pods["cluster_id"] == "cl-etl-cpu"], gpus.iloc[:0]))
    assert page.paragraphs[0] == "Nothing to do: no idle pod and no straggling rank."
    first = page.paragraphs[1]
    assert "The 1 cluster (5 pods) costs 1.44 USD/h" in first
    assert "No running GPU pod is idle" in first and "No rank straggles." in first
    assert "Every running pod reports metrics." in first


def test_several_stragglers_are_each_named_with_their_median() -> None:
    listing = make_cluster_pods("cl-small", 8, straggler_ranks=(2, 5))
    page = Page(render_report(pods_frame(listing), gpus_frame(listing)))
    first = page.paragraphs[0]
    assert "2 ranks straggle" in first
    assert "rank 2 of cl-small at " in first and "rank 5 of cl-small at " in first
    assert first.count("(median ") == 2


# ---------------------------------------------------------------------------------
# write_report


def test_write_report_writes_html_csv_and_returns_a_summary(written: tuple[str, Path]) -> None:
    summary, folder = written
    output = folder / "report.html"
    assert "\n" not in summary
    assert "1,010.09 USD/h" in summary and "rank 13 of cl-llama70b-train" in summary
    assert str(output) in summary
    assert Page(output.read_text(encoding="utf-8")).paragraphs[0] in summary
    assert sorted(p.name for p in (folder / "csv").iterdir()) == sorted(CSV_FILES)
    read = {name: pd.read_csv(folder / "csv" / name) for name in CSV_FILES}
    assert len(read["pods.csv"]) == 70 and len(read["summary.csv"]) == 7
    # One row per paid GPU: those of pods that do not report (cl-bringup) included.
    clusters = SandboxApp().data.clusters
    paid = sum(len(gpus_frame(clusters[c], cluster_id=c)) for c in ALL_CLUSTERS)
    assert len(read["idle.csv"]) == 6 and len(read["gpus.csv"]) == paid
    assert read["stragglers.csv"].loc[0, ["cluster_id", "rank"]].tolist() == [
        "cl-llama70b-train",
        13,
    ]
    for name in CSV_FILES:
        assert SECRET_PREFIX not in (folder / "csv" / name).read_text(encoding="utf-8")
    assert oct(output.stat().st_mode & 0o777) == oct(0o644)


@pytest.mark.slow
def test_write_report_is_deterministic_except_the_time(
    written: tuple[str, Path], client: Client, tmp_path: Path
) -> None:
    # The shared report is one render; this is a second, independent one of the same
    # clusters at the same time (its CSVs change nothing in the HTML).
    first, second = written[1] / "report.html", tmp_path / "b.html"
    write_report(ALL_CLUSTERS, second, client=client, now=NOW)
    # The reading's time (when the service answered) is the only thing that may differ.
    stamp = re.compile(rb"taken at \d{4}-\d\d-\d\d \d\d:\d\d UTC")
    assert stamp.sub(b"", first.read_bytes()) == stamp.sub(b"", second.read_bytes())


@pytest.mark.slow
def test_a_single_cluster_id_string_is_accepted(client: Client, tmp_path: Path) -> None:
    summary = write_report("cl-finetune-7b", tmp_path / "r.html", client=client)
    assert summary.startswith("The 1 cluster (4 pods) costs 60.48 USD/h")


def test_missing_output_directory_fails_before_any_request(tmp_path: Path) -> None:
    app = SandboxApp()
    client = Client(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=SandboxTransport(app))
    with client, pytest.raises(ReportOutputError, match="does not exist"):
        write_report(ALL_CLUSTERS, tmp_path / "nope" / "r.html", client=client)
    assert app.count("GET", "/v2/clusters/cl-etl-cpu/pods") == 0


def test_a_failed_run_leaves_the_previous_report_intact(client: Client, tmp_path: Path) -> None:
    output = tmp_path / "report.html"
    output.write_text("yesterday's report", encoding="utf-8")
    with pytest.raises(FleetLoadError) as info:
        write_report(["cl-infer-prod", "cl-nope"], output, client=client)
    assert isinstance(info.value.errors["cl-nope"], NotFoundError)
    assert output.read_text(encoding="utf-8") == "yesterday's report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temp file left


def test_a_write_failure_leaves_no_temporary_file(
    client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_replace(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        write_report("cl-etl-cpu", tmp_path / "r.html", client=client)
    assert list(tmp_path.iterdir()) == []


def test_output_dash_writes_html_to_stdout(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = write_report("cl-etl-cpu", "-", client=client, now=NOW)
    out = capsys.readouterr().out
    assert out.startswith("<!DOCTYPE html>") and "standard output" in summary


def test_an_async_client_loads_the_clusters_too(tmp_path: Path) -> None:
    from ccanalytics import AsyncClient

    app = SandboxApp()
    client = AsyncClient(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=SandboxTransport(app))
    try:
        write_report(["cl-etl-cpu", "cl-bringup"], tmp_path / "r.html", client=client)
    finally:
        asyncio.run(client.aclose())
    assert (tmp_path / "r.html").stat().st_size > 0
    assert app.count("GET", "/v2/clusters/cl-bringup/pods") == 1


def test_no_cluster_ids_is_a_value_error(client: Client, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one"):
        write_report([], tmp_path / "r.html", client=client)


# ---------------------------------------------------------------------------------
# The command line, in process


@pytest.mark.slow
def test_cli_report_on_every_sandbox_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "report.html"
    code = main(["report", "--sandbox", "--output", str(output), "--csv", str(tmp_path / "csv")])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert "1,010.09 USD/h" in out and out.count("\n") == 1
    assert output.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (tmp_path / "csv" / "pods.csv").exists()


def test_cli_bad_output_directory_is_one_line_and_nonzero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["report", "--sandbox", "--output", "/nonexistent/dir/r.html"])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert err.startswith("ccanalytics report: ") and err.count("\n") == 1
    assert "/nonexistent/dir" in err and "Traceback" not in err


def test_cli_unknown_cluster_is_an_api_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["report", "cl-nope", "--sandbox", "--output", str(tmp_path / "r.html")])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.startswith("ccanalytics report: ") and err.count("\n") == 1
    assert "cl-nope" in err and "404" in err
    assert not (tmp_path / "r.html").exists()

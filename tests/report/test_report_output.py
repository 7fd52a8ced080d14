"""The report as a cron job: where it may write, what a failed cluster does, the options."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccanalytics import Client, FleetLoadError
from ccanalytics.cli import _report as cli_report, main
from ccanalytics.report import (
    MAX_RANK_PLOTS,
    ReportLoadError,
    ReportOutputError,
    write_report,
)
from ccanalytics.sandbox import FULL_ACCESS_KEY, IN_PROCESS_URL, SandboxApp, SandboxTransport


@pytest.fixture
def app() -> SandboxApp:
    return SandboxApp()


@pytest.fixture
def client(app: SandboxApp) -> Iterator[Client]:
    with Client(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=SandboxTransport(app)) as c:
        yield c


def _requests(app: SandboxApp) -> int:
    return sum(app.count("GET", f"/v2/clusters/{cid}/pods") for cid in app.data.clusters)


# ---------------------------------------------------------------------------------
# Where the report may go


def test_a_symlink_is_written_through_to_its_target(client: Client, tmp_path: Path) -> None:
    webroot, home = tmp_path / "www", tmp_path / "home"
    webroot.mkdir(), home.mkdir()
    (webroot / "fleet.html").write_text("yesterday", encoding="utf-8")
    link = home / "link.html"
    link.symlink_to(webroot / "fleet.html")
    write_report("cl-etl-cpu", link, client=client)
    assert link.is_symlink() and os.readlink(link) == str(webroot / "fleet.html")
    assert (webroot / "fleet.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in webroot.iterdir()) == ["fleet.html"]  # no temp file left
    assert sorted(p.name for p in home.iterdir()) == ["link.html"]


def test_a_dangling_symlink_creates_its_target(client: Client, tmp_path: Path) -> None:
    link = tmp_path / "link.html"
    link.symlink_to(tmp_path / "new.html")
    write_report("cl-etl-cpu", link, client=client)
    assert link.is_symlink() and (tmp_path / "new.html").stat().st_size > 0


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda p: p.mkdir(), "a directory"),
        (lambda p: os.mkfifo(p), "a named pipe"),
        (lambda p: p.symlink_to("/dev/null"), "a character device"),
    ],
)
def test_anything_but_a_regular_file_is_refused_before_loading(
    client: Client, app: SandboxApp, tmp_path: Path, make: Any, kind: str
) -> None:
    target = tmp_path / "out.html"
    make(target)
    with pytest.raises(ReportOutputError, match=kind):
        write_report("cl-etl-cpu", target, client=client)
    assert _requests(app) == 0


def test_an_unwritable_directory_fails_before_loading_without_temp_names(
    client: Client, app: SandboxApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(tmp_path / ".r.html.x7k2.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    with pytest.raises(ReportOutputError) as info:
        write_report("cl-etl-cpu", tmp_path / "r.html", client=client)
    message = str(info.value)
    assert message == f"cannot write {tmp_path / 'r.html'}: Permission denied"
    assert _requests(app) == 0


def test_a_failed_write_says_why_in_words(
    client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError) as info:  # ReportOutputError is an OSError
        write_report("cl-etl-cpu", tmp_path / "r.html", client=client)
    assert str(info.value) == f"cannot write {tmp_path / 'r.html'}: No space left on device"
    assert "[Errno" not in str(info.value) and ".tmp" not in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_csv_files_may_not_overwrite_the_report(
    client: Client, app: SandboxApp, tmp_path: Path
) -> None:
    with pytest.raises(ReportOutputError, match="would be overwritten"):
        write_report("cl-etl-cpu", tmp_path / "pods.csv", client=client, csv_dir=tmp_path)
    (tmp_path / "frames").write_text("a file", encoding="utf-8")
    with pytest.raises(ReportOutputError, match="not a directory"):
        write_report("cl-etl-cpu", tmp_path / "r.html", client=client, csv_dir=tmp_path / "frames")
    assert _requests(app) == 0


def test_cli_refuses_a_device_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["report", "--sandbox", "-o", "/dev/full"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == (
        "ccanalytics report: /dev/full is a character device; the report only replaces a "
        "regular file or creates a missing one\n"
    )


# ---------------------------------------------------------------------------------
# A cluster that fails


def test_collect_writes_the_report_with_a_could_not_load_section(
    client: Client, tmp_path: Path
) -> None:
    output = tmp_path / "r.html"
    summary = write_report(["cl-infer-prod", "cl-nope"], output, client=client, errors="collect")
    assert list(summary.errors) == ["cl-nope"] and "404" in str(summary.errors["cl-nope"])
    assert "1 cluster could not be loaded (cl-nope" in summary
    document = output.read_text(encoding="utf-8")
    section = document[document.index('id="could-not-load"') :]
    assert "Could not load" in section and "cl-nope" in section.split("</table>")[0]


def test_collect_with_nothing_loaded_writes_nothing(client: Client, tmp_path: Path) -> None:
    output = tmp_path / "r.html"
    output.write_text("yesterday", encoding="utf-8")
    with pytest.raises(ReportLoadError, match="no cluster could be loaded") as info:
        write_report(["cl-nope", "cl-gone"], output, client=client, errors="collect")
    assert set(info.value.errors) == {"cl-nope", "cl-gone"}
    assert output.read_text(encoding="utf-8") == "yesterday"


def test_raise_keeps_the_fleet_error(client: Client, tmp_path: Path) -> None:
    with pytest.raises(FleetLoadError):
        write_report(["cl-infer-prod", "cl-nope"], tmp_path / "r.html", client=client)
    assert not (tmp_path / "r.html").exists()


def test_cli_keep_going_writes_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "r.html"
    code = main(
        ["report", "cl-infer-prod", "cl-nope", "--sandbox", "-o", str(output), "--keep-going"]
    )
    out, err = capsys.readouterr()
    assert code == 1 and output.exists()
    assert "could not be loaded" in out
    assert err.startswith("ccanalytics report: 1 of 2 clusters could not be loaded (cl-nope: ")
    assert err.endswith("the report covers the others\n") and err.count("\n") == 1


def test_cli_without_keep_going_names_the_option_not_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "r.html"
    code = main(["report", "cl-infer-prod", "cl-nope", "--sandbox", "-o", str(output)])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and not output.exists()
    assert "--keep-going" in err and ".frame" not in err and err.count("\n") == 1


# ---------------------------------------------------------------------------------
# Options


def test_cli_defaults_are_the_library_defaults() -> None:
    from ccanalytics.cli import build_parser
    from ccanalytics.measures import Params

    args = build_parser().parse_args(["report", "-o", "x.html"])
    assert cli_report.rule_params(args) == Params()
    assert cli_report.MAX_RANK_PLOTS == MAX_RANK_PLOTS


@pytest.mark.slow
def test_cli_idle_threshold_and_rank_plot_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "r.html"
    argv = ["report", "--sandbox", "-o", str(output), "--max-rank-plots", "1"]
    assert main([*argv, "--idle-threshold", "0"]) == 0
    assert "No running GPU pod is idle" in capsys.readouterr().out
    assert output.read_text(encoding="utf-8").count("<h3>") == 1
    assert main([*argv, "--idle-threshold", "100"]) == 0
    assert "below 100% utilization" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv", [["--idle-threshold", "101"], ["--idle-threshold", "x"], ["--max-rank-plots", "-1"]]
)
def test_cli_bad_options_are_usage_errors(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["report", "--sandbox", "-o", str(tmp_path / "r.html"), *argv])
    assert info.value.code == 2 and "Traceback" not in capsys.readouterr().err

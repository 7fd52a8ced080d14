"""The CLI only parses and prints: what it used to decide lives once, in the library.

- ``audit-keys``' writers are ``keys``' (one column list, one key-type name table);
- the sandbox's defaults (every cluster when none is named, the in-process client)
  are ``sandbox``'s;
- the arguments that do not go together are refused by the library function, whose
  error the CLI spells with its flags (one rule, one message, two spellings).
"""

from __future__ import annotations

import csv
import importlib.util
import inspect
import io
import json
from datetime import timedelta
from pathlib import Path

import pytest

from ccanalytics.cli import main
from ccanalytics.errors import ArgumentsError

ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"


# -- audit-keys' writers ------------------------------------------------------------------


def test_the_writers_are_keys_and_the_cli_module_is_gone() -> None:
    from ccanalytics.keys import AUDIT_WRITERS

    assert sorted(AUDIT_WRITERS) == ["csv", "json", "table"]
    assert importlib.util.find_spec("ccanalytics.cli._audit_keys_output") is None


def test_one_column_list_for_the_frame_the_dict_the_csv_and_the_json() -> None:
    from ccanalytics.keys import AUDIT_COLUMNS, AUDIT_WRITERS, audit_keys, audit_lines

    columns = list(AUDIT_COLUMNS)
    assert list(audit_keys(ED25519 + " me@host\n").columns) == columns
    entry = audit_lines(ED25519 + " me@host\n")[0]
    assert list(entry.as_dict()) == columns
    for fmt, parse in (("csv", _csv_header), ("json", _json_keys)):
        out = io.StringIO()
        writer = AUDIT_WRITERS[fmt](out, several=False)
        writer.begin("k.txt")
        writer.entry("k.txt", entry)
        writer.end()
        writer.finish({"ok": 1, "warning": 0, "error": 0})
        assert parse(out.getvalue()) == ["file", *columns], fmt


def _csv_header(text: str) -> list[str]:
    return next(csv.reader(io.StringIO(text)))


def _json_keys(text: str) -> list[str]:
    return list(json.loads(text)[0])


def test_the_short_type_names_are_sshbufs() -> None:
    from ccanalytics.keys import short_type_name
    from ccanalytics.keys._sshbuf import _BY_NAME, KEY_TYPE_NAMES

    for name in KEY_TYPE_NAMES:
        assert short_type_name(name) == _BY_NAME[name].shortname
    assert short_type_name(None) == "-"
    assert short_type_name("ssh-unknown") == "ssh-unknown"


# -- the sandbox's defaults ---------------------------------------------------------------


def test_no_cluster_named_means_every_sandbox_cluster() -> None:
    from ccanalytics.sandbox import make_data, sandbox_cluster_ids

    assert sandbox_cluster_ids() == sorted(make_data().clusters)
    assert sandbox_cluster_ids(["cl-b", "cl-a"]) == ["cl-b", "cl-a"]  # as named


def test_the_in_process_client_talks_to_the_sandbox_without_a_socket() -> None:
    from ccanalytics.sandbox import in_process_client

    with in_process_client(timeout=5.0) as client:
        pods = client.list_cluster_pods("cl-infer-prod")
    assert len(pods) == 12


def test_the_simulated_clocks_defaults_are_the_sandboxs() -> None:
    from ccanalytics.sandbox import DEFAULT_SPEED, DEFAULT_START, simulated_clock

    assert simulated_clock(None, None) is None
    alone = simulated_clock(None, 10.0)
    assert alone is not None and alone.start == DEFAULT_START and alone.speed == 10.0
    started = simulated_clock(DEFAULT_START + timedelta(days=1), None)
    assert started is not None and started.speed == DEFAULT_SPEED == 60.0


def test_the_cli_help_names_the_sandboxs_default_start() -> None:
    from ccanalytics.cli import _sandbox
    from ccanalytics.sandbox import DEFAULT_SPEED, DEFAULT_START

    assert f"{DEFAULT_START:%Y-%m-%dT%H:%MZ}" == _sandbox._DEFAULT_SIMULATED_START
    assert f"(default {DEFAULT_SPEED:g} with --simulated-start)" in inspect.getsource(_sandbox)


# -- arguments that do not go together: the library's rule, the CLI's spelling -------------


def test_write_reports_refusals_are_arguments_errors(tmp_path: Path) -> None:
    from ccanalytics.report import write_report

    out = tmp_path / "r.html"
    with pytest.raises(ArgumentsError) as caught:
        write_report(["cl-a"], out, window=timedelta(hours=1))
    assert caught.value.names == ("window", "store")
    assert str(caught.value) == "window= needs store="
    assert caught.value.spelled(lambda name: "--" + name) == "--window needs --store"
    with pytest.raises(ArgumentsError, match="policy= needs store="):
        write_report(["cl-a"], out, policy=tmp_path / "p.toml")
    with pytest.raises(ArgumentsError, match="name at least one cluster id"):
        write_report([], out)


def test_checks_refusals_are_arguments_errors(tmp_path: Path) -> None:
    from ccanalytics.history import check

    with pytest.raises(ArgumentsError) as caught:
        check(tmp_path)
    assert caught.value.names == ("max_idle_cost", "max_stragglers", "policy")
    with pytest.raises(ArgumentsError) as caught:
        check(tmp_path, max_idle_cost=1.0, textfile=tmp_path / "x.prom")
    assert caught.value.names == ("textfile", "policy")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["report", "--sandbox", "-o", "r.html", "--window", "1h"],
            "ccanalytics report: --window needs --store\n",
        ),
        (
            ["report", "--sandbox", "-o", "r.html", "--policy", "p.toml"],
            "ccanalytics report: --policy needs --store\n",
        ),
        (
            ["check", "--store", "s"],
            "ccanalytics check: give at least one threshold (--max-idle-cost, "
            "--max-stragglers, ...) or --policy\n",
        ),
        (
            ["check", "--store", "s", "--max-idle-cost", "1", "--textfile", "t.prom"],
            "ccanalytics check: --textfile writes the figures a --policy judges: give --policy\n",
        ),
    ],
)
def test_the_cli_spells_the_librarys_refusal_with_its_flags(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = [str(tmp_path / a) if a in ("r.html", "s", "t.prom", "p.toml") else a for a in argv]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == message.replace("r.html", str(tmp_path / "r.html"))


def test_the_cli_modules_hold_no_copy_of_the_rules() -> None:
    from ccanalytics.cli import _check, _report

    assert "at least one threshold" not in inspect.getsource(_check)
    assert "writes the figures" not in inspect.getsource(_check)
    assert "needs --store" not in inspect.getsource(_report)

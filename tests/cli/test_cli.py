"""The ``ccanalytics`` command, in process and as a real process."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import time

import httpx
import pandas as pd
import pytest

from ccanalytics.cli import main
from ccanalytics.sandbox import FULL_ACCESS_KEY


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_pods_table_on_the_sandbox_shows_a_readable_set_of_columns(capsys) -> None:
    from ccanalytics.cli._pods import TABLE_COLUMNS

    code, out, err = run(capsys, "pods", "cl-etl-cpu", "cl-infer-prod", "--sandbox")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == list(TABLE_COLUMNS)
    assert len(lines) == 2 + 17  # the names, their units, the pods
    assert max(map(len, lines)) <= 120  # was 631 with every column


def test_pods_columns_all_and_a_chosen_list(capsys) -> None:
    from ccanalytics.frames import pods_frame

    _, out, _ = run(capsys, "pods", "cl-etl-cpu", "--sandbox", "--columns", "all")
    assert out.splitlines()[0].split() == [*pods_frame([]).columns, "observed_at"]
    _, out, _ = run(
        capsys, "pods", "cl-etl-cpu", "--sandbox", "--format", "csv", "--columns", "name,cost"
    )
    frame = pd.read_csv(io.StringIO(out))
    assert list(frame.columns) == ["name", "cost"] and len(frame) == 5


def test_every_documented_column_can_be_chosen(capsys) -> None:
    from ccanalytics.cli._pods import column_list
    from ccanalytics.frames import pods_frame

    every = [*pods_frame([]).columns, "observed_at"]
    assert column_list(",".join(every)) == every


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("pods.csv", lambda p: list(pd.read_csv(p).columns)[:2] == ["cluster_id", "pod_id"]),
        ("pods.JSON", lambda p: len(json.loads(p.read_text())) == 6),
        ("pods.parquet", lambda p: str(pd.read_parquet(p)["rank"].dtype) == "Int64"),
        ("pods.txt", lambda p: p.read_text().split()[:2] == ["cluster_id", "name"]),
    ],
)
def test_pods_format_follows_the_output_extension(capsys, tmp_path, name, check) -> None:
    target = tmp_path / name
    code, out, err = run(capsys, "pods", "cl-bringup", "--sandbox", "-o", str(target))
    assert (code, out, err) == (0, "", "")
    assert check(target)


def test_an_unknown_extension_is_refused_before_loading(capsys, tmp_path) -> None:
    target = tmp_path / "pods.xlsx"
    code, out, err = run_wrong(capsys, ["pods", "nope", "--sandbox", "-o", str(target)])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "cannot tell the format" in err and "--format" in err
    # Refused before the (failing) load; the path is left out: pytest's folder for this
    # run may be numbered 404 (/tmp/pytest-of-root/pytest-404/..., as it once was).
    assert "404" not in err.replace(str(target), "<target>")
    assert not target.exists()
    code, _, _ = run_wrong(
        capsys, ["pods", "cl-bringup", "--sandbox", "-o", str(target), "--format", "csv"]
    )
    assert code == 0 and len(pd.read_csv(target)) == 6


def test_an_output_in_a_missing_directory_is_refused(capsys, tmp_path) -> None:
    target = tmp_path / "no" / "pods.csv"
    code, _, err = run_wrong(capsys, ["pods", "cl-bringup", "--sandbox", "-o", str(target)])
    assert code == 2 and "does not exist" in err


def test_a_multi_cluster_load_shows_progress_on_a_terminal(tmp_path) -> None:
    import fcntl
    import os
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    # A new pty is 0 columns wide: tqdm would draw an empty bar. Make it a real terminal's.
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    target = tmp_path / "pods.csv"
    argv = ["pods", "cl-etl-cpu", "cl-infer-prod", "cl-bringup", "--sandbox", "-o", str(target)]
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    done = subprocess.run(
        [sys.executable, "-m", "ccanalytics", *argv],
        stderr=follower,
        stdout=subprocess.PIPE,
        env=env,
        timeout=120,
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert done.returncode == 0 and done.stdout == b""
    assert b"clusters" in shown and b"3/3" in shown
    quiet = subprocess.run(
        [sys.executable, "-m", "ccanalytics", *argv],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert quiet.returncode == 0 and quiet.stderr == b""  # not a terminal: no progress


def test_pods_csv_parses_back_with_the_frame_columns(capsys) -> None:
    from ccanalytics.frames import pods_frame

    code, out, _ = run(
        capsys, "pods", "cl-infer-prod", "cl-etl-cpu", "--sandbox", "--format", "csv"
    )
    assert code == 0
    frame = pd.read_csv(io.StringIO(out))
    assert list(frame.columns) == [*pods_frame([]).columns, "observed_at"]
    assert len(frame) == 17


def test_pods_json_is_a_list_of_records(capsys) -> None:
    code, out, _ = run(capsys, "pods", "cl-bringup", "--sandbox", "--format", "json")
    records = json.loads(out)
    assert code == 0 and len(records) == 6
    assert records[3]["rank"] is None  # a pending pod has no rank yet


def test_pods_parquet_keeps_dtypes(capsys, tmp_path) -> None:
    target = tmp_path / "pods.parquet"
    code, _, _ = run(
        capsys, "pods", "cl-bringup", "--sandbox", "--format", "parquet", "-o", str(target)
    )
    assert code == 0
    frame = pd.read_parquet(target)
    assert str(frame["rank"].dtype) == "Int64" and len(frame) == 6


def test_parquet_to_stdout_is_a_usage_error(capsys) -> None:
    code, out, err = run(capsys, "pods", "cl-bringup", "--sandbox", "--format", "parquet")
    assert code == 2 and "needs --output" in err and out == ""


def test_api_failure_is_one_line_on_stderr_and_exit_1(capsys) -> None:
    code, out, err = run(capsys, "pods", "cl-etl-cpu", "nope", "--sandbox")
    assert code == 1 and out == ""
    assert err.startswith("ccanalytics pods: ") and err.count("\n") == 1
    assert "nope" in err and "404" in err


def test_missing_configuration_is_a_clear_message(capsys, monkeypatch) -> None:
    monkeypatch.delenv("CCANALYTICS_API_KEY", raising=False)
    monkeypatch.delenv("CCANALYTICS_BASE_URL", raising=False)
    code, _, err = run(capsys, "pods", "cl-etl-cpu")
    assert code == 2 and "CCANALYTICS_API_KEY" in err and "Traceback" not in err


def test_usage_errors_exit_2(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["pods"])
    assert info.value.code == 2
    assert "CLUSTER_ID" in capsys.readouterr().err


def test_every_command_has_an_example(capsys) -> None:
    for command in ("pods", "report", "audit-keys", "sandbox"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "Example:" in capsys.readouterr().out


def test_python_dash_m_and_help_do_not_import_heavy_modules() -> None:
    code = (
        "import sys, runpy\n"
        "sys.argv = ['ccanalytics', '--help']\n"
        "try:\n    runpy.run_module('ccanalytics', run_name='__main__')\n"
        "except SystemExit as e:\n    assert e.code == 0\n"
        "heavy = [m for m in ('pandas', 'matplotlib', 'pydantic', 'httpx') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "usage: ccanalytics" in out
    assert "HEAVY []" in out


def test_sandbox_command_serves_real_http() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccanalytics", "sandbox", "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert f"127.0.0.1:{port}" in banner
        deadline = time.monotonic() + 10
        while True:
            try:
                r = httpx.get(
                    f"http://127.0.0.1:{port}/v2/clusters/cl-etl-cpu/pods",
                    headers={"Authorization": f"Bearer {FULL_ACCESS_KEY}"},
                )
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert r.status_code == 200 and len(r.json()["pods"]) == 5
        assert "RateLimit" in r.headers
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# --------------------------------------------------------------------------- wrong arguments


def run_wrong(capsys, argv: list[str]) -> tuple[int, str, str]:
    """Run in process: argparse exits with SystemExit, a command returns its status."""
    try:
        code = main(argv)
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


WRONG_ARGUMENTS = {
    "pods without a cluster": (["pods"], "CLUSTER_ID"),
    "pods --format xml": (["pods", "cl-a", "--format", "xml"], "invalid choice: 'xml'"),
    "pods --timeout -1": (["pods", "cl-a", "--sandbox", "--timeout", "-1"], "above 0, not -1"),
    "pods --timeout 0": (["pods", "cl-a", "--sandbox", "--timeout", "0"], "above 0, not 0"),
    "pods --timeout abc": (["pods", "cl-a", "--timeout", "abc"], "not 'abc'"),
    "pods --timeout inf": (["pods", "cl-a", "--timeout", "inf"], "not 'inf'"),
    "pods --bogus": (["pods", "cl-a", "--bogus"], "unknown option --bogus"),
    "report without -o": (["report", "--sandbox"], "--output"),
    "report --timeout -1": (["report", "--sandbox", "-o", "r.html", "--timeout", "-1"], "not -1"),
    "audit-keys --format xml": (["audit-keys", "--format", "xml"], "invalid choice: 'xml'"),
    "audit-keys missing file": (["audit-keys", "/no/such/keys"], "No such file or directory"),
    "sandbox --port 99999": (["sandbox", "--port", "99999"], "0 to 65535, not 99999"),
    "sandbox --port -1": (["sandbox", "--port", "-1"], "0 to 65535, not -1"),
    "sandbox --port http": (["sandbox", "--port", "http"], "not 'http'"),
    "sandbox --latency -1": (["sandbox", "--latency", "-1"], "0 or more, not -1"),
    "sandbox --quota 0": (["sandbox", "--quota", "0", "--quota-window", "3"], "at least 1, not 0"),
    "sandbox --quota-window 0": (
        ["sandbox", "--quota", "5", "--quota-window", "0"],
        "above 0, not 0",
    ),
    "sandbox --quota alone": (
        ["sandbox", "--quota", "5"],
        "--quota and --quota-window go together",
    ),
    "sandbox --quota-window alone": (
        ["sandbox", "--quota-window", "3"],
        "--quota and --quota-window go together",
    ),
    # No command at all lists the commands (exit 2): tests/cli/test_exit_statuses.py.
    "unknown command": (["serve"], "invalid choice: 'serve'"),
}


@pytest.mark.parametrize("case", list(WRONG_ARGUMENTS))
def test_a_wrong_argument_is_one_line_and_exit_2(capsys, case: str) -> None:
    argv, words = WRONG_ARGUMENTS[case]
    code, out, err = run_wrong(capsys, argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("ccanalytics"), err
    assert words in err
    assert "Traceback" not in err


def test_a_wrong_argument_in_a_real_process_has_no_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ccanalytics", "sandbox", "--port", "99999"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "ccanalytics sandbox: argument --port: a port is 0 to 65535, not 99999"
        " (see 'ccanalytics sandbox --help')\n"
    )


def test_no_api_key_tells_a_cli_user_about_sandbox_and_the_variable(capsys, monkeypatch) -> None:
    monkeypatch.delenv("CCANALYTICS_API_KEY", raising=False)
    monkeypatch.setenv("CCANALYTICS_BASE_URL", "http://127.0.0.1:9")
    code, out, err = run(capsys, "pods", "cl-etl-cpu")
    assert code == 2 and out == ""
    assert err == (
        "ccanalytics pods: no API key: set CCANALYTICS_API_KEY (and CCANALYTICS_BASE_URL),"
        " or add --sandbox to run against the embedded sandbox\n"
    )
    assert "api_key=" not in err


def test_no_base_url_tells_a_cli_user_about_sandbox_and_the_variable(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CCANALYTICS_API_KEY", "k")
    monkeypatch.delenv("CCANALYTICS_BASE_URL", raising=False)
    code, _, err = run(capsys, "pods", "cl-etl-cpu")
    assert code == 2
    assert "set CCANALYTICS_BASE_URL" in err and "--sandbox" in err and "base_url=" not in err


def test_a_partly_failed_fleet_load_names_the_cluster_not_a_python_attribute(capsys) -> None:
    code, out, err = run(capsys, "pods", "cl-infer-prod", "nope", "--sandbox")
    assert code == 1
    assert out == ""
    assert err.startswith("ccanalytics pods: 1 of 2 clusters failed to load: nope: ")
    assert ".frame" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("spelling", ["--quota-window", "--window"])
def test_the_sandbox_quota_window_and_its_old_spelling(
    spelling: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # "window" is a history span everywhere else; the rate-limit window says so in its name.
    served: dict[str, object] = {}
    monkeypatch.setattr("ccanalytics.sandbox.serve", lambda **options: served.update(options))
    assert main(["sandbox", "--port", "0", "--quota", "5", spelling, "60"]) == 0
    assert served["rate_limits"] == {"minute": (5, 60.0)}
    err = capsys.readouterr().err
    if spelling == "--window":
        assert "--window is now --quota-window" in err
    else:
        assert err == ""

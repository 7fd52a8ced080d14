"""``audit-keys`` on the command line, run as a user runs it: in a subprocess.

Exit status 0/1/2, table/csv/json output that parses back, standard input, a clean
one-line message for unreadable files, no pandas or matplotlib, and a 20,000-line
file audited in about the time ``ssh-keygen -lf`` takes.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SSH_KEYGEN = shutil.which("ssh-keygen")
pytestmark = pytest.mark.skipif(SSH_KEYGEN is None, reason="ssh-keygen is not installed")
CLI = [sys.executable, "-m", "ccanalytics", "audit-keys"]


def generate(directory: Path, specs: dict[str, list[str]]) -> dict[str, str]:
    """``name -> .pub line`` for keys generated in parallel batches."""
    assert SSH_KEYGEN is not None
    names = list(specs)
    for start in range(0, len(names), 32):
        procs = [
            subprocess.Popen(
                [SSH_KEYGEN, "-q", *specs[n], "-N", "", "-C", f"{n}@cli", "-f", str(directory / n)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for n in names[start : start + 32]
        ]
        for proc in procs:
            proc.wait(timeout=120)
    return {n: (directory / f"{n}.pub").read_text().rstrip("\n") for n in names}


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return generate(
        tmp_path_factory.mktemp("cli-keys"),
        {
            "ed25519": ["-t", "ed25519"],
            "ecdsa": ["-t", "ecdsa"],
            "rsa2048": ["-t", "rsa", "-b", "2048"],
        },
    )


def audit(*args: str, stdin: str | bytes | None = None) -> subprocess.CompletedProcess[str]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run([*CLI, *args], input=data, capture_output=True, timeout=120)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


Writer = Callable[..., str]


@pytest.fixture
def write(tmp_path: Path) -> Writer:
    """``write(name, *lines)`` makes a key file and returns its path."""

    def write(name: str, *lines: str) -> str:
        path = tmp_path / name
        path.write_text("".join(line + "\n" for line in lines))
        return str(path)

    return write


def test_all_good_keys_exit_0(keys: dict[str, str], write: Writer) -> None:
    done = audit(write("ok", keys["ed25519"], keys["ecdsa"]))
    assert done.returncode == 0, done.stdout
    assert "2 entries: 2 ok" in done.stdout


def test_warnings_exit_0_without_strict_and_1_with_it(keys: dict[str, str], write: Writer) -> None:
    path = write("warn", keys["ed25519"], keys["rsa2048"])
    assert audit(path).returncode == 0
    assert audit("--strict", path).returncode == 1


def test_any_error_exits_5_even_without_strict(keys: dict[str, str], write: Writer) -> None:
    done = audit(write("err", keys["ed25519"], "ssh-ed25519 AAAAnot-a-key"))
    assert done.returncode == 5  # a key has errors: its own status
    assert "1 with errors" in done.stdout


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_missing_file_is_one_line_on_stderr_nothing_on_stdout_and_exit_2(
    keys: dict[str, str], write: Writer, fmt: str
) -> None:
    done = audit("--format", fmt, write("ok", keys["ed25519"]), "/no/such/file")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "ccanalytics audit-keys: cannot read /no/such/file: No such file or directory"
    )
    assert done.stdout == ""


def test_a_directory_is_unreadable_not_a_traceback(
    keys: dict[str, str], write: Writer, tmp_path: Path
) -> None:
    done = audit(write("ok", keys["ed25519"]), str(tmp_path))
    assert done.returncode == 2
    assert done.stderr == f"ccanalytics audit-keys: cannot read {tmp_path}: Is a directory\n"
    assert done.stdout == ""


def test_table_is_aligned_and_names_the_problems(keys: dict[str, str], write: Writer) -> None:
    done = audit(write("t", keys["ed25519"], "  " + keys["rsa2048"]))
    header, first, second = done.stdout.splitlines()[:3]
    assert header.split() == [
        "LINE",
        "STATUS",
        "TYPE",
        "BITS",
        "FINGERPRINT",
        "COMMENT",
        "PROBLEMS",
    ]
    column = header.index("FINGERPRINT")
    assert first[column:].startswith("SHA256:")
    assert second[column:].startswith("SHA256:")
    assert "starts with whitespace" in done.stdout


def test_csv_parses_back(keys: dict[str, str], write: Writer) -> None:
    path = write("c", keys["ed25519"], keys["rsa2048"], "garbage")
    rows = list(csv.DictReader(io.StringIO(audit("--format", "csv", path).stdout)))
    assert [(r["line_no"], r["status"], r["key_valid"]) for r in rows] == [
        ("1", "ok", "true"),
        ("2", "warning", "true"),
        ("3", "error", "false"),
    ]
    assert rows[1]["bits"] == "2048"
    assert rows[0]["file"] == path


def test_json_parses_back(keys: dict[str, str], write: Writer) -> None:
    path = write("j", "no-pty " + keys["ed25519"])
    (row,) = json.loads(audit("--format", "json", path).stdout)
    assert row["fingerprint"].startswith("SHA256:")
    assert (row["api_valid"], row["key_valid"], row["options"]) == (False, True, ["no-pty"])
    assert isinstance(row["problems"], list)


@pytest.mark.parametrize("args", [(), ("-",)], ids=["no file", "dash"])
def test_standard_input_is_read(keys: dict[str, str], args: tuple[str, ...]) -> None:
    done = audit("--format", "json", *args, stdin=keys["ed25519"] + "\r\n")
    (row,) = json.loads(done.stdout)
    assert row["file"] == "-"
    assert any("CRLF" in p for p in row["problems"])
    assert done.returncode == 5  # a key has errors: its own status


def test_private_key_on_stdin_is_not_echoed(tmp_path: Path) -> None:
    assert SSH_KEYGEN is not None
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "k")], check=True
    )
    private = (tmp_path / "k").read_text()
    for fmt in ("table", "csv", "json"):
        done = audit("--format", fmt, stdin=private)
        assert done.returncode == 5  # a key has errors: its own status
        assert "private key" in done.stdout
        for secret in private.splitlines()[1:-1]:
            assert secret not in done.stdout + done.stderr


def test_terminal_control_characters_in_comments_are_escaped(
    keys: dict[str, str], write: Writer
) -> None:
    done = audit(write("esc", keys["ed25519"] + " evil\x1b[2Jcomment"))
    assert "\x1b" not in done.stdout
    assert "\\x1b" in done.stdout


def test_help_has_an_example() -> None:
    done = audit("--help")
    assert done.returncode == 0
    assert "Example:" in done.stdout


def test_no_pandas_or_matplotlib_after_an_audit(keys: dict[str, str], write: Writer) -> None:
    path = write("light", keys["ed25519"], keys["rsa2048"])
    code = (
        "import sys, contextlib, io\n"
        "from ccanalytics.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['audit-keys', {path!r}, '--format', 'json'])\n"
        "print([m for m in ('pandas', 'matplotlib', 'httpx', 'pydantic') if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


_CORPUS_CERT = (
    Path(__file__).parent
    / "data/openssh_regress/regress/unittests/sshkey/testdata/ed25519_1-cert.pub"
)


@pytest.mark.parametrize("certificate", [False, True], ids=["plain keys", "a certificate"])
def test_cryptography_is_imported_only_to_check_a_certificate(
    keys: dict[str, str], write: Writer, certificate: bool
) -> None:
    lines = [keys["ed25519"], keys["rsa2048"]]
    if certificate:
        lines.append(_CORPUS_CERT.read_text().strip())
    path = write("crypto", *lines)
    code = (
        "import sys, contextlib, io\n"
        "from ccanalytics.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['audit-keys', {path!r}, '--format', 'json'])\n"
        "print('cryptography' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(certificate)


def test_add_parser_registers_audit_keys_with_run() -> None:
    import argparse

    from ccanalytics.cli import _audit_keys as _keys_cli

    parser = argparse.ArgumentParser()
    _keys_cli.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["audit-keys", "--format", "csv", "--strict", "a", "b"])
    assert (args.func, args.format, args.strict, args.files) == (
        _keys_cli.run,
        "csv",
        True,
        ["a", "b"],
    )


# --------------------------------------------------------------------------- hardening


def test_a_binary_file_is_reported_once_as_not_text(keys: dict[str, str], tmp_path: Path) -> None:
    binary = tmp_path / "id_ed25519.tar.gz"
    binary.write_bytes(bytes(range(256)) * 64 + b"\nssh-ed25519 AAAA\n" * 40)
    done = audit(str(binary))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"ccanalytics audit-keys: {binary} is not a text file (it holds binary data); no keys read\n"
    )


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_utf16_file_as_powershell_writes_it_is_audited(
    keys: dict[str, str], tmp_path: Path, codec: str
) -> None:
    path = tmp_path / "keys.txt"
    text = "\ufeff" + keys["ed25519"] + "\r\n" + keys["ecdsa"] + "\r\n"
    path.write_bytes(text.encode(codec))
    rows = json.loads(audit("--format", "json", str(path)).stdout)
    assert [(r["line_no"], r["key_valid"]) for r in rows] == [(1, True), (2, True)]
    assert all(any("CRLF" in p for p in r["problems"]) for r in rows)
    assert not any("byte order mark" in p for r in rows for p in r["problems"])


def test_the_same_key_in_two_files_is_a_duplicate(keys: dict[str, str], write: Writer) -> None:
    first = write("a.pub", keys["ed25519"])
    second = write("b.pub", keys["ecdsa"], keys["ed25519"].rsplit(" ", 1)[0] + " other@pc")
    done = audit("--format", "json", first, second)
    rows = json.loads(done.stdout)
    assert [(r["file"], r["line_no"], r["status"]) for r in rows] == [
        (first, 1, "ok"),
        (second, 1, "ok"),
        (second, 2, "warning"),
    ]
    assert rows[2]["problems"] == [f"Duplicate key: the same key is already on line 1 of {first}."]
    assert audit("--strict", first, second).returncode == 1


def test_a_named_pipe_without_a_writer_is_refused_not_waited_on(
    keys: dict[str, str], write: Writer, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = audit(write("ok", keys["ed25519"]), str(fifo))  # a hang fails on the timeout
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"ccanalytics audit-keys: cannot read {fifo}: not a regular file")
    assert "standard input" in done.stderr


def test_a_pipe_is_read_when_given_as_dash(keys: dict[str, str]) -> None:
    done = audit("-", stdin=keys["ed25519"] + "\n")
    assert done.returncode == 0 and "1 entry: 1 ok" in done.stdout


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_a_pasted_token_is_not_printed_in_any_format(fmt: str) -> None:
    token = "xoxb-2400012345-5512345678901-AbCdEfGhIjKlMnOpQrStUvWx"
    done = audit("--format", fmt, stdin=f"{token}\nsk-live-4eC39HqLyjWDarjtT1zdp7dc AAAA c\n")
    assert done.returncode == 5  # a key has errors: its own status
    assert token[5:] not in done.stdout + done.stderr
    assert "4eC39HqLyjWDarjtT1zdp7dc" not in done.stdout + done.stderr
    assert "Slack token" in done.stdout


def test_json_of_an_empty_file_is_an_empty_list(write: Writer) -> None:
    done = audit("--format", "json", write("empty"))
    assert json.loads(done.stdout) == [] and done.returncode == 0


def test_table_of_several_files_names_each_and_sums_up(keys: dict[str, str], write: Writer) -> None:
    first, second = write("one", keys["ed25519"]), write("two", "# nothing")
    lines = audit(first, second).stdout.splitlines()
    assert lines[0] == f"==> {first} <=="
    assert lines[1].split()[:3] == ["LINE", "STATUS", "TYPE"]
    assert lines[2].split()[:3] == ["1", "ok", "ED25519"]
    assert lines[4] == f"==> {second} <=="
    assert lines[5] == "no keys found"
    assert lines[-1] == "1 entry: 1 ok, 0 with warnings, 0 with errors"


def test_a_wrong_argument_is_one_line_and_exit_2() -> None:
    done = audit("--format", "xml")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "invalid choice: 'xml'" in done.stderr

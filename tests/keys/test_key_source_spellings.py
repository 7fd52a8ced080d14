"""What ``audit_keys`` reads a source as: key text or files, however the source is spelled.

The rule (``ccanalytics.keys._source``): a ``str`` holding a line feed, or one line that
reads as an authorized_keys entry (a key type, options then a key, a comment, a private
key's marker, base64 key material), is key text; any other one-line ``str`` that names
an existing file or looks like a path (``/``, ``~``, ``./``, ``.pub``, ``authorized_keys``,
a single word) is a file, as a ``Path`` is. A list or tuple whose first item is a path
is a list of files. A missing file is a ``KeyFileError`` however it was spelled.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ccanalytics import audit_keys, diff_ssh_keys
from ccanalytics.errors import KeyFileError
from ccanalytics.keys import audit_lines

KEY_A = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@laptop"
KEY_B = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMTz/QUztjDrFzndCmJlRACH8sraYQDA0M1h1JHoYgYj ci@build"
FP_A = audit_lines(KEY_A)[0].fingerprint


@pytest.fixture
def two_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """k1.pub holds KEY_A; k2.pub holds KEY_B then KEY_A again (a duplicate across files)."""
    monkeypatch.chdir(tmp_path)
    first, second = tmp_path / "k1.pub", tmp_path / "k2.pub"
    first.write_text(KEY_A + "\n", encoding="utf-8")
    second.write_text(KEY_B + "\n" + KEY_A + "\n", encoding="utf-8")
    return first, second


# --------------------------------------------------------------------------- one path


@pytest.mark.parametrize(
    "spelling",
    ["nonexistent_keys", "/no/such/authorized_keys", "./missing", "My Keys.pub", "~/no-such.pub"],
)
def test_a_str_naming_a_missing_file_is_a_key_file_error(
    spelling: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(KeyFileError, match="No such file"):
        audit_keys(spelling)


@pytest.mark.parametrize("spelling", [str, Path, pathlib.PurePath])
def test_a_missing_file_is_a_key_file_error_however_spelled(spelling: type, tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match=r"cannot read .*missing_keys: No such file"):
        audit_keys(spelling(tmp_path / "missing_keys"))


def test_a_str_path_reads_the_file_as_a_path_does(two_files: tuple[Path, Path]) -> None:
    _, second = two_files
    by_str, by_path = audit_keys("k2.pub"), audit_keys(second)
    assert list(by_str["comment"]) == list(by_path["comment"]) == ["ci@build", "me@laptop"]
    assert list(by_str["line_no"]) == [1, 2]
    assert "file" not in by_str.columns  # one source: no column to tell sources apart


def test_a_tilde_is_the_home_folder_as_ssh_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "authorized_keys").write_text(KEY_A + "\n", encoding="utf-8")
    for spelling in ("~/.ssh/authorized_keys", Path("~/.ssh/authorized_keys")):
        assert list(audit_keys(spelling)["comment"]) == ["me@laptop"]


def test_a_directory_is_a_key_file_error(tmp_path: Path) -> None:
    for spelling in (str(tmp_path), tmp_path, [str(tmp_path)]):
        with pytest.raises(KeyFileError, match="Is a directory"):
            audit_keys(spelling)


def test_an_unreadable_file_is_a_key_file_error(tmp_path: Path) -> None:
    secret = tmp_path / "authorized_keys"
    secret.write_text(KEY_A + "\n", encoding="utf-8")
    secret.chmod(0o000)
    code = (
        "import sys\nfrom ccanalytics import audit_keys\nfrom ccanalytics.errors import KeyFileError\n"
        f"for source in ({str(secret)!r}, [{str(secret)!r}]):\n"
        "    try:\n        audit_keys(source)\n    except KeyFileError as err:\n"
        "        print(err)\n    else:\n        sys.exit(1)\n"
    )
    # root reads any file: its child gives up the capabilities that let it.
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    done = subprocess.run(
        [*(drop if os.geteuid() == 0 else []), sys.executable, "-c", code],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"cannot read {secret}: Permission denied"] * 2


# --------------------------------------------------------------------------- key text


@pytest.mark.parametrize(
    "text",
    [
        KEY_A,
        KEY_B,  # its base64 holds a '/', as a path would: still a key line
        'from="10.0.0.0/8",command="/bin/true" ' + KEY_B,
        "ssh-ed25519",  # a type and nothing else: a key line cut short
        "sk-ssh-future-v2@openssh.com AAAA",  # a type newer than the audit
    ],
)
def test_a_str_that_reads_as_a_key_line_is_key_text(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (entry,) = audit_lines(text)
    assert entry.key.line == text


@pytest.mark.parametrize(
    "text",
    [
        "not a key at all",  # words with blanks, no path's shape: a broken line
        "# a comment",
        "",
        "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",  # a bare blob
        "/no/such/authorized_keys\n",  # a line feed: text, however the line looks
    ],
)
def test_text_that_names_no_file_is_audited_as_text(text: str) -> None:
    entries = audit_lines(text)
    assert all(entry.status == "error" for entry in entries)
    assert len(entries) == (0 if text in ("", "# a comment") else 1)


def test_a_path_line_inside_text_says_it_looks_like_a_path() -> None:
    (entry,) = audit_lines("/no/such/authorized_keys\n")
    assert any("looks like a file path" in p for p in entry.problems)


def test_base64_key_material_is_never_taken_for_a_file_name() -> None:
    # A private key's body lines, pasted alone: a file name in an error would quote them.
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7/nbOxQl6vA4+"
    for source in (body, [body, "Ab3+/x0"], ("-----BEGIN PRIVATE KEY-----", body, "Ab3+/x0")):
        entries = audit_lines(source)
        assert entries and all(entry.status == "error" for entry in entries)


# --------------------------------------------------------------------------- lists


def _files_rows(frame: pd.DataFrame) -> list[tuple[object, ...]]:
    return list(frame[["file", "line_no", "comment", "status"]].itertuples(index=False, name=None))


@pytest.mark.parametrize(
    "spell",
    [
        lambda a, b: ["k1.pub", "k2.pub"],
        lambda a, b: [a, b],
        lambda a, b: ("k1.pub", b),
        lambda a, b: [pathlib.PurePath("k1.pub"), str(b)],
    ],
    ids=["list of str", "list of Path", "tuple of str and Path", "PurePath and absolute str"],
)
def test_a_list_of_paths_reads_each_file_in_turn(two_files: tuple[Path, Path], spell) -> None:  # type: ignore[no-untyped-def]
    a, b = two_files
    source = spell(a, b)
    frame = audit_keys(source)
    names = [os.fspath(item) for item in source]
    assert frame.columns[0] == "file"
    assert _files_rows(frame) == [
        (names[0], 1, "me@laptop", "ok"),
        (names[1], 1, "ci@build", "ok"),
        (names[1], 2, "me@laptop", "warning"),  # KEY_A again, seen in the first file
    ]
    assert any(f"line 1 of {names[0]}" in p for p in frame["problems"].iloc[2])


def test_a_list_of_key_lines_stays_lines(two_files: tuple[Path, Path]) -> None:
    frame = audit_keys([KEY_A, KEY_B, "hello", "k1.pub"])  # a key first: these are lines
    assert "file" not in frame.columns
    assert list(frame["line_no"]) == [1, 2, 3, 4]
    assert list(frame["status"]) == ["ok", "ok", "error", "error"]


def test_a_missing_file_in_a_list_is_a_key_file_error(two_files: tuple[Path, Path]) -> None:
    with pytest.raises(KeyFileError, match=r"cannot read k3\.pub: No such file"):
        audit_keys(["k1.pub", "k2.pub", "k3.pub"])


def test_a_key_line_among_files_is_refused_not_guessed(two_files: tuple[Path, Path]) -> None:
    with pytest.raises(KeyFileError, match=r"item 2 .* key text, not a file") as caught:
        audit_keys(["k1.pub", KEY_B])
    assert "AAAA" not in str(caught.value)  # never quoted: it might have been a secret


def test_diff_reads_lists_of_files_by_the_same_rule(two_files: tuple[Path, Path]) -> None:
    change = diff_ssh_keys(["k1.pub"], "k2.pub")
    assert [ref.comment for ref in change.added] == ["ci@build"]
    assert [ref.fingerprint for ref in change.kept] == [FP_A]
    assert not change.removed

"""The audit judged on OpenSSH's own regress corpus.

``data/openssh_regress`` is OpenSSH portable's regress test data, copied unchanged
(its README says from where), with ``expectations.json``, which records what OpenSSH's
``authopt/tests.c`` and a live sshd 9.2 did with every option string. Every line of
every key file, and of the known_hosts file, is judged against ``ssh-keygen -l`` run
live on that line alone (validity, fingerprint, bits, type, comment); every option
string, as the line ``<options> <key>``, against sshd's verdict.

Where ``tests.c`` and sshd differ (``"restrict,"`` and ``","``: tests.c hands
``sshauthopt_parse`` the bare string, which ends after the comma and is refused; on a
line a blank follows the comma and sshd accepts the line), the test follows sshd, what
users meet.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ccanalytics.keys import AuthorizedKey, parse_authorized_key

CORPUS = Path(__file__).parent / "data" / "openssh_regress"
EXPECTATIONS: dict[str, Any] = json.loads((CORPUS / "expectations.json").read_text())
SSH_KEYGEN = shutil.which("ssh-keygen")
IGNORED = "sshd will ignore this line: "

# ssh-keygen -l's type word (sshkey_type) for each plain key type the audit names.
KEYGEN_TYPES = {
    "ssh-rsa": "RSA",
    "ssh-dss": "DSA",
    "ecdsa-sha2-nistp256": "ECDSA",
    "ecdsa-sha2-nistp384": "ECDSA",
    "ecdsa-sha2-nistp521": "ECDSA",
    "ssh-ed25519": "ED25519",
    "sk-ecdsa-sha2-nistp256@openssh.com": "ECDSA-SK",
    "sk-ssh-ed25519@openssh.com": "ED25519-SK",
}


def _lines(files: list[str]) -> list[tuple[str, int, str]]:
    """(file, line number, line) for every line ssh-keygen -l would read."""
    found = []
    for name in files:
        text = (CORPUS / name).read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip(" \t") and not line.lstrip(" \t").startswith("#"):
                found.append((name, number, line))
    return found


KEY_LINES = _lines(EXPECTATIONS["key_files"] + EXPECTATIONS["known_hosts_files"])


def _keygen(line: str, tmp_path: Path) -> tuple[int, str, str, str] | None:
    """``ssh-keygen -lf`` on ``line`` alone: (bits, fingerprint, comment, type) or None."""
    if SSH_KEYGEN is None:
        pytest.skip("ssh-keygen is not installed: it is the oracle for keys")
    path = tmp_path / "line.pub"
    path.write_text(line + "\n", encoding="utf-8")
    done = subprocess.run([SSH_KEYGEN, "-lf", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    bits, fingerprint, rest = done.stdout.rstrip("\n").split(" ", 2)
    comment, _, kind = rest.rpartition(" (")
    return int(bits), fingerprint, comment, kind.removesuffix(")")


def _keygen_type(key: AuthorizedKey) -> str:
    assert key.public_key is not None
    word = KEYGEN_TYPES[key.public_key.plain_type]
    return word + "-CERT" if key.certificate is not None else word


def test_the_corpus_is_all_here() -> None:
    assert len(EXPECTATIONS["key_files"]) == 86
    assert len(KEY_LINES) == 86 + 29  # known_hosts: 29 lines that are not comments


@pytest.mark.parametrize(
    ("name", "number", "line"), KEY_LINES, ids=[f"{n}:{i}" for n, i, _ in KEY_LINES]
)
def test_every_key_line_agrees_with_ssh_keygen(
    name: str, number: int, line: str, tmp_path: Path
) -> None:
    oracle = _keygen(line, tmp_path)
    key = parse_authorized_key(line)
    assert key.key_valid is (oracle is not None), key.problems
    if oracle is None:
        assert key.status == "error"
        return
    bits, fingerprint, comment, kind = oracle
    assert (key.bits, key.fingerprint, _keygen_type(key)) == (bits, fingerprint, kind)
    # ssh-keygen prints the comment, or "no comment"; a known_hosts line's host names
    # are options to the audit, so what follows the key is its comment either way.
    assert (key.comment or "no comment") == comment


@pytest.mark.parametrize("name", sorted(EXPECTATIONS["fp_files"]))
def test_fingerprints_openssh_recorded(name: str) -> None:
    recorded = (CORPUS / EXPECTATIONS["fp_files"][name]).read_text().strip()
    key = parse_authorized_key((CORPUS / name).read_text().strip())
    if not key.key_valid:
        # A key type newer than ssh-keygen 9.2 and this audit (ML-DSA): ssh-keygen -l
        # refuses it too (test_every_key_line_agrees_with_ssh_keygen); the audit names it.
        assert "mldsa" in name
        assert any("a key type newer than this audit knows" in p for p in key.problems)
        return
    assert key.fingerprint == recorded


def _option_cases() -> list[tuple[str, str, dict[str, Any]]]:
    cases = []
    for section in ("authopt", "authopt_intent", "script_options"):
        for entry in EXPECTATIONS[section]:
            cases.append((section, entry["options"], entry))
    return cases


OPTION_CASES = _option_cases()
OPTION_KEY = (CORPUS / EXPECTATIONS["option_key_file"]).read_text().strip()


@pytest.mark.parametrize(
    ("section", "options", "entry"),
    OPTION_CASES,
    ids=[f"{section}:{options!r}" for section, options, _ in OPTION_CASES],
)
def test_every_option_string_gets_sshds_verdict(
    section: str, options: str, entry: dict[str, Any]
) -> None:
    sshd = entry["sshd_9_2_line"]["verdict"]
    if entry.get("tests_c", sshd) != sshd:
        # tests.c parses the bare string ("restrict,", ","), which ends after the
        # comma; on a line a blank follows, and sshd accepts: follow sshd.
        assert options.endswith(",") and sshd == "accept"
    assert entry["expect"] == sshd
    key = parse_authorized_key(f"{options} {OPTION_KEY}" if options else OPTION_KEY)
    assert key.key_valid
    refused = [p for p in key.problems if p.startswith(IGNORED)]
    if sshd == "accept":
        assert refused == []
    else:
        assert len(refused) == 1, key.problems
    fields = entry.get("sshauthopt") or {}
    if sshd == "accept" and fields:
        _assert_values(key, fields)


def _assert_values(key: AuthorizedKey, fields: dict[str, Any]) -> None:
    """The values tests.c expects sshauthopt_parse to keep, read from the audit's options."""
    values: dict[str, list[str]] = {}
    for name, value in key.options:
        if value is not None:
            values.setdefault(name.lower(), []).append(value)
    single = {
        "force_command": "command",
        "cert_principals": "principals",
        "required_from_host_keys": "from",
    }
    for field, option in single.items():
        assert values.get(option, [None])[0] == fields.get(field)
    # sshd keeps the first value of each environment name.
    env: dict[str, str] = {}
    for item in values.get("environment", []):
        env.setdefault(item.partition("=")[0], item)
    assert list(env.values()) == fields.get("env", [])
    assert values.get("permitopen", []) == fields.get("permitopen", [])
    if "force_tun_device" in fields:
        tunnel = str(fields["force_tun_device"]).replace("SSH_TUNID_ANY", "any")
        assert [value.lower() for value in values["tunnel"]] == [tunnel]


@pytest.mark.parametrize(
    "entry", EXPECTATIONS["literal_lines"], ids=[e["origin"] for e in EXPECTATIONS["literal_lines"]]
)
def test_literal_lines_agree_with_ssh_keygen(entry: dict[str, str], tmp_path: Path) -> None:
    key = parse_authorized_key(entry["line"])
    assert key.key_valid is (_keygen(entry["line"], tmp_path) is not None)
    assert not key.key_valid  # brokenkeys.sh: a truncated key sshd must skip

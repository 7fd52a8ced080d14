"""The audit as a user hits it: one message per fault, no secret quoted, any text read.

A token pasted instead of a key is named by its kind and length, never quoted; a fault
both the API and OpenSSH see is one message; UTF-16 files are read; lone surrogates
never make the audit raise; duplicates span sources.
"""

from __future__ import annotations

import base64
import codecs
import os
import struct
from pathlib import Path

import pytest

from ccanalytics.errors import KeyFileError
from ccanalytics.keys import audit_keys, audit_lines, parse_authorized_key
from ccanalytics.keys._audit import Duplicates, iter_audit

# A valid Ed25519 key (any 32 bytes are one, to OpenSSH), built without ssh-keygen.
_BLOB = struct.pack(">I", 11) + b"ssh-ed25519" + struct.pack(">I", 32) + bytes(range(32))
ED25519 = "ssh-ed25519 " + base64.b64encode(_BLOB).decode()
_OTHER = struct.pack(">I", 11) + b"ssh-ed25519" + struct.pack(">I", 32) + bytes(range(1, 33))
OTHER = "ssh-ed25519 " + base64.b64encode(_OTHER).decode()

SECRETS = {
    "slack": ("xoxb-2400012345-5512345678901-AbCdEfGhIjKlMnOpQrStUvWx", "a Slack token"),
    "stripe": ("sk-live-4eC39HqLyjWDarjtT1zdp7dc", "a Stripe secret key"),
    "stripe underscore": ("sk_live_51H8xYzAbCdEfGh", "a Stripe secret key"),
    "openai": ("sk-proj-Q2xpY2tIZXJlVG9SZXZlYWw", "an API secret key"),
    "github": ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "a GitHub token"),
    "aws": ("AKIAIOSFODNN7EXAMPLE", "an AWS access key id"),
    "sandbox": ("sbx-full-access-key", "a sandbox API key"),
    "random": ("Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5", None),
}


@pytest.mark.parametrize(
    "where",
    ["alone", "as the type", "as an option", "after an option"],
)
@pytest.mark.parametrize("name", list(SECRETS))
def test_a_pasted_token_is_never_quoted_only_its_kind_and_length(name: str, where: str) -> None:
    token, kind = SECRETS[name]
    line = {
        "alone": token,
        "as the type": f"{token} {ED25519.split()[1]} me@host",
        "as an option": f"{token} {ED25519}",
        "after an option": f"no-pty {token}",
    }[where]
    key = parse_authorized_key(line)
    text = " ".join(key.problems)
    assert key.status == "error"
    for part in (token, token[:12], token[-12:]):
        assert part not in text
    if where != "after an option":
        assert f"{len(token)}-character" in text
        if kind is not None:
            assert kind in text
    assert token not in repr(key)
    frame = audit_keys([line])
    assert token not in frame.to_json()


def test_words_of_real_key_types_and_options_are_still_quoted() -> None:
    assert "'ssh-ed448'" in parse_authorized_key("ssh-ed448 AAAA me").problems[0]
    assert "'no-such-thing'" in " ".join(parse_authorized_key("no-such-thing " + ED25519).problems)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("foo-bar " + ED25519.split()[1], "'foo-bar', not with an SSH key type"),
        ("ssh-ed25519", "nothing follows the key type"),
        ("ssh-ed25519 ", "nothing follows the key type"),
        ("\ufeff" + ED25519, "byte order mark"),
        (ED25519 + "\u00a0comment", "U+00A0"),
        ("ssh-ed25519\u00a0" + ED25519.split()[1], "U+00A0"),
        ("xoxb-1234-5678-abcdEFGH", "Slack token"),
    ],
    ids=[
        "unknown type",
        "no key",
        "no key, blank",
        "bom",
        "nbsp after key",
        "nbsp after type",
        "token",
    ],
)
def test_one_fault_seen_by_the_api_and_openssh_is_one_message(line: str, words: str) -> None:
    key = parse_authorized_key(line)
    assert len(key.problems) == 1, key.problems
    assert words in key.problems[0]
    assert key.problems[0].startswith("Neither the API nor OpenSSH will accept this line: ")
    assert (key.api_valid, key.key_valid) == (False, False)


def test_faults_only_one_program_sees_keep_their_own_message() -> None:
    only_api = parse_authorized_key("  " + ED25519)
    assert only_api.problems == ["The API will reject this line: it starts with whitespace."]
    only_openssh = parse_authorized_key("ssh-ed25519 AAAA")
    assert len(only_openssh.problems) == 1
    assert only_openssh.problems[0].startswith("OpenSSH would refuse this key: ")


@pytest.mark.parametrize(
    "text",
    [
        "\udc80" + ED25519,
        ED25519 + " caf\udce9",
        "ssh-ed25519 AAAA\udcff",
        "\ud800\n" + ED25519 + " \udfff\n",
        "no-pty,\udc80 " + ED25519,
        b"\xff\xfe".decode("latin-1") + "\udc80 " + ED25519,
    ],
)
def test_lone_surrogates_never_make_the_audit_raise(text: str) -> None:
    entries = audit_lines(text)
    frame = audit_keys(text)
    assert len(frame) == len(entries) >= 1
    assert set(frame["status"]) <= {"ok", "warning", "error"}


@pytest.mark.parametrize(
    "name", [os.fsdecode(b"/no/such/\xff.pub"), b"\xff\xfe".decode("latin-1") + "\udc80"]
)
def test_a_missing_file_with_an_undecodable_name_is_an_error_that_prints(name: str) -> None:
    with pytest.raises(KeyFileError, match="No such file") as caught:
        audit_keys(name)
    assert "\\udc" in str(caught.value)  # the lone surrogate as its escape
    str(caught.value).encode("utf-8")  # so it can be printed


def test_a_comment_with_surrogates_is_kept_as_read() -> None:
    frame = audit_keys([ED25519 + " caf\udce9"])
    assert frame["comment"][0] == "caf\udce9"
    assert frame["status"][0] == "ok"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_with_a_byte_order_mark_is_read(tmp_path: Path, codec: str) -> None:
    bom = codecs.BOM_UTF16_LE if codec.endswith("le") else codecs.BOM_UTF16_BE
    raw = bom + f"{ED25519} me@pc\r\n# team\r\n{OTHER}\r\n".encode(codec)
    path = tmp_path / "keys.txt"
    path.write_bytes(raw)
    for source in (raw, path):
        entries = audit_lines(source)
        assert [e.line_no for e in entries] == [1, 3]
        assert [e.key_valid for e in entries] == [True, True]
        assert entries[0].comment == "me@pc"
        assert not any("byte order mark" in p for e in entries for p in e.problems)


def test_a_key_in_two_sources_is_a_duplicate_naming_the_first() -> None:
    seen = Duplicates()
    seen.begin("a.pub")
    first = list(iter_audit([OTHER, ED25519], duplicates=seen))
    seen.begin("b.pub")
    second = list(iter_audit(["# b", ED25519 + " again", ED25519], duplicates=seen))
    assert [e.status for e in first] == ["ok", "ok"]
    assert [e.status for e in second] == ["warning", "warning"]
    assert second[0].problems == ["Duplicate key: the same key is already on line 2 of a.pub."]
    assert second[1].problems == ["Duplicate key: the same key is already on line 2 of a.pub."]


def test_duplicates_within_one_source_name_the_line() -> None:
    entries = audit_lines([ED25519, OTHER, ED25519 + " copy"])
    assert entries[2].problems == ["Duplicate key: the same key is already on line 1."]


def test_a_file_is_audited_one_line_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_text((ED25519 + "\n") * 3)
    entries = iter_audit(path)
    assert next(entries).status == "ok"  # a generator: nothing read beyond what is asked
    assert [e.line_no for e in entries] == [2, 3]


def test_the_digest_table_remembers_every_first_position_as_it_grows() -> None:
    import hashlib

    from ccanalytics.keys._seen import _DigestTable

    table = _DigestTable(capacity=8)
    digests = [hashlib.sha256(str(i).encode()).digest()[:16] for i in range(50_000)]
    assert all(table.setdefault(d, i) == i for i, d in enumerate(digests))
    assert all(table.setdefault(d, -1) == i for i, d in enumerate(digests))
    # 16 digest bytes and 8 position bytes a slot, at most half full after growing.
    assert table.nbytes <= 50_000 * 2 * 2 * 24


def test_duplicates_name_the_first_line_without_a_source_name() -> None:
    from ccanalytics.keys._seen import Duplicates

    plain = parse_authorized_key(ED25519)
    assert plain.public_key is not None
    seen = Duplicates()
    assert seen.earlier(plain, 1) is None
    assert seen.earlier(plain, 2) == "line 1"


# OpenSSH's regress corpus holds ML-DSA keys, newer than this audit.
_SSHKEY_DATA = Path(__file__).parent / "data/openssh_regress/regress/unittests/sshkey/testdata"
NEWER = "a key type newer than this audit knows"


@pytest.mark.parametrize(
    ("name", "key_type"),
    [
        ("mldsa44_ed25519_1.pub", "ssh-mldsa44-ed25519@openssh.com"),
        ("mldsa44_ed25519_1-cert.pub", "ssh-mldsa44-ed25519-cert-v01@openssh.com"),
    ],
)
@pytest.mark.parametrize("prefix", ["", "no-pty ", 'restrict,command="x" '])
def test_a_newer_openssh_key_type_is_named_not_hidden(
    name: str, key_type: str, prefix: str
) -> None:
    key = parse_authorized_key(prefix + (_SSHKEY_DATA / name).read_text().strip())
    assert not key.key_valid  # ssh-keygen 9.2 refuses it too (test_openssh_corpus.py)
    (problem,) = [p for p in key.problems if "OpenSSH" in p and "API" not in p]
    assert f"'{key_type}'" in problem and NEWER in problem
    assert "not shown" not in " ".join(key.problems)
    assert "'no-pty'" not in " ".join(key.problems)


@pytest.mark.parametrize(
    "word",
    [
        "ssh-xoxb2400012345abcdefghijkl@openssh.com",  # a part longer than any real one
        "ssh-mldsa44-ed25519@example.com",  # not OpenSSH's namespace
        "ssh-Mldsa44@openssh.com",  # OpenSSH's names are lower case
        "xoxb-2400012345@openssh.com",
    ],
)
def test_only_words_shaped_like_openssh_key_types_are_named(word: str) -> None:
    key = parse_authorized_key(f"{word} {ED25519.split()[1]}")
    text = " ".join(key.problems)
    assert word not in text and NEWER not in text

"""Plain lines (``PlainEntry``): the audit's fast path says exactly what the full judgement says.

``audit-keys`` judges a line of the commonest form (a plain key as OpenSSH writes it
and a short printable comment) without building an ``AuthorizedKey``. Every line it
takes that way must be one ``_judge_line`` finds ``ok`` with nothing to say, with the
same type, bits, fingerprint and comment, and every writer must print it as it prints
the full entry. Lines of every key type in OpenSSH's regress corpus are tried with
comments and blanks that sit on either side of the fast path's edges.
"""

from __future__ import annotations

import base64
import hashlib
import io
import random
from pathlib import Path

import pytest

from ccanalytics.keys import (
    AUDIT_WRITERS as WRITERS,
    AuditEntry,
    Duplicates,
    PlainEntry,
    iter_audit,
    iter_rows,
)
from ccanalytics.keys._line import _judge_line, _plain_entry

_DATA = Path(__file__).parent / "data/openssh_regress/regress/unittests/sshkey/testdata"


def _rsa(bits: int) -> str:
    """An RSA key line of ``bits`` (OpenSSH checks the modulus's size, not its factors)."""
    n = random.Random(bits).getrandbits(bits) | 1 << (bits - 1) | 1

    def mpint(value: int) -> bytes:
        raw = value.to_bytes((value.bit_length() + 8) // 8, "big")
        return len(raw).to_bytes(4, "big") + raw

    blob = b"\0\0\0\x07ssh-rsa" + mpint(65537) + mpint(n)
    return "ssh-rsa " + base64.b64encode(blob).decode()


# The corpus's RSA keys are 2048 bits (advice, so never plain): a 3072-bit one too.
_BASES = sorted(
    [
        *(" ".join(path.read_text().split()[:2]) for path in _DATA.glob("*.pub")),
        _rsa(3072),
    ]
)
_BASES = [base for base in _BASES if "mldsa" not in base]
_COMMENTS = [
    None,
    "a",
    "user@host",
    "x" * 31,
    "x" * 32,
    "x" * 33,
    "x" * 63,
    "x" * 64,
    "two  spaces",
    " leading",
    "trailing ",
    "tab\there",
    "ünïcode",
    "bell\x07",
    "PRIVATE KEY-----",
    "b3BlbnNzaC1rZXktdjE",
    "M" + "I" * 70,
]


def _variants() -> list[str]:
    lines = []
    for base in _BASES:
        for comment in _COMMENTS:
            lines.append(base if comment is None else f"{base} {comment}")
        kind, token = base.split()
        lines += [f"{kind}  {token}", f"{kind}\t{token}", f" {base}", f"{base}\r", f"{base} "]
        lines += [
            f"\ufeff{base}",
            f"{kind} {token}=",
            f"{kind} {token[:-4]}",
            f"{kind} {token}AAAA",
        ]
        lines += [f"{kind.upper()} {token}", f"rsa-sha2-256 {token}", f"no-pty {base}"]
    rng = random.Random(37)
    for base in _BASES:  # one character of the key changed: mostly not a key at all
        kind, token = base.split()
        for _ in range(20):
            at = rng.randrange(len(token))
            char = rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
            lines.append(f"{kind} {token[:at]}{char}{token[at + 1 :]} c")
    return lines


_LINES = _variants()


def _ed25519(seed: int) -> str:
    blob = b"\0\0\0\x0bssh-ed25519\0\0\0\x20" + hashlib.sha256(str(seed).encode()).digest()
    return "ssh-ed25519 " + base64.b64encode(blob).decode()


@pytest.mark.parametrize("line", _LINES)
def test_a_plain_line_is_what_the_full_judgement_says(line: str) -> None:
    plain = _plain_entry(7, line)
    if plain is None:
        return
    key = _judge_line(line)
    assert (key.status, key.problems, key.options) == ("ok", [], ())
    assert key.api_valid and key.key_valid
    assert plain == (
        7,
        line,
        key.key_type,
        key.bits,
        key.fingerprint,
        key.comment,
        base64.b64decode(key.fingerprint[7:] + "="),  # type: ignore[index]
    )


def test_the_common_lines_take_the_plain_path() -> None:
    taken = {line.split()[0] for line in _LINES if _plain_entry(1, line) is not None}
    assert taken == {
        "ssh-ed25519",
        "ssh-rsa",
        "ecdsa-sha2-nistp256",
        "ecdsa-sha2-nistp521",
        "sk-ssh-ed25519@openssh.com",
        "sk-ecdsa-sha2-nistp256@openssh.com",
    }
    # Hand-checked edges: a 63-character comment is plain, a 64-character one is not;
    # a private key's marker in the comment is for _source to catch (next test).
    ed = _ed25519(1)
    assert _plain_entry(1, f"{ed} {'x' * 63}") is not None
    assert _plain_entry(1, f"{ed} {'x' * 64}") is None
    assert _plain_entry(1, f"{ed} trailing ") is None


def test_a_marker_of_a_private_key_still_makes_a_plain_line_a_private_key() -> None:
    line = f"{_ed25519(2)} PRIVATE KEY-----"
    (row,) = iter_rows([line])
    assert isinstance(row, AuditEntry) and row.key.is_private_key


def test_a_repeated_plain_key_is_judged_in_full_to_say_so() -> None:
    line = f"{_ed25519(3)} me@host"
    rows = list(iter_rows([line, "# between", line]))
    assert isinstance(rows[0], PlainEntry) and rows[0].line_no == 1
    assert isinstance(rows[1], AuditEntry) and rows[1].line_no == 3
    assert rows[1].status == "warning"
    assert rows[1].problems == ["Duplicate key: the same key is already on line 1."]


def test_iter_rows_and_iter_audit_agree_entry_for_entry() -> None:
    lines = [*_LINES, *_LINES[:50]]  # repeats too
    full = list(iter_audit(lines))
    rows = list(iter_rows(lines))
    assert len(rows) == len(full)
    assert sum(isinstance(row, PlainEntry) for row in rows) > 20  # the first of each key
    for row, entry in zip(rows, full, strict=True):
        if isinstance(row, PlainEntry):
            assert (entry.status, entry.problems, entry.options) == ("ok", [], [])
            assert (row.line_no, row.key_type, row.bits, row.fingerprint, row.comment) == (
                entry.line_no,
                entry.key_type,
                entry.bits,
                entry.fingerprint,
                entry.comment,
            )
        else:
            assert row == entry


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_every_writer_prints_a_plain_row_as_the_full_entry(fmt: str) -> None:
    lines = [line for line in _LINES if _plain_entry(1, line) is not None]

    def written(plain: bool) -> str:
        out = io.StringIO()
        writer = WRITERS[fmt](out, several=False)
        writer.begin("keys.txt")
        seen = Duplicates()
        for row in iter_rows(lines, duplicates=seen, plain=plain):
            if isinstance(row, PlainEntry):
                writer.plain("keys.txt", row)
            else:
                writer.entry("keys.txt", row)
        writer.end()
        writer.finish({"ok": len(lines), "warning": 0, "error": 0})
        return out.getvalue()

    assert written(plain=True) == written(plain=False)


_BLOCKS = [
    "",
    "# a comment",
    "-----BEGIN PUBLIC KEY-----",
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE",
    "-----END PUBLIC KEY-----",
    "---- BEGIN SSH2 PUBLIC KEY ----",
    'Comment: "me"',
    _ed25519(40).split()[1],
    "---- END SSH2 PUBLIC KEY ----",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
    "-----END OPENSSH PRIVATE KEY-----",
]


@pytest.mark.parametrize(
    "lines",
    [
        [f"{_ed25519(41)} a", f"\ufeff{_ed25519(42)} b", *_BLOCKS, f"{_ed25519(43)} c"],
        [f"\ufeff{_ed25519(44)} a", f"{_ed25519(45)} b", *_BLOCKS[::-1], f"{_ed25519(46)}"],
        [*_BLOCKS, f"{_ed25519(47)} a", *_BLOCKS, f"{_ed25519(48)} b", f"{_ed25519(47)} a"],
    ],
)
def test_plain_lines_between_blocks_keep_their_numbers_and_verdicts(lines: list[str]) -> None:
    full = list(iter_audit(lines))
    rows = list(iter_rows(lines))
    assert [r.line_no for r in rows] == [e.line_no for e in full]
    for row, entry in zip(rows, full, strict=True):
        if isinstance(row, PlainEntry):
            assert (entry.status, entry.problems, entry.fingerprint) == ("ok", [], row.fingerprint)
        else:
            assert row == entry


def test_duplicates_kept_in_a_dict_move_to_the_table_and_still_name_the_first_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ccanalytics.keys import _seen

    monkeypatch.setattr(_seen, "_DICT_KEYS", 8)  # a quarter more: the 11th key moves them
    seen = Duplicates(expected=5)
    digests = [hashlib.sha256(bytes([i])).digest() for i in range(30)]
    assert [seen.earlier_digest(d, i + 1) for i, d in enumerate(digests)] == [None] * 30
    assert seen._small is None  # moved
    assert seen.earlier_digest(digests[3], 31) == "line 4"
    assert seen.earlier_digest(digests[29], 32) == "line 30"
    kept = Duplicates(expected=5)
    assert kept.earlier_digest(digests[0], 1) is None
    assert kept.earlier_digest(digests[0], 2) == "line 1"
    assert kept._small is not None  # still the dict

"""``matches_api_pattern`` agrees with node's RegExp on the spec's pattern.

The server judges key lines with an ECMA-262 engine; Python's ``re`` reads the same
pattern differently (``$`` before a final newline, another ``\\s``). Each table row is
judged by node (one process for the whole table, strings passed as JSON on stdin)
and by ``matches_api_pattern``; hypothesis adds random strings from an alphabet of
exactly the characters where the two engines could differ.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ccanalytics.keys.api_rule import API_KEY_PATTERN, api_key_errors, matches_api_pattern

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: no ECMA-262 oracle")

# Each string is judged with and without the "u" flag (JSON-Schema validators differ).
_NODE_SCRIPT = """
let data = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { data += chunk; });
process.stdin.on('end', () => {
  const { pattern, strings } = JSON.parse(data);
  const plain = new RegExp(pattern);
  const unicode = new RegExp(pattern, 'u');
  process.stdout.write(JSON.stringify(strings.map((s) => [plain.test(s), unicode.test(s)])));
});
"""

K = "AAAAC3NzaC1lZDI1NTE5AAAAIBlaHSVR1wCkMdBJ3ph2jwN6VB3MQxp9G3YCyqNcdCu3"

TRICKY: dict[str, str] = {
    "plain": f"ssh-ed25519 {K} alice@laptop",
    "no comment": f"ssh-ed25519 {K}",
    "trailing LF": f"ssh-ed25519 {K} alice\n",
    "trailing LF no comment": f"ssh-ed25519 {K}\n",
    "trailing CR": f"ssh-ed25519 {K} alice\r",
    "trailing CRLF": f"ssh-ed25519 {K} alice\r\n",
    "CR in comment": f"ssh-ed25519 {K} al\rice",
    "LF in comment": f"ssh-ed25519 {K} al\nice",
    "two lines": f"ssh-ed25519 {K} a\nssh-ed25519 {K} b",
    "NBSP in key": f"ssh-ed25519 {K[:20]}\u00a0{K[20:]}",
    "NBSP in comment": f"ssh-ed25519 {K} al\u00a0ice",
    "NBSP as separator": f"ssh-ed25519\u00a0{K} alice",
    "NBSP before comment": f"ssh-ed25519 {K}\u00a0alice",
    "BOM first": f"\ufeffssh-ed25519 {K}",
    "BOM in key": f"ssh-ed25519 {K[:20]}\ufeff{K[20:]}",
    "BOM in comment": f"ssh-ed25519 {K} \ufeffalice",
    "NEL U+0085 in key": f"ssh-ed25519 {K[:20]}\u0085{K[20:]}",
    "NEL U+0085 in comment": f"ssh-ed25519 {K} al\u0085ice",
    "NEL U+0085 ends key": f"ssh-ed25519 {K}\u0085",
    "U+001C in key": f"ssh-ed25519 {K[:20]}\x1c{K[20:]}",
    "U+001D in key": f"ssh-ed25519 {K[:20]}\x1d{K[20:]}",
    "U+001E in key": f"ssh-ed25519 {K[:20]}\x1e{K[20:]}",
    "U+001F in key": f"ssh-ed25519 {K[:20]}\x1f{K[20:]}",
    "U+001F as separator": f"ssh-ed25519\x1f{K}",
    "U+001C in comment": f"ssh-ed25519 {K} a\x1cb",
    "U+2028 in comment": f"ssh-ed25519 {K} al\u2028ice",
    "U+2029 in comment": f"ssh-ed25519 {K} al\u2029ice",
    "U+2028 ends comment": f"ssh-ed25519 {K} alice\u2028",
    "U+2028 in key": f"ssh-ed25519 {K[:20]}\u2028{K[20:]}",
    "U+180E in key": f"ssh-ed25519 {K[:20]}\u180e{K[20:]}",
    "U+180E as separator": f"ssh-ed25519\u180e{K}",
    "U+3000 in key": f"ssh-ed25519 {K[:20]}\u3000{K[20:]}",
    "U+3000 in comment": f"ssh-ed25519 {K} al\u3000ice",
    "U+200B in key": f"ssh-ed25519 {K[:20]}\u200b{K[20:]}",
    "U+1680 in key": f"ssh-ed25519 {K[:20]}\u1680{K[20:]}",
    "U+202F in key": f"ssh-ed25519 {K[:20]}\u202f{K[20:]}",
    "U+205F in key": f"ssh-ed25519 {K[:20]}\u205f{K[20:]}",
    "tab before comment": f"ssh-ed25519 {K}\talice",
    "tab as separator": f"ssh-ed25519\t{K}",
    "empty comment": f"ssh-ed25519 {K} ",
    "empty comment after tab": f"ssh-ed25519 {K}\t",
    "two spaces before comment": f"ssh-ed25519 {K}  alice",
    "two spaces after type": f"ssh-ed25519  {K}",
    "leading space": f" ssh-ed25519 {K}",
    "leading tab": f"\tssh-ed25519 {K}",
    "options prefix": f'from="10.0.0.1",no-pty ssh-ed25519 {K}',
    "ssh- alone": "ssh-",
    "ssh- space": "ssh- ",
    "ssh-x alone": "ssh-x",
    "ssh-x y": "ssh-x y",
    "ssh- x": "ssh- x",
    "sk-x y": "sk-x y",
    "sk- y": "sk- y",
    "ecdsa-x y": "ecdsa-x y",
    "ecdsa- y": "ecdsa- y",
    "ecdsa-sha2-nistp256 K": f"ecdsa-sha2-nistp256 {K}",
    "ecdsax-y z": "ecdsax-y z",
    "ECDSA upper": "ECDSA-x y",
    "rsa-sha2-256": f"rsa-sha2-256 {K}",
    "ssh-rsa x y z": "ssh-rsa x y z",
    "vertical tab in key": f"ssh-ed25519 {K[:20]}\v{K[20:]}",
    "vertical tab before comment": f"ssh-ed25519 {K}\valice",
    "vertical tab in comment": f"ssh-ed25519 {K} a\vb",
    "form feed in key": f"ssh-ed25519 {K[:20]}\f{K[20:]}",
    "form feed before comment": f"ssh-ed25519 {K}\falice",
    "form feed in comment": f"ssh-ed25519 {K} a\fb",
    "NUL in key": f"ssh-ed25519 {K[:20]}\x00{K[20:]}",
    "NUL in comment": f"ssh-ed25519 {K} a\x00b",
    "NUL at end": f"ssh-ed25519 {K}\x00",
    "empty": "",
    "only space": " ",
    "astral char in key": f"ssh-ed25519 {K}\U0001f511",
    "astral char in comment": f"ssh-ed25519 {K} key \U0001f511",
    "lone surrogate in key": f"ssh-ed25519 {K}\ud800",
    "lone surrogate in comment": f"ssh-ed25519 {K} a\udc80b",
    "non-ASCII in type": f"ssh-ëd25519 {K}",
}


def node_verdicts(strings: list[str]) -> list[tuple[bool, bool]]:
    """(without flags, with the "u" flag) for each string, from one node process."""
    assert NODE is not None
    payload = json.dumps({"pattern": API_KEY_PATTERN, "strings": strings})
    done = subprocess.run(
        [NODE, "-e", _NODE_SCRIPT],
        input=payload,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=60,
    )
    return [(plain, unicode) for plain, unicode in json.loads(done.stdout)]


@pytest.fixture(scope="module")
def node_table() -> dict[str, tuple[bool, bool]]:
    names = list(TRICKY)
    return dict(zip(names, node_verdicts([TRICKY[n] for n in names]), strict=True))


@pytest.mark.parametrize("name", list(TRICKY))
def test_tricky_string_is_judged_as_node_judges_it(
    name: str, node_table: dict[str, tuple[bool, bool]]
) -> None:
    plain, unicode = node_table[name]
    assert plain == unicode, "the 'u' flag changed node's verdict"
    assert matches_api_pattern(TRICKY[name]) is plain


def test_the_table_holds_both_verdicts(node_table: dict[str, tuple[bool, bool]]) -> None:
    verdicts = {plain for plain, _ in node_table.values()}
    assert verdicts == {True, False}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f"ssh-ed25519 {K} alice\n", False),
        (f"ssh-ed25519 {K} alice\r", False),
        (f"ssh-ed25519 {K} al\u2028ice", True),
        (f"ssh-ed25519 {K[:20]}\u0085{K[20:]}", True),
        (f"ssh-ed25519 {K[:20]}\ufeff{K[20:]}", False),
    ],
    ids=["LF", "CR", "U+2028 comment", "U+0085 key", "U+FEFF key"],
)
def test_where_python_re_and_ecma_differ_ecma_wins(line: str, expected: bool) -> None:
    assert matches_api_pattern(line) is expected


def test_non_strings_never_match() -> None:
    assert matches_api_pattern(None) is False  # type: ignore[arg-type]
    assert matches_api_pattern(b"ssh-ed25519 AAAA") is False  # type: ignore[arg-type]


def test_api_key_errors_name_each_failing_index_without_echoing_it() -> None:
    secret = "ghp_s3cr3tT0k3nValue"
    errors = api_key_errors([f"ssh-ed25519 {K}", secret, 42])
    assert [e.split(":")[0] for e in errors] == ["$.keys[1]", "$.keys[2]"]
    assert all(secret not in e for e in errors)


# Characters where ECMA-262 and Python disagree, the pattern's own pieces, and noise.
_ALPHABET = [
    *"shkecdaA0+/=-@.",
    " ",
    "\t",
    "\n",
    "\r",
    "\v",
    "\f",
    "\x00",
    "\x1c",
    "\x1f",
    "\x85",
    "\xa0",
    "\u1680",
    "\u180e",
    "\u2000",
    "\u200a",
    "\u200b",
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
    "\ufeff",
    "é",
    "\U0001f511",
    "\ud800",
]
_PREFIXES = ["", "ssh-", "ecdsa-", "sk-", "ssh-ed25519 ", "ssh-rsa AAAA", " ", "\ufeff"]
_tricky_strings = st.builds(
    lambda prefix, chars: prefix + "".join(chars),
    st.sampled_from(_PREFIXES),
    st.lists(st.sampled_from(_ALPHABET), max_size=24),
)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_tricky_strings, min_size=250, max_size=250))
def test_random_strings_are_judged_as_node_judges_them(strings: list[str]) -> None:
    verdicts = node_verdicts(strings)
    assert [
        s for s, (plain, unicode) in zip(strings, verdicts, strict=True) if plain != unicode
    ] == []
    mismatches = [
        (s, plain)
        for s, (plain, _) in zip(strings, verdicts, strict=True)
        if matches_api_pattern(s) is not plain
    ]
    assert mismatches == []


# The judgement assumes no flag or the "u" flag (Ajv's default, its unicodeRegExp
# option); on this pattern both give the same verdict on every line, because each piece
# (^, $, [^\s], [ \t], [^\n\r]) matches a surrogate pair, a lone surrogate or any other
# non-ASCII code point in both modes alike.
_NON_ASCII = st.text(
    alphabet=st.characters(min_codepoint=0x80, max_codepoint=0x10FFFF, exclude_categories=()),
    max_size=12,
)
_NON_ASCII_LINES = st.builds(
    lambda prefix, chars, where: (
        prefix + chars if where == "end" else prefix[:12] + chars + prefix[12:]
    ),
    st.sampled_from([f"ssh-ed25519 {K} ", f"ssh-ed25519 {K}", f"ecdsa-{K} x", "sk-"]),
    _NON_ASCII,
    st.sampled_from(["end", "inside"]),
)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_NON_ASCII_LINES, min_size=250, max_size=250))
def test_the_u_flag_changes_no_verdict_on_non_ascii_lines(strings: list[str]) -> None:
    verdicts = node_verdicts(strings)
    assert [plain for plain, unicode in verdicts if plain != unicode] == []
    mismatches = [
        s
        for s, (plain, _) in zip(strings, verdicts, strict=True)
        if matches_api_pattern(s) is not plain
    ]
    assert mismatches == []


def test_non_ascii_lines_of_both_verdicts_are_judged_alike_with_and_without_u() -> None:
    lines = [
        f"ssh-ed25519 {K} clé\U0001f511",  # accepted: a surrogate pair in the comment
        f"ssh-ed25519 {K}\U0001f511",  # accepted: glued to the key, still \S
        f"ssh-ed25519 {K} \ud83d",  # accepted: a lone surrogate is \S in both modes
        f"ssh-ëd25519 {K} x",
        f"ssh-ed25519\u3000{K}",  # refused: U+3000 is \s in both modes
        f"ssh-ed25519 {K}\u2028x",  # refused: a line terminator ends the key's \S run
    ]
    verdicts = node_verdicts(lines)
    assert [plain for plain, _ in verdicts] == [True, True, True, True, False, False]
    assert all(plain == unicode for plain, unicode in verdicts)
    assert [matches_api_pattern(line) for line in lines] == [plain for plain, _ in verdicts]

"""Option values judged as sshd judges them.

sshd's ``sshauthopt_parse`` (auth-options.c) refuses a line whose option values it
cannot use, and then ignores the whole line; ``from=`` is judged at login
(``match_host_and_ip``), where a broken list refuses every login. Each refused value
must be one error that says so and why, never quoting the value (it may be a secret).
Advice sshd only gives at login is given up front as a warning.
"""

from __future__ import annotations

import base64
import struct
import time
from pathlib import Path

import pytest

from ccanalytics.keys import parse_authorized_key
from ccanalytics.keys._options import parse_options

# A valid Ed25519 key (any 32 bytes are one, to OpenSSH), built without ssh-keygen.
_BLOB = struct.pack(">I", 11) + b"ssh-ed25519" + struct.pack(">I", 32) + bytes(range(32))
ED25519 = "ssh-ed25519 " + base64.b64encode(_BLOB).decode()

CERT = (
    Path(__file__).parent
    / "data/openssh_regress/regress/unittests/sshkey/testdata/ed25519_1-cert.pub"
)
IGNORED = "sshd will ignore this line: "

# option string -> a word the one error must contain (sshd's reason, in our words)
REFUSED = {
    'tunnel="blah"': "tunnel",
    'tunnel=""': "tunnel",
    'tunnel="2147483646"': "tunnel",
    'tunnel="-1"': "tunnel",
    'tunnel="1 "': "tunnel",
    'environment=",=bah"': "environment",
    'environment="NOEQUALS"': "environment",
    'environment="=value"': "environment",
    'environment="A-B=1"': "environment",
    'environment="Ä=1"': "environment",
    'permitopen="foo:bar"': "port",
    'permitopen="foo:"': "port",
    'permitopen="foo"': "port",
    'permitopen="[:"': "host",
    'permitopen="[::1]x:22"': "host",
    'permitopen="foo:0"': "port",
    'permitopen="foo:65536"': "port",
    'permitopen="::1:22"': "port",
    'permitlisten="[::1]"': "port",
    'permitlisten="' + "h" * 1025 + ':22"': "host",
    'expiry-time="INVALID"': "expiry-time",
    'expiry-time="2024010"': "expiry-time",
    'expiry-time="20241301"': "expiry-time",
    'expiry-time="20240100"': "expiry-time",
    'expiry-time="202401011260"': "expiry-time",
    'expiry-time="19690101"': "expiry-time",
    'expiry-time="19700101Z"': "expiry-time",
    'command="a",command="b"': "command",
    'principals="a",principals="b"': "principals",
    'from="a",from="b"': "from",
    'from=""': "from",
    'from="10.0.0.0/8,"': "from",
    'from="!"': "from",
    'from="10.0.0.1/8"': "from",
    'from="10.0.0.0/33"': "from",
    'from="fe80::1/10"': "from",
}

ACCEPTED = [
    ",",
    ",,",
    ",no-pty",
    "no-pty,,pty",
    'tunnel="0"',
    'tunnel="ANY"',
    'tunnel="+5"',
    'tunnel=" 5"',
    'tunnel="2147483645"',
    'environment="foo=1"',
    'environment="_9=x=y"',
    'environment="9LIVES="',
    'permitopen="foo:123"',
    'permitopen="bar:*"',
    'permitopen="[::1]:22"',
    'permitopen="[::1]/22"',
    'permitopen="foo/22"',
    'permitopen=":22"',
    'permitopen="*:65535"',
    'permitopen="foo: 22"',
    'permitopen="foo:ssh"',
    'permitlisten="3301"',
    'permitlisten="*"',
    'permitlisten="localhost:3301"',
    'expiry-time="20380101"',
    'expiry-time="25250101"',
    'expiry-time="203801011200"',
    'expiry-time="20380101120059Z"',
    'expiry-time="20380101utc"',
    'expiry-time="20380231"',
    'expiry-time="20380101235961"',
    'expiry-time="2038 101"',
    'from="127.0.0.0/8"',
    'from="*.example.com,!bad.example.com"',
    'from="10.0.0.0/8,::1,fe80::/10"',
    'from="10.1.2.3/32"',
    'principals="gregor,josef,K"',
    'command="echo \\"hi\\""',
    'command=""',
]


@pytest.mark.parametrize("options", sorted(REFUSED))
def test_a_value_sshd_refuses_is_one_error_that_names_the_option(options: str) -> None:
    key = parse_authorized_key(f"{options} {ED25519}")
    sshd = [p for p in key.problems if not p.startswith("The API")]
    assert len(sshd) == 1, key.problems
    assert sshd[0].startswith(IGNORED)
    assert REFUSED[options] in sshd[0]
    assert key.status == "error"


@pytest.mark.parametrize("options", ACCEPTED)
def test_a_value_sshd_accepts_is_no_sshd_error(options: str) -> None:
    _, error = parse_options(options)
    assert error is None
    key = parse_authorized_key(f"{options} {ED25519}")
    assert not any(p.startswith(IGNORED) for p in key.problems), key.problems


@pytest.mark.parametrize(
    "options",
    [
        'environment="sk_live_51H8xYzAbCdEfGhIjKl"',
        'environment="AWS-SECRET=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
        'permitopen="xoxb-2400012345-5512345678901"',
        'tunnel="ghp_16C7e42F292c6912E7710c838347Ae178B4a"',
        'expiry-time="sk-live-4eC39HqLyjWDarjtT1zdp7dc"',
        'from="10.0.0.1/8,sk-live-4eC39HqLyjWDarjtT1zdp7dc"',
    ],
)
def test_a_refused_value_is_never_quoted(options: str) -> None:
    value = options.partition('="')[2].rstrip('"')
    key = parse_authorized_key(f"{options} {ED25519}")
    assert any(p.startswith(IGNORED) for p in key.problems), key.problems
    for part in [value, *value.replace("=", ",").replace(":", ",").split(",")]:
        if len(part) >= 6:
            assert not any(part in p for p in key.problems), (part, key.problems)


def test_a_comma_then_a_blank_is_skipped_as_sshd_skips_it() -> None:
    # sshauthopt_parse skips an empty option; a blank after the comma ends the options.
    key = parse_authorized_key(f", {ED25519}")
    assert key.key_valid
    assert [p for p in key.problems if not p.startswith("The API")] == []
    assert key.options == ()


def test_options_keep_their_values_in_order() -> None:
    options, error = parse_options('no-pty,,environment="A=1",permitopen="h:22"')
    assert error is None
    assert options == [("no-pty", None), ("environment", "A=1"), ("permitopen", "h:22")]


# --------------------------------------------------------------------------- advice


def _warnings(options: str, key: str = ED25519) -> list[str]:
    found = parse_authorized_key(f"{options} {key}")
    assert not any(p.startswith(IGNORED) for p in found.problems), found.problems
    return [p for p in found.problems if "API" not in p]


def test_principals_on_a_plain_key_line_is_a_warning_that_login_is_refused() -> None:
    (warning,) = _warnings('principals="alice"')
    assert "principals" in warning and "cert-authority" in warning
    assert "alice" not in warning
    assert _warnings('cert-authority,principals="alice"') != [warning]


def test_an_expiry_time_in_the_past_is_a_warning_with_its_date() -> None:
    (warning,) = _warnings('expiry-time="19990101"')
    assert "1999-01-01" in warning and "expir" in warning
    assert _warnings('expiry-time="25250101"') == []


def test_the_earliest_expiry_time_is_the_one_sshd_keeps() -> None:
    (warning,) = _warnings('expiry-time="25250101",expiry-time="20000229Z"')
    assert "2000-02-29" in warning


def test_a_future_expiry_time_has_no_warning() -> None:
    soon = time.strftime("%Y%m%d", time.gmtime(time.time() + 3 * 86400))
    assert _warnings(f'expiry-time="{soon}Z"') == []


def test_restrict_then_forwardings_spells_out_what_is_turned_back_on() -> None:
    (warning,) = _warnings("restrict,agent-forwarding,pty,port-forwarding")
    assert "restrict" in warning
    assert "agent forwarding" in warning and "port forwarding" in warning
    assert "X11" not in warning
    # restrict after the flag turns it off again; no-... keeps it off.
    assert _warnings("agent-forwarding,restrict") == []
    assert _warnings("restrict,no-agent-forwarding,pty") == []
    (one,) = _warnings("restrict,x11-forwarding")
    assert one.endswith("x11-forwarding, which turns X11 forwarding back on.")


def test_from_with_only_negated_patterns_lets_no_host_in() -> None:
    (warning,) = _warnings('from="!10.0.0.1,!*.example.com"')
    assert "from" in warning and "no host" in warning


def test_cert_authority_on_a_certificate_line_is_a_warning() -> None:
    # OpenSSH's own regress certificate (test_openssh_corpus.py judges the corpus).
    line = CERT.read_text(encoding="ascii").strip()
    problems = _warnings("cert-authority", line)
    assert any("cert-authority" in p and "certificate" in p for p in problems), problems


def test_an_empty_principals_list_lets_no_certificate_in() -> None:
    # match_list over an empty list matches no principal: every login is refused.
    (warning,) = _warnings('cert-authority,principals=""')
    assert "principals" in warning and "no certificate" in warning
    assert _warnings('cert-authority,principals="alice"') == []

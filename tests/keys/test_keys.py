"""``ccanalytics.keys`` judges keys as ``ssh-keygen -lf`` does, and audits like a reviewer.

ssh-keygen is the oracle: keys of every type it can make are generated once per
session, certificates are signed with CA keys of each type, and every corrupted or
hand-built variant is handed to ``ssh-keygen -lf`` in its own file. ``key_valid``
must equal "ssh-keygen exits 0", and when it does, fingerprint and bits must match.
"""

from __future__ import annotations

import base64
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed, decode_dss_signature
from hypothesis import given, settings, strategies as st

from ccanalytics.errors import KeyFileError
from ccanalytics.keys import (
    AuthorizedKey,
    KeyNormalizationError,
    KeyOptionsDroppedWarning,
    audit_keys,
    audit_lines,
    diff_ssh_keys,
    normalize_key_lines,
    parse_authorized_key,
)
from ccanalytics.keys._sshwire import _CURVES, decode_base64, read_public_key
from ccanalytics.keys.api_rule import matches_api_pattern

SSH_KEYGEN = shutil.which("ssh-keygen")
pytestmark = pytest.mark.skipif(SSH_KEYGEN is None, reason="ssh-keygen is not installed")

KEY_SPECS = {
    "ed25519": ["-t", "ed25519"],
    "ecdsa256": ["-t", "ecdsa", "-b", "256"],
    "ecdsa384": ["-t", "ecdsa", "-b", "384"],
    "ecdsa521": ["-t", "ecdsa", "-b", "521"],
    "rsa1024": ["-t", "rsa", "-b", "1024"],
    "rsa2048": ["-t", "rsa", "-b", "2048"],
    "rsa3072": ["-t", "rsa", "-b", "3072"],
    "rsa4096": ["-t", "rsa", "-b", "4096"],
    "dsa": ["-t", "dsa"],
    "ca_ed25519": ["-t", "ed25519"],
    "ca_ecdsa384": ["-t", "ecdsa", "-b", "384"],
    "ca_ecdsa256": ["-t", "ecdsa", "-b", "256"],
    "ca_rsa": ["-t", "rsa", "-b", "2048"],
    "ca_dsa": ["-t", "dsa"],
    "pem_rsa": ["-t", "rsa", "-b", "1024", "-m", "PEM"],
    "pkcs8_ecdsa": ["-t", "ecdsa", "-m", "PKCS8"],
}
# name -> (key to certify, CA, extra ssh-keygen -s arguments)
CERT_SPECS = {
    "ed25519_by_ed25519": ("ed25519", "ca_ed25519", ["-n", "alice,bob", "-V", "+52w"]),
    "ecdsa256_by_rsa_sha512": ("ecdsa256", "ca_rsa", []),
    "ed25519_by_rsa_sha1": ("ed25519", "ca_rsa", ["-t", "ssh-rsa"]),
    "ed25519_by_rsa_sha256": ("ed25519", "ca_rsa", ["-t", "rsa-sha2-256"]),
    "rsa2048_by_ecdsa384": ("rsa2048", "ca_ecdsa384", ["-O", "no-pty", "-O", "force-command=/x"]),
    "ecdsa521_by_ed25519_host": ("ecdsa521", "ca_ed25519", ["-h", "-n", "h.example"]),
    "dsa_by_dsa": ("dsa", "ca_dsa", []),
    "expired": ("ecdsa384", "ca_ed25519", ["-V", "20000101:20010101"]),
}


class Keys:
    """Generated keys: ``line(name)`` is the .pub line, ``private(name)`` the key file."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.pub"

    def line(self, name: str) -> str:
        return self.path(name).read_text().rstrip("\n")

    def private(self, name: str) -> str:
        return (self.directory / name).read_text()

    def has(self, name: str) -> bool:
        return self.path(name).exists()


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    """Every key ssh-keygen here can make, generated in parallel, plus certificates."""
    directory = tmp_path_factory.mktemp("keys")
    assert SSH_KEYGEN is not None
    procs = [
        subprocess.Popen(
            [SSH_KEYGEN, "-q", *args, "-N", "", "-C", f"{name}@test", "-f", str(directory / name)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for name, args in KEY_SPECS.items()
    ]
    for proc in procs:
        proc.wait(timeout=120)
    for name, (subject, ca, extra) in CERT_SPECS.items():
        if not ((directory / f"{subject}.pub").exists() and (directory / ca).exists()):
            continue
        shutil.copy(directory / f"{subject}.pub", directory / f"{name}.pub")
        subprocess.run(
            [
                SSH_KEYGEN,
                "-q",
                "-s",
                str(directory / ca),
                "-I",
                f"id-{name}",
                *extra,
                name + ".pub",
            ],
            cwd=directory,
            check=True,
            capture_output=True,
        )
        (directory / f"{name}-cert.pub").rename(directory / f"cert_{name}.pub")
    return Keys(directory)


def keygen(line: str, tmp_path: Path) -> tuple[bool, int | None, str | None]:
    """ssh-keygen's verdict on ``line``: (accepted, bits, fingerprint)."""
    assert SSH_KEYGEN is not None
    path = tmp_path / f"probe-{hashlib.sha1(line.encode('utf-8', 'surrogatepass')).hexdigest()}"
    path.write_bytes(line.encode("utf-8", "surrogateescape") + b"\n")
    done = subprocess.run([SSH_KEYGEN, "-lf", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        return False, None, None
    bits, fingerprint = done.stdout.split()[:2]
    return True, int(bits), fingerprint


def assert_agrees_with_keygen(line: str, tmp_path: Path) -> AuthorizedKey:
    accepted, bits, fingerprint = keygen(line, tmp_path)
    key = parse_authorized_key(line)
    assert key.key_valid is accepted, key.problems
    if accepted:
        assert (key.bits, key.fingerprint) == (bits, fingerprint)
    return key


def blob_of(line: str) -> tuple[str, bytes]:
    key_type, text = line.split()[:2]
    return key_type, base64.b64decode(text)


def ssh_string(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def fields(blob: bytes) -> list[bytes]:
    out, i = [], 0
    while i < len(blob):
        size = int.from_bytes(blob[i : i + 4], "big")
        out.append(blob[i + 4 : i + 4 + size])
        i += 4 + size
    return out


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def line_of(key_type: str, blob: bytes) -> str:
    return f"{key_type} {b64(blob)}"


# --------------------------------------------------------------------------- generated keys

PLAIN = ["ed25519", "ecdsa256", "ecdsa384", "ecdsa521", "rsa1024", "rsa2048", "rsa3072", "rsa4096"]


@pytest.mark.parametrize("name", [*PLAIN, "dsa"])
def test_generated_key_matches_ssh_keygen(keys: Keys, name: str, tmp_path: Path) -> None:
    if not keys.has(name):
        pytest.skip(f"this ssh-keygen cannot make {name} keys")
    key = assert_agrees_with_keygen(keys.line(name), tmp_path)
    assert key.key_valid
    assert key.api_valid
    assert key.comment == f"{name}@test"


@pytest.mark.parametrize("name", list(CERT_SPECS))
def test_certificate_matches_ssh_keygen(keys: Keys, name: str, tmp_path: Path) -> None:
    if not keys.has(f"cert_{name}"):
        pytest.skip("the key or CA type cannot be made here")
    key = assert_agrees_with_keygen(keys.line(f"cert_{name}"), tmp_path)
    assert key.key_valid
    assert key.key_type is not None
    assert key.key_type.endswith("-cert-v01@openssh.com")


def test_certificate_fingerprint_is_the_certified_keys(keys: Keys) -> None:
    cert = parse_authorized_key(keys.line("cert_ed25519_by_ed25519"))
    plain = parse_authorized_key(keys.line("ed25519"))
    assert cert.fingerprint == plain.fingerprint
    assert cert.bits == plain.bits == 256


def test_a_certificate_and_its_plain_key_are_not_duplicates(keys: Keys) -> None:
    cert, plain = keys.line("cert_ed25519_by_ed25519"), keys.line("ed25519")
    assert parse_authorized_key(cert).fingerprint == parse_authorized_key(plain).fingerprint
    entries = audit_lines([cert, plain, cert])
    assert not any("Duplicate" in p for e in entries[:2] for p in e.problems)
    assert entries[2].problems[-1] == "Duplicate key: the same key is already on line 1."


def test_certificate_fields_are_parsed(keys: Keys) -> None:
    cert = parse_authorized_key(keys.line("cert_ed25519_by_ed25519")).certificate
    assert cert is not None
    assert cert.principals == ("alice", "bob")
    assert cert.key_id == "id-ed25519_by_ed25519"
    assert cert.cert_type == "user"
    assert cert.ca_fingerprint == parse_authorized_key(keys.line("ca_ed25519")).fingerprint
    host = parse_authorized_key(keys.line("cert_ecdsa521_by_ed25519_host")).certificate
    assert host is not None
    assert host.cert_type == "host"
    rsa_signed = parse_authorized_key(keys.line("cert_ed25519_by_rsa_sha1")).certificate
    assert rsa_signed is not None
    assert rsa_signed.signature_type == "ssh-rsa"


def test_certificate_is_a_warning_and_expired_one_says_so(keys: Keys) -> None:
    key = parse_authorized_key(keys.line("cert_expired"))
    assert key.status == "warning"
    assert any("not a plain public key" in p for p in key.problems)
    assert any("expired on 2001-01-01" in p for p in key.problems)


def test_rsa_keys_under_1024_bits_cannot_be_generated() -> None:
    assert SSH_KEYGEN is not None
    done = subprocess.run(
        [SSH_KEYGEN, "-t", "rsa", "-b", "1023", "-N", "", "-f", "/dev/null/x"],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "minimum is 1024" in done.stderr


# --------------------------------------------------------------------------- corruptions


def _flip_char(line: str) -> str:
    key_type, text = line.split()[:2]
    middle = len(text) // 2
    swapped = "B" if text[middle] != "B" else "C"
    return f"{key_type} {text[:middle]}{swapped}{text[middle + 1 :]}"


def _with_blob(change: Callable[[bytes], bytes]) -> Callable[[str], str]:
    def corrupt(line: str) -> str:
        key_type, blob = blob_of(line)
        return line_of(key_type, change(blob))

    return corrupt


def _with_fields(change: Callable[[list[bytes]], list[bytes]]) -> Callable[[str], str]:
    return _with_blob(lambda blob: b"".join(ssh_string(f) for f in change(fields(blob))))


def _declare(new_type: str) -> Callable[[str], str]:
    return lambda line: f"{new_type} {line.split()[1]}"


def _base64_text(change: Callable[[str], str]) -> Callable[[str], str]:
    def corrupt(line: str) -> str:
        key_type, text = line.split()[:2]
        return f"{key_type} {change(text)}"

    return corrupt


def _point(change: Callable[[bytes], bytes]) -> Callable[[str], str]:
    return _with_fields(lambda f: [f[0], f[1], change(f[2]), *f[3:]])


def _compress(point: bytes) -> bytes:
    size = (len(point) - 1) // 2
    return bytes([2 + (point[-1] & 1)]) + point[1 : 1 + size]


def _nonzero_pad_bits(text: str) -> str:
    stem = text.rstrip("=")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = alphabet[alphabet.index(stem[-1]) | 1]
    return stem[:-1] + last + "=" * (len(text) - len(stem))


CORRUPTIONS: dict[str, tuple[str, Callable[[str], str]]] = {
    "flip a base64 char (ed25519)": ("ed25519", _flip_char),
    "flip a base64 char (ecdsa)": ("ecdsa256", _flip_char),
    "flip a base64 char (rsa)": ("rsa2048", _flip_char),
    "truncate the text": ("ed25519", _base64_text(lambda t: t[:-4])),
    "truncate the blob": ("ecdsa384", _with_blob(lambda b: b[:-1])),
    "truncate inside a field": ("rsa2048", _with_blob(lambda b: b[:40])),
    "append a byte": ("ed25519", _with_blob(lambda b: b + b"\0")),
    "append a field": ("rsa2048", _with_blob(lambda b: b + ssh_string(b"x"))),
    "declare ssh-rsa for ed25519": ("ed25519", _declare("ssh-rsa")),
    "declare nistp384 for nistp256": ("ecdsa256", _declare("ecdsa-sha2-nistp384")),
    "declare rsa-sha2-256": ("rsa2048", _declare("rsa-sha2-256")),
    "declare RSA short name": ("rsa2048", _declare("RSA")),
    "declare a cert type for a plain key": (
        "ed25519",
        _declare("ssh-ed25519-cert-v01@openssh.com"),
    ),
    "blob type short name": ("ed25519", _with_fields(lambda f: [b"ED25519", *f[1:]])),
    "blob type short name lowercase": ("rsa2048", _with_fields(lambda f: [b"rsa", *f[1:]])),
    "blob type rsa-sha2-512": ("rsa2048", _with_fields(lambda f: [b"rsa-sha2-512", *f[1:]])),
    "blob type ECDSA short name": ("ecdsa256", _with_fields(lambda f: [b"ECDSA", *f[1:]])),
    "blob type trailing NUL": ("ed25519", _with_fields(lambda f: [f[0] + b"\0", *f[1:]])),
    "blob type inner NUL": ("ed25519", _with_fields(lambda f: [f[0] + b"\0x", *f[1:]])),
    "wrong curve name": ("ecdsa256", _with_fields(lambda f: [f[0], b"nistp384", *f[2:]])),
    "unknown curve name": ("ecdsa256", _with_fields(lambda f: [f[0], b"nistp999", *f[2:]])),
    "point off the curve": ("ecdsa256", _point(lambda p: p[:-1] + bytes([p[-1] ^ 1]))),
    "point off the curve (521)": ("ecdsa521", _point(lambda p: p[:-1] + bytes([p[-1] ^ 1]))),
    "compressed point": ("ecdsa256", _point(_compress)),
    "hybrid point prefix": ("ecdsa384", _point(lambda p: b"\x06" + p[1:])),
    "point one byte long": ("ecdsa256", _point(lambda p: p + b"\0")),
    "point at infinity": ("ecdsa256", _point(lambda p: b"\0")),
    "bad padding: missing": ("ecdsa256", _base64_text(lambda t: t.rstrip("="))),
    "bad padding: extra": ("ecdsa256", _base64_text(lambda t: t + "==")),
    "non-zero bits before padding": ("ecdsa256", _base64_text(_nonzero_pad_bits)),
    "junk char": ("ed25519", _base64_text(lambda t: t[:10] + "!" + t[10:])),
    "non-ASCII char": ("ed25519", _base64_text(lambda t: t[:10] + "é" + t[10:])),
    "CR inside the base64": ("ed25519", _base64_text(lambda t: t[:10] + "\r" + t[10:])),
    "vertical tab inside the base64": ("rsa2048", _base64_text(lambda t: t[:9] + "\v" + t[9:])),
    "ed25519 key of 31 bytes": ("ed25519", _with_fields(lambda f: [f[0], f[1][:31]])),
    "ed25519 key of 33 bytes": ("ed25519", _with_fields(lambda f: [f[0], f[1] + b"\0"])),
    "ed25519 key that is no point": ("ed25519", _with_fields(lambda f: [f[0], b"\xff" * 32])),
    "rsa exponent with a leading zero": (
        "rsa2048",
        _with_fields(lambda f: [f[0], b"\0" + f[1], f[2]]),
    ),
    "rsa modulus with 600 leading zeros": (
        "rsa2048",
        _with_fields(lambda f: [f[0], f[1], b"\0" * 600 + f[2]]),
    ),
    "rsa negative modulus": ("rsa2048", _with_fields(lambda f: [f[0], f[1], f[2][1:]])),
    "rsa modulus of 1023 bits": (
        "rsa2048",
        _with_fields(lambda f: [f[0], f[1], ((1 << 1022) | 1).to_bytes(128, "big")]),
    ),
    "rsa modulus of 2049 bytes": (
        "rsa2048",
        _with_fields(lambda f: [f[0], f[1], b"\x01" + os.urandom(2048)]),
    ),
    "rsa modulus of 16384 bits": (
        "rsa2048",
        _with_fields(lambda f: [f[0], f[1], b"\0\xff" + os.urandom(2047)]),
    ),
    "rsa exponent of 1": ("rsa2048", _with_fields(lambda f: [f[0], b"\x01", f[2]])),
    "dsa missing y": ("dsa", _with_fields(lambda f: f[:4])),
    "dsa p of zero": ("dsa", _with_fields(lambda f: [f[0], b"", *f[2:]])),
    "type only": ("ed25519", lambda line: line.split()[0]),
    "type and a space": ("ed25519", lambda line: line.split()[0] + " "),
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_variant_is_key_valid_exactly_when_ssh_keygen_accepts_it(
    keys: Keys, name: str, tmp_path: Path
) -> None:
    source, corrupt = CORRUPTIONS[name]
    if not keys.has(source):
        pytest.skip(f"no {source} key here")
    assert_agrees_with_keygen(corrupt(keys.line(source)), tmp_path)


def _curve_points(curve_name: str) -> dict[str, tuple[int, int]]:
    """Points on the curve that fail OpenSSH's extra bounds, and one that passes."""
    curve = _CURVES[curve_name]
    p, found = curve.p, {}

    def lift(x: int) -> int | None:
        rhs = (x**3 - 3 * x + curve.b) % p
        y = pow(rhs, (p + 1) // 4, p)  # p = 3 (mod 4) for P-256 and P-384
        return y if y * y % p == rhs else None

    for name, start in (("x >= n - 1", curve.n - 1), ("short x", 5)):
        x = start
        while (y := lift(x)) is None or min(y, p - y) >= curve.n - 1:
            x += 1
        found[name] = (x, min(y, p - y))
    found["negated generator"] = (curve.gx, p - curve.gy)
    found["2G"] = _point_of(curve_name, 2)
    return found


def _point_of(curve_name: str, secret: int) -> tuple[int, int]:
    """secret x G, by OpenSSL (through cryptography)."""
    classes = {"nistp256": ec.SECP256R1, "nistp384": ec.SECP384R1, "nistp521": ec.SECP521R1}
    numbers = ec.derive_private_key(secret, classes[curve_name]()).public_key().public_numbers()
    return numbers.x, numbers.y


@pytest.mark.parametrize("point", ["x >= n - 1", "short x", "negated generator", "2G"])
def test_ecdsa_point_bounds_agree_with_ssh_keygen(keys: Keys, point: str, tmp_path: Path) -> None:
    x, y = _curve_points("nistp256")[point]
    raw = b"\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big")
    blob = ssh_string(b"ecdsa-sha2-nistp256") + ssh_string(b"nistp256") + ssh_string(raw)
    assert_agrees_with_keygen(line_of("ecdsa-sha2-nistp256", blob), tmp_path)


@pytest.mark.parametrize("curve", ["nistp256", "nistp384", "nistp521"])
def test_curve_constants_hold(curve: str) -> None:
    c = _CURVES[curve]
    assert (c.gy**2 - (c.gx**3 - 3 * c.gx + c.b)) % c.p == 0
    # G has order n: (n - 1)G is -G, and 1G is G, by OpenSSL's arithmetic.
    assert _point_of(curve, 1) == (c.gx, c.gy)
    assert _point_of(curve, c.n - 1) == (c.gx, c.p - c.gy)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
@pytest.mark.parametrize(
    ("curve", "openssl_name"),
    [("nistp256", "prime256v1"), ("nistp384", "secp384r1"), ("nistp521", "secp521r1")],
)
def test_curve_constants_are_openssls(curve: str, openssl_name: str) -> None:
    text = subprocess.run(
        ["openssl", "ecparam", "-name", openssl_name, "-param_enc", "explicit", "-text", "-noout"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    def number(label: str) -> int:
        match = re.search(rf"^{re.escape(label)}:\s*\n((?:\s+[0-9a-f:]+\n)+)", text, re.M)
        assert match is not None, label
        return int(re.sub(r"[^0-9a-f]", "", match.group(1)), 16)

    c = _CURVES[curve]
    generator = number("Generator (uncompressed)")
    size = c.field_bytes * 8
    assert (number("Prime"), number("A"), number("B"), number("Order")) == (c.p, c.p - 3, c.b, c.n)
    assert (generator >> size & ((1 << size) - 1), generator & ((1 << size) - 1)) == (c.gx, c.gy)


def test_mpint_padding_does_not_change_the_fingerprint(keys: Keys) -> None:
    padded = CORRUPTIONS["rsa exponent with a leading zero"][1](keys.line("rsa2048"))
    assert (
        parse_authorized_key(padded).fingerprint
        == parse_authorized_key(keys.line("rsa2048")).fingerprint
    )


# --------------------------------------------------------------------------- certificates, corrupted


def _cert_body_flip(line: str) -> str:
    key_type, blob = blob_of(line)
    at = blob.index(b"id-") + 1  # inside the key id: the signature no longer matches
    return line_of(key_type, blob[:at] + bytes([blob[at] ^ 0x20]) + blob[at + 1 :])


CERT_CORRUPTIONS: dict[str, Callable[[str], str]] = {
    "key id changed": _cert_body_flip,
    "signature byte flipped": _with_blob(lambda b: b[:-3] + bytes([b[-3] ^ 1]) + b[-2:]),
    "byte appended": _with_blob(lambda b: b + b"\0"),
    "signature missing": _with_blob(lambda b: b[: -(int.from_bytes(b[-68:-64], "big") + 4)]),
    "declared as the plain type": lambda line: f"ssh-ed25519 {line.split()[1]}",
}


@pytest.mark.parametrize("ca", ["ed25519_by_ed25519", "ed25519_by_rsa_sha256"])
@pytest.mark.parametrize("name", list(CERT_CORRUPTIONS))
def test_corrupted_certificate_agrees_with_ssh_keygen(
    keys: Keys, ca: str, name: str, tmp_path: Path
) -> None:
    line = CERT_CORRUPTIONS[name](keys.line(f"cert_{ca}"))
    key = assert_agrees_with_keygen(line, tmp_path)
    assert not key.key_valid


@pytest.mark.parametrize("ca", ["ecdsa256_by_rsa_sha512", "rsa2048_by_ecdsa384", "dsa_by_dsa"])
def test_tampered_certificate_signature_is_refused(keys: Keys, ca: str, tmp_path: Path) -> None:
    if not keys.has(f"cert_{ca}"):
        pytest.skip("no such certificate here")
    key = assert_agrees_with_keygen(_cert_body_flip(keys.line(f"cert_{ca}")), tmp_path)
    assert not key.key_valid
    assert any("signature" in p for p in key.problems)


_ED25519_ORDER = 2**252 + 27742317777372353535851937790883648493


def _ed25519_s_plus_order(line: str) -> str:
    """The certificate with its Ed25519 CA signature's S replaced by S + L (same point)."""
    blob = blob_of(line)[1]
    s = int.from_bytes(blob[-32:], "little")
    return line_of(line.split()[0], blob[:-32] + (s + _ED25519_ORDER).to_bytes(32, "little"))


def test_ed25519_signature_with_s_above_the_order_agrees_with_ssh_keygen(
    keys: Keys, tmp_path: Path
) -> None:
    # OpenSSH's ed25519 reduces S mod L; OpenSSL refuses S >= L: the audit must be OpenSSH.
    line = keys.line("cert_ed25519_by_ed25519")
    key = assert_agrees_with_keygen(_ed25519_s_plus_order(line), tmp_path)
    assert key.key_valid is keygen(line, tmp_path)[0]


# --------------------------------------------------------------------------- security keys (sk-)


def _sk_ed25519(keys: Keys, application: bytes = b"ssh:") -> str:
    public = fields(blob_of(keys.line("ed25519"))[1])[1]
    name = b"sk-ssh-ed25519@openssh.com"
    return line_of(name.decode(), ssh_string(name) + ssh_string(public) + ssh_string(application))


def _sk_ecdsa(keys: Keys, application: bytes = b"ssh:", type_name: bytes = b"") -> str:
    parts = fields(blob_of(keys.line("ecdsa256"))[1])
    name = b"sk-ecdsa-sha2-nistp256@openssh.com"
    blob = ssh_string(type_name or name) + ssh_string(parts[1]) + ssh_string(parts[2])
    return line_of(name.decode(), blob + ssh_string(application))


SK_VARIANTS: dict[str, Callable[[Keys], str]] = {
    "sk-ed25519": _sk_ed25519,
    "sk-ed25519 empty application": lambda k: _sk_ed25519(k, b""),
    "sk-ed25519 NUL in application": lambda k: _sk_ed25519(k, b"ss\0h"),
    "sk-ed25519 application ending in NUL": lambda k: _sk_ed25519(k, b"ssh:\0"),
    "sk-ed25519 without application": lambda k: line_of(
        "sk-ssh-ed25519@openssh.com",
        ssh_string(b"sk-ssh-ed25519@openssh.com")
        + ssh_string(fields(blob_of(k.line("ed25519"))[1])[1]),
    ),
    "sk-ecdsa": _sk_ecdsa,
    "sk-ecdsa declared webauthn": lambda k: "webauthn-" + _sk_ecdsa(k),
    "sk-ecdsa blob says webauthn": lambda k: _sk_ecdsa(
        k, type_name=b"webauthn-sk-ecdsa-sha2-nistp256@openssh.com"
    ),
    "sk-ecdsa blob says ECDSA-SK": lambda k: _sk_ecdsa(k, type_name=b"ECDSA-SK"),
}


@pytest.mark.parametrize("name", list(SK_VARIANTS))
def test_security_key_variant_agrees_with_ssh_keygen(keys: Keys, name: str, tmp_path: Path) -> None:
    assert_agrees_with_keygen(SK_VARIANTS[name](keys), tmp_path)


def test_security_key_is_ok_and_keeps_its_application(keys: Keys) -> None:
    key = parse_authorized_key(_sk_ecdsa(keys) + " yubikey")
    assert key.status == "ok"
    assert key.public_key is not None
    assert key.public_key.sk_application == "ssh:"
    assert key.bits == 256


# --------------------------------------------------------------------------- certificates by sk CAs
# ssh-keygen cannot sign with a security key without the device, so these
# certificates are signed here (RFC 8032 / ECDSA in Python, PROTOCOL.u2f framing)
# with private keys taken from files ssh-keygen made, and ssh-keygen judges them.


def _private_fields(keys: Keys, name: str) -> list[bytes]:
    """The fields of the (unencrypted) openssh-key-v1 private section."""
    body = "".join(keys.private(name).split("-----")[2].split())
    blob = base64.b64decode(body)[len(b"openssh-key-v1\0") :]
    outer, i = [], 0
    for _ in range(5):  # cipher, kdf, kdf options, [count], public key, private section
        if len(outer) == 3:
            i += 4
        size = int.from_bytes(blob[i : i + 4], "big")
        outer.append(blob[i + 4 : i + 4 + size])
        i += 4 + size
    return fields(outer[-1][8:])[:4]  # skip the two check integers


def _ed25519_sign(seed: bytes, message: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(seed).sign(message)


def _p256_sign(secret: int, digest: bytes) -> bytes:
    key = ec.derive_private_key(secret, ec.SECP256R1())
    r, s = decode_dss_signature(key.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256()))))

    def mpint(v: int) -> bytes:
        raw = v.to_bytes((v.bit_length() + 7) // 8, "big")
        return ssh_string(b"\0" + raw if raw[0] & 0x80 else raw)

    return mpint(r) + mpint(s)


def _sk_ca_certificate(keys: Keys, ca_kind: str, tamper: bool) -> str:
    """An ed25519 user certificate whose CA is a security key, signed here."""
    subject = fields(blob_of(keys.line("ed25519"))[1])[1]
    app, flags, counter = b"ssh:", 1, 42
    if ca_kind == "sk-ed25519":
        _, public, secret, _ = _private_fields(keys, "ca_ed25519")
        ca_name = b"sk-ssh-ed25519@openssh.com"
        ca = ssh_string(ca_name) + ssh_string(public) + ssh_string(app)
    else:
        _, curve, point, secret = _private_fields(keys, "ca_ecdsa256")
        ca_name = b"sk-ecdsa-sha2-nistp256@openssh.com"
        ca = ssh_string(ca_name) + ssh_string(curve) + ssh_string(point) + ssh_string(app)
    body = b"".join(
        [
            ssh_string(b"ssh-ed25519-cert-v01@openssh.com"),
            ssh_string(os.urandom(32)),
            ssh_string(subject),
            (7).to_bytes(8, "big"),
            (1).to_bytes(4, "big"),
            ssh_string(b"sk-signed"),
            ssh_string(ssh_string(b"alice")),
            bytes(8),
            b"\xff" * 8,
            ssh_string(b""),
            ssh_string(b""),
            ssh_string(b""),
            ssh_string(ca),
        ]
    )
    tail = bytes([flags]) + counter.to_bytes(4, "big")
    signed = hashlib.sha256(app).digest() + tail + hashlib.sha256(body).digest()
    if ca_kind == "sk-ed25519":
        raw = _ed25519_sign(secret[:32], signed)
    else:
        raw = _p256_sign(int.from_bytes(secret, "big"), hashlib.sha256(signed).digest())
    if tamper:
        tail = bytes([flags]) + (counter + 1).to_bytes(4, "big")
    signature = ssh_string(ca_name) + ssh_string(raw) + tail
    return line_of("ssh-ed25519-cert-v01@openssh.com", body + ssh_string(signature))


@pytest.mark.parametrize("ca_kind", ["sk-ed25519", "sk-ecdsa"])
@pytest.mark.parametrize("tamper", [False, True], ids=["signed", "counter changed"])
def test_certificate_by_a_security_key_ca_agrees_with_ssh_keygen(
    keys: Keys, ca_kind: str, tamper: bool, tmp_path: Path
) -> None:
    key = assert_agrees_with_keygen(_sk_ca_certificate(keys, ca_kind, tamper), tmp_path)
    assert key.key_valid is not tamper


# --------------------------------------------------------------------------- problems and status


def test_rsa_2048_is_a_warning(keys: Keys) -> None:
    key = parse_authorized_key(keys.line("rsa2048"))
    assert key.status == "warning"
    assert any("2048 bits" in p and "3072" in p for p in key.problems)


def test_rsa_3072_is_ok(keys: Keys) -> None:
    assert parse_authorized_key(keys.line("rsa3072")).status == "ok"


def test_rsa_1024_is_key_valid_with_a_warning(keys: Keys) -> None:
    key = parse_authorized_key(keys.line("rsa1024"))
    assert (key.key_valid, key.status, key.bits) == (True, "warning", 1024)


def test_rsa_under_1024_bits_is_an_error_naming_the_minimum(keys: Keys) -> None:
    key = parse_authorized_key(CORRUPTIONS["rsa modulus of 1023 bits"][1](keys.line("rsa2048")))
    assert (key.key_valid, key.status) == (False, "error")
    assert any("1023 bits" in p and "1024" in p for p in key.problems)


def test_rsa_exponent_of_one_is_an_error(keys: Keys) -> None:
    key = parse_authorized_key(CORRUPTIONS["rsa exponent of 1"][1](keys.line("rsa2048")))
    assert key.key_valid
    assert key.status == "error"


def test_dsa_is_a_deprecation_warning(keys: Keys) -> None:
    if not keys.has("dsa"):
        pytest.skip("this ssh-keygen cannot make DSA keys")
    key = parse_authorized_key(keys.line("dsa"))
    assert (key.key_valid, key.status) == (True, "warning")
    assert any("deprecated" in p for p in key.problems)


def test_ed25519_is_ok_without_problems(keys: Keys) -> None:
    key = parse_authorized_key(keys.line("ed25519"))
    assert (key.status, key.problems, key.options) == ("ok", [], ())


def test_options_are_parsed_and_make_the_line_an_api_error(keys: Keys) -> None:
    line = (
        'from="10.0.0.0/8,192.168.1.*",no-pty,command="echo \\"hi there\\"",'
        'environment="A=b c" ' + keys.line("ed25519")
    )
    key = parse_authorized_key(line)
    assert key.options == (
        ("from", "10.0.0.0/8,192.168.1.*"),
        ("no-pty", None),
        ("command", 'echo "hi there"'),
        ("environment", "A=b c"),
    )
    assert (key.key_valid, key.api_valid, key.status) == (True, False, "error")
    assert any("The API will reject" in p and "options" in p for p in key.problems)
    assert key.comment == "ed25519@test"


def test_options_with_an_unterminated_quote_are_refused(keys: Keys, tmp_path: Path) -> None:
    key = assert_agrees_with_keygen('command="echo a b ' + keys.line("ed25519"), tmp_path)
    assert any("unterminated" in p for p in key.problems)


def test_unknown_option_is_an_error_sshd_would_refuse(keys: Keys) -> None:
    key = parse_authorized_key("no-such-thing " + keys.line("ed25519"))
    assert key.key_valid
    assert any("sshd will ignore this line" in p and "no-such-thing" in p for p in key.problems)


def test_crlf_is_reported_explicitly(keys: Keys, tmp_path: Path) -> None:
    key = assert_agrees_with_keygen(keys.line("ed25519") + "\r", tmp_path)
    assert (key.key_valid, key.api_valid, key.status) == (True, False, "error")
    assert any("carriage return" in p and "CRLF" in p for p in key.problems)
    assert key.comment == "ed25519@test"


def test_trailing_newline_is_part_of_the_line(keys: Keys) -> None:
    key = parse_authorized_key(keys.line("ed25519") + "\n")
    assert (key.key_valid, key.api_valid) == (True, False)
    assert any("line feed" in p for p in key.problems)


def test_leading_whitespace_is_an_api_error(keys: Keys, tmp_path: Path) -> None:
    key = assert_agrees_with_keygen("  " + keys.line("ed25519"), tmp_path)
    assert not key.api_valid
    assert any("starts with whitespace" in p for p in key.problems)


def test_trailing_whitespace_is_a_warning(keys: Keys) -> None:
    key = parse_authorized_key(keys.line("ed25519") + " ")
    assert (key.api_valid, key.status) == (True, "warning")


@pytest.mark.parametrize(
    ("separator", "words"), [("  ", "exactly one space"), ("\t", "a tab"), ("\u00a0", "U+00A0")]
)
def test_separator_after_the_type_is_named(keys: Keys, separator: str, words: str) -> None:
    key_type, rest = keys.line("ed25519").split(" ", 1)
    key = parse_authorized_key(key_type + separator + rest)
    assert not key.api_valid
    assert any(words in p for p in key.problems)


def test_unknown_key_type_is_named_when_it_looks_like_one() -> None:
    key = parse_authorized_key("ssh-ed448 AAAAC3NzaC1lZDQ0OAAAAA== me")
    assert (key.key_valid, key.key_type) == (False, None)
    assert any("'ssh-ed448' is not one OpenSSH knows" in p for p in key.problems)


def test_type_mismatch_names_both_types(keys: Keys) -> None:
    key = parse_authorized_key("ssh-rsa " + keys.line("ed25519").split()[1])
    assert any("says ssh-rsa" in p and "ssh-ed25519" in p for p in key.problems)


def test_declared_signature_algorithm_is_valid_for_openssh_but_not_the_api(keys: Keys) -> None:
    key = parse_authorized_key(CORRUPTIONS["declare rsa-sha2-256"][1](keys.line("rsa3072")))
    assert (key.key_valid, key.api_valid, key.key_type) == (True, False, "ssh-rsa")
    assert any("does not start with ssh-, ecdsa- or sk-" in p for p in key.problems)


def test_byte_order_mark_is_reported(keys: Keys, tmp_path: Path) -> None:
    key = assert_agrees_with_keygen("\ufeff" + keys.line("ed25519"), tmp_path)
    assert any("byte order mark" in p for p in key.problems)


def test_nul_in_comment_is_a_warning_openssh_stops_there(keys: Keys) -> None:
    key = parse_authorized_key(keys.line("ed25519") + "\0junk")
    assert key.key_valid
    assert any("NUL" in p for p in key.problems)


def test_repr_shows_neither_the_line_nor_option_values(keys: Keys) -> None:
    key = parse_authorized_key('environment="TOKEN=s3cr3t-value" ' + keys.line("ed25519"))
    text = repr(key)
    assert "s3cr3t-value" not in text
    assert keys.line("ed25519").split()[1] not in text
    assert "environment" in text


# --------------------------------------------------------------------------- private keys


def _secret_lines(private_text: str) -> list[str]:
    return [ln for ln in private_text.splitlines() if ln and not ln.startswith("-----")]


def _everything_shown(source: object) -> str:
    entries = audit_lines(source)  # type: ignore[arg-type]
    frame = audit_keys(source)  # type: ignore[arg-type]
    return "\n".join(
        [repr(entries), str([e.as_dict() for e in entries]), frame.to_string(), frame.to_json()]
    )


@pytest.mark.parametrize("name", ["ed25519", "pem_rsa", "pkcs8_ecdsa"])
def test_pasted_private_key_is_an_error_and_never_echoed(keys: Keys, name: str) -> None:
    private = keys.private(name)
    text = keys.line("ecdsa256") + "\n" + private + keys.line("rsa3072") + "\n"
    entries = audit_lines(text)
    assert [e.status for e in entries] == ["ok", "error", "ok"]
    assert entries[1].line_no == 2
    assert "this is a private key" in entries[1].problems[0].lower()
    shown = _everything_shown(text)
    for secret in _secret_lines(private):
        assert secret not in shown
        assert secret[:24] not in shown


def test_private_key_body_line_alone_is_recognised(keys: Keys) -> None:
    for name in ("ed25519", "pem_rsa"):
        body = _secret_lines(keys.private(name))[0]
        key = parse_authorized_key(body)
        assert key.is_private_key
        assert key.line == ""
        assert body not in repr(key) + " ".join(key.problems)


def test_putty_private_key_is_recognised_as_one_entry() -> None:
    ppk = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\nPublic-Lines: 2\n"
        "AAAAC3NzaC1lZDI1NTE5AAAAIOQ4\nbWU=\nPrivate-Lines: 1\nAAAAIHNlY3JldFNFQ1JFVHNlY3JldA==\n"
        "Private-MAC: 0123456789abcdef\n"
    )
    entries = audit_lines(ppk)
    assert len(entries) == 1
    assert entries[0].key.is_private_key
    assert "AAAAIHNlY3JldFNFQ1JFVHNlY3JldA" not in _everything_shown(ppk)


def test_private_key_in_the_key_position_is_not_echoed(keys: Keys) -> None:
    body = "".join(_secret_lines(keys.private("ed25519")))
    key = parse_authorized_key(f"ssh-ed25519 {body} me")
    assert key.is_private_key
    assert body[:30] not in repr(key) + str(key.problems)


# --------------------------------------------------------------------------- audit


def test_duplicates_name_the_earlier_line(keys: Keys) -> None:
    ed = keys.line("ed25519")
    entries = audit_lines([ed, "# comment", "", ed.rsplit(" ", 1)[0] + " other-comment"])
    assert [e.line_no for e in entries] == [1, 4]
    assert entries[1].status == "warning"
    assert any("already on line 1" in p for p in entries[1].problems)


def test_blank_and_comment_lines_are_skipped_but_counted(keys: Keys) -> None:
    text = f"# keys\n\n   \n\t# indented\n{keys.line('ed25519')}\n"
    assert [e.line_no for e in audit_lines(text)] == [5]


def test_crlf_file_reports_every_line(keys: Keys) -> None:
    data = (keys.line("ed25519") + "\r\n" + keys.line("ecdsa256") + "\r\n").encode()
    entries = audit_lines(data)
    assert len(entries) == 2
    assert all(any("CRLF" in p for p in e.problems) for e in entries)


def test_str_naming_a_file_is_read_as_that_file(keys: Keys) -> None:
    entries = audit_lines(str(keys.path("ed25519")))
    assert [e.fingerprint for e in entries] == [
        parse_authorized_key(keys.line("ed25519")).fingerprint
    ]


@pytest.mark.parametrize(
    "make",
    [
        lambda p: p,
        lambda p: pathlib.PurePath(p),
        lambda p: Path(p).read_bytes(),
        lambda p: Path(p).read_text().splitlines(keepends=True),
        lambda p: open(p, encoding="utf-8"),  # noqa: SIM115 - closed by the garbage collector
    ],
    ids=["path", "purepath", "bytes", "lines", "file object"],
)
def test_every_source_kind_gives_the_same_rows(keys: Keys, make: Callable[[Path], object]) -> None:
    entries = audit_lines(make(keys.path("rsa2048")))  # type: ignore[arg-type]
    assert [(e.line_no, e.fingerprint, e.status) for e in entries] == [
        (1, parse_authorized_key(keys.line("rsa2048")).fingerprint, "warning")
    ]


def test_a_path_among_key_lines_says_it_looks_like_one() -> None:
    (entry,) = audit_lines(["ssh-ed25519 AAAA", "/no/such/authorized_keys"])[1:]
    assert any("file path" in p for p in entry.problems)


def test_invalid_utf8_is_reported(keys: Keys) -> None:
    (entry,) = audit_lines(keys.line("ed25519").encode() + b" caf\xe9\n")
    assert entry.key_valid
    assert any("UTF-8" in p for p in entry.problems)


def test_rfc4716_block_is_a_valid_key_the_api_cannot_take(keys: Keys) -> None:
    assert SSH_KEYGEN is not None
    exported = subprocess.run(
        [SSH_KEYGEN, "-e", "-f", str(keys.path("rsa3072"))], capture_output=True, text=True
    ).stdout
    (entry,) = audit_lines("# exported\n" + exported)
    assert (entry.line_no, entry.key_valid, entry.api_valid) == (2, True, False)
    assert entry.fingerprint == parse_authorized_key(keys.line("rsa3072")).fingerprint
    assert normalize_key_lines(exported)[0].split()[:2] == keys.line("rsa3072").split()[:2]


def test_audit_keys_frame_has_the_promised_columns_and_dtypes(keys: Keys) -> None:
    frame = audit_keys([keys.line("ed25519"), "garbage"])
    assert list(frame.columns) == [
        "line_no",
        "status",
        "key_type",
        "bits",
        "fingerprint",
        "comment",
        "api_valid",
        "key_valid",
        "problems",
        "options",
    ]
    assert {c: str(t) for c, t in frame.dtypes.items()} == {
        "line_no": "Int64",
        "status": "string",
        "key_type": "string",
        "bits": "Int64",
        "fingerprint": "string",
        "comment": "string",
        "api_valid": "boolean",
        "key_valid": "boolean",
        "problems": "object",
        "options": "object",
    }
    assert frame["bits"].isna().tolist() == [False, True]
    assert frame.loc[1, "problems"]


def test_audit_keys_of_nothing_is_an_empty_frame_with_columns() -> None:
    frame = audit_keys("")
    assert frame.empty
    assert "fingerprint" in frame.columns


def test_audit_keys_imports_pandas_only_when_called() -> None:
    code = "import sys, ccanalytics.keys; print('pandas' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


# --------------------------------------------------------------------------- never raises


_ANY_TEXT = st.text(st.characters(exclude_categories=()))  # lone surrogates included


@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT)
def test_parse_authorized_key_never_raises_for_any_text(text: str) -> None:
    key = parse_authorized_key(text)
    assert key.status in ("ok", "warning", "error")
    assert key.api_valid is matches_api_pattern(text)


_KEYISH = st.builds(
    lambda kind, body, tail: f"{kind} {body}{tail}",
    st.sampled_from(
        ["ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "sk-ssh-ed25519@openssh.com"]
    ),
    st.text(
        alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\r\v",
        max_size=120,
    ),
    st.text(max_size=10),
)


@settings(max_examples=200, deadline=None)
@given(_KEYISH)
def test_key_shaped_garbage_never_raises(line: str) -> None:
    key = parse_authorized_key(line)
    assert key.key_valid in (True, False)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_blobs_never_raise(blob: bytes) -> None:
    for key_type in ("ssh-ed25519", "ssh-rsa-cert-v01@openssh.com", "ecdsa-sha2-nistp521"):
        assert parse_authorized_key(line_of(key_type, blob)).status in ("ok", "warning", "error")


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=500))
def test_audit_keys_never_raises_for_bytes(data: bytes) -> None:
    frame = audit_keys(data)
    assert set(frame["status"]) <= {"ok", "warning", "error"}


@settings(max_examples=100, deadline=None)
@given(st.lists(_ANY_TEXT, max_size=8))
def test_audit_keys_never_raises_for_lines_of_any_text(lines: list[str]) -> None:
    frame = audit_keys(["# keys", *lines])  # a first line that is no file: a list of lines
    assert set(frame["status"]) <= {"ok", "warning", "error"}


@settings(max_examples=100, deadline=None)
@given(st.one_of(_ANY_TEXT, st.lists(_ANY_TEXT, max_size=4)))
def test_any_text_is_audited_or_names_a_file_that_cannot_be_read(source: str | list[str]) -> None:
    try:
        frame = audit_keys(source)
    except KeyFileError as err:
        str(err).encode("utf-8")  # printable, whatever the name held
        return
    assert set(frame["status"]) <= {"ok", "warning", "error"}


def test_huge_and_odd_lines_do_not_raise() -> None:
    for text in ("ssh-ed25519 " + "A" * 2_000_000, "x" * 1_000_000, "\ud800\udfff\x00" * 1000):
        assert parse_authorized_key(text).status == "error"


def test_non_str_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        parse_authorized_key(b"ssh-ed25519 AAAA")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- normalize


def test_normalize_makes_api_lines_without_changing_the_keys(keys: Keys) -> None:
    ed, rsa = keys.line("ed25519"), keys.line("rsa3072")
    messy = [
        "  " + ed.replace(" ", "\t", 1) + "\r\n",
        "# a comment",
        "",
        CORRUPTIONS["declare rsa-sha2-256"][1](rsa) + "   spaced   out  ",
        "\t" + keys.line("ecdsa384") + " ",
    ]
    out = normalize_key_lines(messy)
    assert all(matches_api_pattern(line) for line in out)
    assert out[0] == ed
    assert out[1] == rsa.split()[0] + " " + rsa.split()[1] + " spaced out"
    before = [e.fingerprint for e in audit_lines(messy)]
    assert [parse_authorized_key(line).fingerprint for line in out] == before


def test_normalize_drops_options_with_a_warning(keys: Keys) -> None:
    with pytest.warns(KeyOptionsDroppedWarning, match="line 1 \\(from, no-pty\\)"):
        out = normalize_key_lines(['from="1.2.3.4",no-pty ' + keys.line("ed25519")])
    assert out == [keys.line("ed25519")]


def test_normalize_drops_later_copies_of_a_key(keys: Keys) -> None:
    ed = keys.line("ed25519")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert normalize_key_lines([ed, ed + "2"]) == [ed]


def test_normalize_strips_a_byte_order_mark(keys: Keys) -> None:
    assert normalize_key_lines(("\ufeff" + keys.line("ed25519") + "\n").encode()) == [
        keys.line("ed25519")
    ]


@pytest.mark.parametrize(
    "source",
    [
        "",
        "\n\n",
        "# only a comment\n\n   \n# another\n",
        [],
        ["# team keys", ""],
        b"\xef\xbb\xbf\n",
    ],
    ids=["empty text", "blank lines", "comments", "no lines", "comment lines", "bom only"],
)
def test_normalize_refuses_an_input_without_keys(source: object) -> None:
    # Its [] passed to update_ssh_keys would wipe every key on the account.
    with pytest.raises(KeyNormalizationError, match="allow_empty=True") as caught:
        normalize_key_lines(source)  # type: ignore[arg-type]
    assert caught.value.errors and "remove every key" in caught.value.errors[0]


def test_normalize_returns_no_keys_only_when_allowed() -> None:
    assert normalize_key_lines("# nothing here\n", allow_empty=True) == []
    assert normalize_key_lines([], allow_empty=True) == []


def test_normalize_refuses_an_empty_file_by_path(tmp_path: Path) -> None:
    path = tmp_path / "authorized_keys"
    path.write_text("")
    with pytest.raises(KeyNormalizationError):
        normalize_key_lines(path)


def test_normalize_refuses_invalid_lines_listing_all_without_echoing(keys: Keys) -> None:
    private = keys.private("ed25519")
    source = [keys.line("ed25519"), "ssh-ed25519 AAAAnotbase64!", *private.splitlines(), "hunter2"]
    with pytest.raises(KeyNormalizationError) as caught:
        normalize_key_lines(source)
    errors = caught.value.errors
    assert [e.split(":")[0] for e in errors] == ["line 2", "line 3", f"line {len(source)}"]
    assert isinstance(caught.value, ValueError)
    message = str(caught.value)
    assert "private key" in message
    assert "hunter2" not in message
    assert all(secret not in message for secret in _secret_lines(private))


# --------------------------------------------------------------------------- diff


def test_diff_matches_keys_by_fingerprint(keys: Keys) -> None:
    ed, ec, rsa = keys.line("ed25519"), keys.line("ecdsa256"), keys.line("rsa3072")
    change = diff_ssh_keys([ed, rsa], [ed.rsplit(" ", 1)[0] + " renamed", ec])
    assert [r.key_type for r in change.added] == ["ecdsa-sha2-nistp256"]
    assert [r.key_type for r in change.removed] == ["ssh-rsa"]
    (kept,) = change.kept
    assert (kept.previous_comment, kept.comment, kept.comment_changed) == (
        "ed25519@test",
        "renamed",
        True,
    )
    assert change.is_destructive
    assert change.has_changes


def test_diff_of_the_same_keys_changes_nothing(keys: Keys) -> None:
    lines = [keys.line("ed25519"), keys.line("ecdsa384")]
    change = diff_ssh_keys(lines, "\r\n".join(lines))
    assert (change.added, change.removed, change.is_destructive, change.has_changes) == (
        [],
        [],
        False,
        False,
    )


def test_diff_summary_is_readable(keys: Keys) -> None:
    change = diff_ssh_keys([keys.line("rsa2048")], [keys.line("ed25519"), "junk"])
    text = str(change)
    assert text.splitlines()[0] == "1 added, 1 removed, 0 kept"
    assert re.search(r"^  \+ ssh-ed25519 SHA256:\S+ ed25519@test$", text, re.M)
    assert re.search(r"^  - ssh-rsa SHA256:\S+ rsa2048@test$", text, re.M)
    assert "proposed line 2" in text


def test_diff_to_nothing_removes_everything(keys: Keys) -> None:
    change = diff_ssh_keys([keys.line("ed25519")], [])
    assert change.is_destructive
    assert len(change.removed) == 1


# --------------------------------------------------------------------------- the wire layer


def test_base64_decoding_follows_b64_pton() -> None:
    assert decode_base64("QUJD") == b"ABC"
    assert decode_base64("QU\rJD\v") == b"ABC"
    assert decode_base64("QUI=") == b"AB"
    for bad in ("QUI", "QUJ=", "QUI==", "Q===", "QUI=x", "QU!D"):
        with pytest.raises(ValueError, match="base64"):
            decode_base64(bad)


def test_read_public_key_reports_codes(keys: Keys) -> None:
    with pytest.raises(ValueError, match="truncated") as caught:
        read_public_key("ssh-ed25519", b64(blob_of(keys.line("ed25519"))[1][:-2]))
    assert caught.value.code == "truncated"  # type: ignore[attr-defined]

"""Curve maths and certificate signature checks, as OpenSSH 9.x verifies them.

OpenSSH checks a certificate's CA signature while parsing it (``cert_parse``), so a
certificate whose signature does not verify is not a key at all: ``_sshwire`` calls
``_verify_signature`` for each one. Pure Python (``hashlib`` only), like the rest of
key reading. This module holds:

- the NIST curves P-256, P-384 and P-521 (``_CURVES``), the checks on an ECDSA
  public point (``sshbuf_get_ec`` + ``sshkey_ec_validate_public``), ECDSA verification;
- Ed25519 (RFC 8032) with the leniencies of the ref10 code OpenSSH ships;
- RSA PKCS#1 v1.5 (``ssh-rsa``, ``rsa-sha2-256``, ``rsa-sha2-512``) and DSA
  verification, and the message a FIDO (``sk-``) key signs (PROTOCOL.u2f);
- ``_Material``, the numbers of a key, which every ``PublicKey`` keeps so that it
  can check signatures as a CA key.

It only verifies: every input is public, so nothing here needs to be constant-time.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ccanalytics.keys._sshbuf import (
    _MAX_EC_POINT_BYTES,
    KeyFormatError,
    _Reader,
    canonical_type_name,
)

# Underscored names are for ``_sshwire`` (and, through it, the tests), not public API.
__all__ = [
    "_CURVES",
    "_ED_BASE",
    "_ED_L",
    "_Material",
    "_ec_mul",
    "_ec_point",
    "_ed_encode",
    "_ed_mul",
    "_verify_signature",
]


# --------------------------------------------------------------------------- curves


@dataclass(frozen=True, slots=True)
class _Curve:
    name: str
    bits: int
    p: int
    b: int  # a = -3 for all three NIST curves
    n: int
    gx: int
    gy: int
    hash_name: str

    @property
    def field_bytes(self) -> int:
        return (self.p.bit_length() + 7) // 8


_CURVES: dict[str, _Curve] = {
    c.name: c
    for c in (
        _Curve(
            "nistp256",
            256,
            2**256 - 2**224 + 2**192 + 2**96 - 1,
            0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B,
            0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
            0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
            0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
            "sha256",
        ),
        _Curve(
            "nistp384",
            384,
            2**384 - 2**128 - 2**96 + 2**32 - 1,
            int(
                "B3312FA7E23EE7E4988E056BE3F82D19181D9C6EFE8141120314088F"
                "5013875AC656398D8A2ED19D2A85C8EDD3EC2AEF",
                16,
            ),
            int(
                "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81"
                "F4372DDF581A0DB248B0A77AECEC196ACCC52973",
                16,
            ),
            int(
                "AA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E0"
                "82542A385502F25DBF55296C3A545E3872760AB7",
                16,
            ),
            int(
                "3617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113"
                "B5F0B8C00A60B1CE1D7E819D7A431D7C90EA0E5F",
                16,
            ),
            "sha384",
        ),
        _Curve(
            "nistp521",
            521,
            2**521 - 1,
            int(
                "0051953EB9618E1C9A1F929A21A0B68540EEA2DA725B99B315F3B8B489918EF1"
                "09E156193951EC7E937B1652C0BD3BB1BF073573DF883D2C34F1EF451FD46B503F00",
                16,
            ),
            int(
                "01FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFA"
                "51868783BF2F966B7FCC0148F709A5D03BB5C9B8899C47AEBB6FB71E91386409",
                16,
            ),
            int(
                "00C6858E06B70404E9CD9E3ECB662395B4429C648139053FB521F828AF606B4D"
                "3DBAA14B5E77EFE75928FE1DC127A2FFA8DE3348B3C1856A429BF97E7E31C2E5BD66",
                16,
            ),
            int(
                "011839296A789A3BC0045C8A5FB42C7D1BD998F54449579B446817AFBD17273E"
                "662C97EE72995EF42640C550B9013FAD0761353C7086A272C24088BE94769FD16650",
                16,
            ),
            "sha512",
        ),
    )
}

_Point = tuple[int, int] | None  # affine; None is the point at infinity


def _ec_point(curve: _Curve, raw: bytes) -> tuple[int, int]:
    """``sshbuf_get_ec`` + ``sshkey_ec_validate_public``: the point, or why not."""
    if not raw or len(raw) > _MAX_EC_POINT_BYTES:
        raise KeyFormatError("the ECDSA public point has an impossible length", "ec-point")
    if raw[0] != 0x04:
        form = "compressed" if raw[0] in (2, 3) else f"in an unknown form (0x{raw[0]:02x})"
        raise KeyFormatError(
            f"the ECDSA public point is {form}; OpenSSH accepts only uncompressed points",
            "ec-point",
        )
    size = curve.field_bytes
    if len(raw) != 1 + 2 * size:
        raise KeyFormatError(
            f"the ECDSA public point is {len(raw)} bytes; {curve.name} needs {1 + 2 * size}",
            "ec-point",
        )
    x = int.from_bytes(raw[1 : 1 + size], "big")
    y = int.from_bytes(raw[1 + size :], "big")
    p = curve.p
    if x >= p or y >= p or (y * y - (x * x * x - 3 * x + curve.b)) % p:
        raise KeyFormatError(f"the ECDSA public point is not on the curve {curve.name}", "ec-point")
    # OpenSSH's extra bounds (sshkey_ec_validate_public). The curves have cofactor 1,
    # so a point on the curve already has order n: its "nQ == infinity" test holds.
    half = curve.n.bit_length() // 2
    if x.bit_length() <= half or y.bit_length() <= half or x >= curve.n - 1 or y >= curve.n - 1:
        raise KeyFormatError(
            f"the ECDSA public point is outside the range OpenSSH accepts on {curve.name}",
            "ec-point",
        )
    return x, y


def _ec_add(curve: _Curve, a: _Point, b: _Point) -> _Point:
    if a is None:
        return b
    if b is None:
        return a
    p = curve.p
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:
        if (y1 + y2) % p == 0:
            return None
        slope = (3 * x1 * x1 - 3) * pow(2 * y1, -1, p) % p
    else:
        slope = (y2 - y1) * pow(x2 - x1, -1, p) % p
    x3 = (slope * slope - x1 - x2) % p
    return x3, (slope * (x1 - x3) - y1) % p


def _ec_mul(curve: _Curve, k: int, point: _Point) -> _Point:
    result: _Point = None
    while k:
        if k & 1:
            result = _ec_add(curve, result, point)
        point = _ec_add(curve, point, point)
        k >>= 1
    return result


def _ecdsa_verify(curve: _Curve, q: tuple[int, int], r: int, s: int, digest: bytes) -> bool:
    """ECDSA_do_verify for a digest no longer than the order (true for all SSH curves)."""
    n = curve.n
    if not (0 < r < n and 0 < s < n):
        return False
    e = int.from_bytes(digest, "big")
    w = pow(s, -1, n)
    point = _ec_add(
        curve, _ec_mul(curve, e * w % n, (curve.gx, curve.gy)), _ec_mul(curve, r * w % n, q)
    )
    return point is not None and point[0] % n == r


# Ed25519 (RFC 8032), only to check CA signatures on certificates.
_ED_P = 2**255 - 19
_ED_D = -121665 * pow(121666, -1, _ED_P) % _ED_P
_ED_L = 2**252 + 27742317777372353535851937790883648493
_ED_SQRT_M1 = pow(2, (_ED_P - 1) // 4, _ED_P)
_EdPoint = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T)


def _ed_add(a: _EdPoint, b: _EdPoint) -> _EdPoint:
    p = _ED_P
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % p
    bb = (y1 + x1) * (y2 + x2) % p
    cc = 2 * _ED_D * t1 * t2 % p
    dd = 2 * z1 * z2 % p
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return e * f % p, g * h % p, f * g % p, e * h % p


def _ed_mul(k: int, point: _EdPoint) -> _EdPoint:
    result: _EdPoint = (0, 1, 1, 0)
    while k:
        if k & 1:
            result = _ed_add(result, point)
        point = _ed_add(point, point)
        k >>= 1
    return result


def _ed_decode(raw: bytes) -> _EdPoint | None:
    """ref10's ``ge25519_unpackneg_vartime`` leniency: y is taken mod p."""
    p = _ED_P
    y = int.from_bytes(raw, "little") & ((1 << 255) - 1)
    sign = raw[31] >> 7
    u, v = (y * y - 1) % p, (_ED_D * y * y + 1) % p
    x = u * pow(v, 3, p) * pow(u * pow(v, 7, p), (p - 5) // 8, p) % p
    if (v * x * x - u) % p:
        x = x * _ED_SQRT_M1 % p
        if (v * x * x - u) % p:
            return None
    if x & 1 != sign:
        x = (p - x) % p
    return x, y % p, 1, x * y % p


def _ed_encode(point: _EdPoint) -> bytes:
    x, y, z, _ = point
    zi = pow(z, -1, _ED_P)
    x, y = x * zi % _ED_P, y * zi % _ED_P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


_ED_BASE = _ed_decode((4 * pow(5, -1, _ED_P) % _ED_P).to_bytes(32, "little"))


def _ed25519_verify(public: bytes, signature: bytes, message: bytes) -> bool:
    """``crypto_sign_ed25519_open`` as OpenSSH ships it: S reduced mod L, R compared as bytes."""
    point = _ed_decode(public)
    if point is None or len(signature) != 64 or _ED_BASE is None:
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little")
    s = int.from_bytes(signature[32:], "little") % _ED_L
    x, y, z, t = _ed_mul(k % _ED_L, point)
    check = _ed_add(_ed_mul(s, _ED_BASE), ((_ED_P - x) % _ED_P, y, z, (_ED_P - t) % _ED_P))
    return _ed_encode(check) == signature[:32]


# --------------------------------------------------------------------------- signatures


@dataclass(frozen=True, slots=True)
class _Material:
    """The numbers a key is made of (kept to verify signatures made by a CA key)."""

    kind: str
    curve: str | None = None
    point: tuple[int, int] | None = None
    ed25519: bytes = b""
    ints: tuple[int, ...] = ()  # RSA (e, n); DSA (p, q, g, y)
    application: bytes | None = None


_RSA_SIGNATURE_HASHES = {"ssh-rsa": "sha1", "rsa-sha2-256": "sha256", "rsa-sha2-512": "sha512"}
_DIGEST_INFO = {  # DER DigestInfo prefixes (RFC 8017 §9.2 note 1)
    "sha1": bytes.fromhex("3021300906052b0e03021a05000414"),
    "sha256": bytes.fromhex("3031300d060960864801650304020105000420"),
    "sha512": bytes.fromhex("3051300d060960864801650304020305000440"),
}


def _bad_signature(why: str) -> KeyFormatError:
    return KeyFormatError(f"the certificate's CA signature is invalid: {why}", "signature")


def _verify_signature(ca: _Material, signature: bytes, data: bytes) -> str:
    """``sshkey_verify`` with the CA key; returns the signature type or raises."""
    reader = _Reader(signature)
    sig_type = reader.cstring("signature type").decode("latin-1")
    if ca.kind == "rsa":
        _verify_rsa(ca, sig_type, reader, data)
        return sig_type
    plain_name = canonical_type_name(ca.kind, False, ca.curve)
    if sig_type != plain_name:
        raise _bad_signature(f"its type does not match the {plain_name} CA key")
    if ca.kind in ("ed25519", "ed25519-sk"):
        ok = _verify_ed25519(ca, reader, data)
    elif ca.kind in ("ecdsa", "ecdsa-sk"):
        ok = _verify_ecdsa(ca, reader, data)
    else:
        ok = _dsa_verify(ca.ints, reader, data)
    if not ok:
        raise _bad_signature("it does not verify")
    return sig_type


def _verify_rsa(ca: _Material, sig_type: str, reader: _Reader, data: bytes) -> None:
    """RSA PKCS#1 v1.5 with the hash the signature type names, or raise."""
    hash_name = _RSA_SIGNATURE_HASHES.get(sig_type)
    if hash_name is None:
        raise _bad_signature("its type does not match the RSA CA key")
    raw = reader.string("RSA signature")
    reader.finish("signature")
    e, n = ca.ints
    size = (n.bit_length() + 7) // 8
    value = int.from_bytes(raw, "big")
    digest_info = _DIGEST_INFO[hash_name] + hashlib.new(hash_name, data).digest()
    padding = size - 3 - len(digest_info)
    if (
        len(raw) > size
        or n <= e
        or (n.bit_length() > 3072 and e.bit_length() > 64)
        or value >= n
        or padding < 8
    ):
        raise _bad_signature("it does not fit the RSA CA key")
    expected = b"\x00\x01" + b"\xff" * padding + b"\x00" + digest_info
    if pow(value, e, n).to_bytes(size, "big") != expected:
        raise _bad_signature("it does not verify")


def _verify_ed25519(ca: _Material, reader: _Reader, data: bytes) -> bool:
    """Ed25519, over the data or (security keys) over the authenticator's message."""
    raw = reader.string("ed25519 signature")
    if ca.kind == "ed25519-sk":
        flags = reader.uint(1, "security-key flags")
        counter = reader.uint(4, "security-key counter")
        data = _sk_message(ca, flags, counter, data)
    reader.finish("signature")
    return _ed25519_verify(ca.ed25519, raw, data)


def _verify_ecdsa(ca: _Material, reader: _Reader, data: bytes) -> bool:
    """ECDSA on the CA's curve (security keys: over the authenticator's message)."""
    assert ca.curve is not None
    assert ca.point is not None
    inner = _Reader(reader.string("ECDSA signature"))
    if ca.kind == "ecdsa-sk":
        flags = reader.uint(1, "security-key flags")
        counter = reader.uint(4, "security-key counter")
        digest = hashlib.sha256(_sk_message(ca, flags, counter, data)).digest()
    else:
        digest = hashlib.new(_CURVES[ca.curve].hash_name, data).digest()
    reader.finish("signature")
    r, s = inner.mpint("ECDSA signature r"), inner.mpint("ECDSA signature s")
    inner.finish("ECDSA signature")
    return _ecdsa_verify(_CURVES[ca.curve], ca.point, r, s, digest)


def _sk_message(ca: _Material, flags: int, counter: int, data: bytes) -> bytes:
    """What a FIDO authenticator signs (PROTOCOL.u2f)."""
    application = hashlib.sha256(ca.application or b"").digest()
    return application + bytes([flags]) + counter.to_bytes(4, "big") + hashlib.sha256(data).digest()


def _dsa_verify(numbers: tuple[int, ...], reader: _Reader, data: bytes) -> bool:
    """``ssh_dss_verify`` + OpenSSL's ``DSA_do_verify`` preconditions."""
    raw = reader.string("DSA signature")
    reader.finish("signature")
    p, q, g, y = numbers
    if len(raw) != 40 or q.bit_length() not in (160, 224, 256) or p.bit_length() > 10000:
        return False
    if not p & 1:
        return False
    r, s = int.from_bytes(raw[:20], "big"), int.from_bytes(raw[20:], "big")
    if not (0 < r < q and 0 < s < q):
        return False
    try:
        w = pow(s, -1, q)
    except ValueError:
        return False
    h = int.from_bytes(hashlib.sha1(data).digest(), "big")
    return pow(g, h * w % q, p) * pow(y, r * w % q, p) % p % q == r

"""Curve checks and certificate signature checks, as OpenSSH 9.x verifies them.

OpenSSH checks a certificate's CA signature while parsing it (``cert_parse``), so a
certificate whose signature does not verify is not a key at all: ``_sshwire`` calls
``_verify_signature`` for each one. The signature arithmetic is ``cryptography``'s
(OpenSSL), imported on the first certificate only, so that a file without
certificates, and ``ccanalytics --help``, never load it. What OpenSSH does around
that arithmetic is here, so that the verdicts stay OpenSSH's:

- the NIST curves P-256, P-384 and P-521 (``_CURVES``) and the checks on an ECDSA
  public point (``sshbuf_get_ec`` + ``sshkey_ec_validate_public``), in Python: they
  are cheap, run on every ECDSA key, and OpenSSH's bounds are its own;
- Ed25519 with the leniency of the ``ref`` code OpenSSH ships: S is reduced mod L
  (OpenSSL refuses S >= L, so S is reduced before asking it);
- RSA PKCS#1 v1.5 (``ssh-rsa``, ``rsa-sha2-256``, ``rsa-sha2-512``) with OpenSSL's
  preconditions and ``ssh_rsa_verify``'s zero-padding of a short signature; numbers
  ``cryptography`` will not load (an exponent below 3 or even, an even modulus) are
  checked in Python, as OpenSSL would compute them;
- DSA in Python (``ssh_dss_verify`` + ``DSA_do_verify``'s preconditions): OpenSSH 10
  removed DSA, and ``cryptography`` loads only the key sizes FIPS 186 names;
- the message a FIDO (``sk-``) key signs (PROTOCOL.u2f);
- ``_Material``, the numbers of a key, which every ``PublicKey`` keeps so that it
  can check signatures as a CA key.

It only verifies: every input is public, so nothing here needs to be constant-time.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ccanalytics.keys._sshbuf import (
    _MAX_EC_POINT_BYTES,
    KeyFormatError,
    _Reader,
    canonical_type_name,
)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePublicKey
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

# Underscored names are for ``_sshwire`` (and, through it, the tests), not public API.
__all__ = [
    "_CURVES",
    "_ED_L",
    "_Material",
    "_ec_point",
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


_ED_L = 2**252 + 27742317777372353535851937790883648493  # the order of Ed25519's base point


@lru_cache(maxsize=64)
def _ec_public_key(curve: str, x: int, y: int) -> EllipticCurvePublicKey:
    """A CA's ECDSA key for OpenSSL, loaded once per CA (one CA signs many certificates)."""
    from cryptography.hazmat.primitives.asymmetric import ec

    curves = {"nistp256": ec.SECP256R1(), "nistp384": ec.SECP384R1(), "nistp521": ec.SECP521R1()}
    return ec.EllipticCurvePublicNumbers(x, y, curves[curve]).public_key()


def _ecdsa_verify(curve: _Curve, q: tuple[int, int], r: int, s: int, digest: bytes) -> bool:
    """``ECDSA_do_verify`` on a digest, the point already checked by ``_ec_point``."""
    if not (0 < r < curve.n and 0 < s < curve.n):
        return False
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, utils

    algorithm = {32: hashes.SHA256(), 48: hashes.SHA384(), 64: hashes.SHA512()}[len(digest)]
    try:
        _ec_public_key(curve.name, *q).verify(
            utils.encode_dss_signature(r, s), digest, ec.ECDSA(utils.Prehashed(algorithm))
        )
    except InvalidSignature:
        return False
    return True


def _ed25519_verify(public: bytes, signature: bytes, message: bytes) -> bool:
    """``crypto_sign_ed25519_open`` as OpenSSH ships it: S reduced mod L, R compared as bytes.

    The hash is over R, A and the message, none of which the reduction changes, and
    [S]B is the same point for S and S mod L: so OpenSSL's strict check of the reduced
    signature is OpenSSH's lenient one. A is decoded alike by both (y taken mod p).
    """
    if len(signature) != 64:
        return False
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    s = int.from_bytes(signature[32:], "little") % _ED_L
    try:
        key = Ed25519PublicKey.from_public_bytes(public)
        key.verify(signature[:32] + s.to_bytes(32, "little"), message)
    except (InvalidSignature, ValueError):
        return False
    return True


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
    digest = hashlib.new(hash_name, data).digest()
    padding = size - 3 - len(_DIGEST_INFO[hash_name]) - len(digest)
    if (
        len(raw) > size
        or n <= e
        or (n.bit_length() > 3072 and e.bit_length() > 64)
        or int.from_bytes(raw, "big") >= n
        or padding < 8
    ):
        raise _bad_signature("it does not fit the RSA CA key")
    signature = raw.rjust(size, b"\0")  # ssh_rsa_verify pads a short signature with zeros
    public = _rsa_public_key(e, n)
    if public is None:
        ok = _rsa_verify_in_python(e, n, signature, hash_name, digest)
    else:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding as pkcs, utils

        algorithm = {"sha1": hashes.SHA1(), "sha256": hashes.SHA256(), "sha512": hashes.SHA512()}
        try:
            public.verify(signature, digest, pkcs.PKCS1v15(), utils.Prehashed(algorithm[hash_name]))
            ok = True
        except InvalidSignature:
            ok = False
    if not ok:
        raise _bad_signature("it does not verify")


@lru_cache(maxsize=64)
def _rsa_public_key(e: int, n: int) -> RSAPublicKey | None:
    """A CA's RSA key for OpenSSL, loaded once per CA; None for numbers it will not load."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    try:
        return rsa.RSAPublicNumbers(e, n).public_key()
    except ValueError:  # e < 3, e or n even: OpenSSL's RSA_public_decrypt still computes
        return None


def _rsa_verify_in_python(e: int, n: int, signature: bytes, hash_name: str, digest: bytes) -> bool:
    """``RSA_public_decrypt`` + PKCS#1 v1.5 type 1 check, for keys ``cryptography`` refuses.

    With an even modulus OpenSSL's Montgomery arithmetic fails, so nothing verifies; an
    exponent of 1 verifies a "signature" that is its own padded digest, as OpenSSL does.
    """
    if not n & 1:
        return False
    size = len(signature)
    digest_info = _DIGEST_INFO[hash_name] + digest
    expected = b"\x00\x01" + b"\xff" * (size - 3 - len(digest_info)) + b"\x00" + digest_info
    return pow(int.from_bytes(signature, "big"), e, n).to_bytes(size, "big") == expected


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

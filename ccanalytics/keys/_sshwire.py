"""OpenSSH public keys on the wire, judged exactly as OpenSSH 9.x judges them.

An authorized_keys line holds ``<type> <base64 blob>``; the blob is RFC 4253 wire
format (RFC 5656 for ECDSA, PROTOCOL.certkeys for certificates, PROTOCOL.u2f for
``sk-`` keys). ``read_public_key`` answers the question sshd and ``ssh-keygen -l``
answer with ``sshkey_read`` + ``sshkey_from_blob``: is this a key OpenSSH accepts?

Pure Python and standard library only, so the ``audit-keys`` command starts fast
(``_sshsig`` loads ``cryptography`` for a certificate's signature only): its key
loaders judge differently from OpenSSH. What OpenSSH accepts, as checked against
``ssh-keygen -lf`` (OpenSSH 9.2) by ``tests/keys/test_keys.py`` and OpenSSH's own
regress corpus (``tests/keys/test_openssh_corpus.py``):

- base64 as ``b64_pton``: padding required, the bits past the last byte must be zero,
  ASCII whitespace inside the token is skipped (so a CRLF line still parses);
- the type on the line must be an exact OpenSSH name (``rsa-sha2-256`` and
  ``webauthn-sk-ecdsa-...`` included) of the same key type as the blob; the type
  *inside* the blob may also be a short name, case-insensitively (``rsa``, ``ED25519``);
- mpints: negative refused, leading zero bytes accepted and ignored, at most 2049
  bytes; RSA moduli under 1024 bits refused; DSA numbers are not checked at all;
- ed25519: exactly 32 bytes, not checked to be a curve point;
- ECDSA: uncompressed point of the right length, on the curve, and OpenSSH's extra
  ``sshkey_ec_validate_public`` bounds (``x, y < n - 1`` and longer than half of n);
- certificates: every field present, a valid plain CA key, and a signature by that
  CA key that verifies (OpenSSH checks it while parsing, so a tampered certificate
  is not a key at all);
- no bytes after the last field.

The fingerprint is ``ssh-keygen``'s: SHA-256 over the key re-serialised in canonical
form (so a blob with padded integers has the fingerprint of its canonical twin), and
for a certificate over the *plain* key it certifies.

This module parses blobs, decodes base64 and computes fingerprints, and is the one
the rest of the package imports from. The curve checks and the check of a
certificate's CA signature are in ``_sshsig``; the key type names, the wire field
reader and ``KeyFormatError``, which both build on, are in ``_sshbuf``.
"""

from __future__ import annotations

import binascii
import hashlib
from dataclasses import dataclass, field

from ccanalytics.keys._sshbuf import (
    _BY_NAME,
    _MAX_PRINCIPALS,
    _RSA_MIN_BITS,
    KEY_TYPE_NAMES,
    KeyFormatError,
    _KeyType,
    _Reader,
    _ssh_mpint,
    _ssh_string,
    _type_from_blob_name,
    canonical_type_name,
)

# ``_CURVES`` is re-exported: tests/keys/test_keys.py builds points with its numbers.
from ccanalytics.keys._sshsig import _CURVES as _CURVES, _ec_point, _Material, _verify_signature

__all__ = [
    "KEY_TYPE_NAMES",
    "Certificate",
    "KeyFormatError",
    "PublicKey",
    "canonical_type_name",
    "decode_base64",
    "fingerprint_sha256",
    "parse_public_key_blob",
    "read_public_key",
]


# --------------------------------------------------------------------------- base64

_B64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_VALUE = {c: i for i, c in enumerate(_B64_ALPHABET)}
_C_SPACE = frozenset(" \t\n\v\f\r")  # isspace() in the C locale


def decode_base64(text: str) -> bytes:
    """Decode ``text`` as OpenSSH's ``b64_pton`` does, or raise ``KeyFormatError``.

    The common, canonical case is decided by binascii (C speed); anything else goes
    through a character-by-character copy of ``b64_pton`` for the exact verdict.
    """
    try:
        data = binascii.a2b_base64(text, strict_mode=True)
    except ValueError:
        return _b64_pton(text)
    if binascii.b2a_base64(data, newline=False).decode("ascii") == text:
        return data
    return _b64_pton(text)


def _b64_error(message: str) -> KeyFormatError:
    return KeyFormatError(f"the key is not valid base64: {message}", "base64")


def _b64_pton(text: str) -> bytes:
    """OpenBSD ``b64_pton`` (openbsd-compat/base64.c), including its quirks."""
    out = bytearray()
    state = 0
    i, n = 0, len(text)
    pad = False
    while i < n:
        ch = text[i]
        i += 1
        if ch in _C_SPACE:
            continue
        if ch == "=":
            pad = True
            break
        value = _B64_VALUE.get(ch)
        if value is None:
            where = f"position {i}"
            raise _b64_error(f"character U+{ord(ch):04X} at {where} is not a base64 character")
        if state == 0:
            out.append(value << 2)
        elif state == 1:
            out[-1] |= value >> 4
            out.append((value & 0x0F) << 4)
        elif state == 2:
            out[-1] |= value >> 2
            out.append((value & 0x03) << 6)
        else:
            out[-1] |= value
        state = (state + 1) % 4
    if pad:
        if state in (0, 1):
            raise _b64_error("'=' padding appears where data is expected")
        if state == 2:
            while i < n and text[i] in _C_SPACE:
                i += 1
            if i >= n or text[i] != "=":
                raise _b64_error("the padding is incomplete (one '=' where two are needed)")
            i += 1
        while i < n:
            if text[i] not in _C_SPACE:
                raise _b64_error("there is data after the '=' padding")
            i += 1
        # The bits that spill past the last full byte must be zero (no subliminal channel).
        if out and out[-1] != 0:
            raise _b64_error("the bits after the last byte are not zero (not canonical)")
        del out[-1]
    elif state != 0:
        raise _b64_error("the length is not a multiple of 4 (the '=' padding is missing)")
    return bytes(out)


# --------------------------------------------------------------------------- fingerprints


def fingerprint_sha256(blob: bytes) -> str:
    """``SHA256:<unpadded base64>``, as ``ssh-keygen -l`` prints it."""
    digest = hashlib.sha256(blob).digest()
    return "SHA256:" + binascii.b2a_base64(digest, newline=False).decode("ascii").rstrip("=")


# --------------------------------------------------------------------------- keys


@dataclass(frozen=True, slots=True)
class Certificate:
    """The body of an OpenSSH certificate (PROTOCOL.certkeys), already CA-verified."""

    serial: int
    cert_type: str  # "user" | "host"
    key_id: str
    principals: tuple[str, ...]
    valid_after: int
    valid_before: int
    critical_options: tuple[str, ...]
    extensions: tuple[str, ...]
    ca_key_type: str
    ca_fingerprint: str
    signature_type: str


@dataclass(frozen=True, slots=True)
class PublicKey:
    """A public key OpenSSH accepts, as ``ssh-keygen -l`` would describe it."""

    key_type: str  # canonical OpenSSH name, e.g. "ssh-ed25519-cert-v01@openssh.com"
    plain_type: str  # the key itself, e.g. "ssh-ed25519"
    bits: int
    fingerprint: str  # of the plain key, canonical form
    blob: bytes = field(repr=False)  # exactly as decoded from the line
    certificate: Certificate | None = None
    sk_application: str | None = None
    rsa_exponent: int | None = field(default=None, repr=False)
    _material: _Material = field(default=_Material(""), repr=False, compare=False)

    @property
    def is_certificate(self) -> bool:
        return self.certificate is not None


def _read_material(reader: _Reader, ktype: _KeyType, type_name: bytes) -> _Material:
    """The ``deserialize_public`` step of each key implementation."""
    if ktype.kind in ("ed25519", "ed25519-sk"):
        public = reader.string("ed25519 public key")
        if len(public) != 32:
            raise KeyFormatError(
                f"an ed25519 public key is 32 bytes, this one is {len(public)}", "format"
            )
        app = reader.cstring("security-key application") if ktype.kind == "ed25519-sk" else None
        return _Material(ktype.kind, ed25519=public, application=app)
    if ktype.kind in ("ecdsa", "ecdsa-sk"):
        # The curve comes from the exact type name only: a short name ("ECDSA") has none.
        named = _BY_NAME.get(type_name.decode("latin-1"))
        expected = named.curve if named is not None and named.kind == ktype.kind else None
        curve_name = reader.cstring("ECDSA curve name")
        if expected is None or curve_name != expected.encode():
            raise KeyFormatError(
                "the ECDSA curve named inside the key does not match its type", "curve-mismatch"
            )
        curve = _CURVES[expected]
        point = _ec_point(curve, reader.string("ECDSA public point"))
        app = reader.cstring("security-key application") if ktype.kind == "ecdsa-sk" else None
        return _Material(ktype.kind, curve=expected, point=point, application=app)
    if ktype.kind == "rsa":
        e = reader.mpint("RSA exponent")
        n = reader.mpint("RSA modulus")
        if n.bit_length() < _RSA_MIN_BITS:
            raise KeyFormatError(
                f"the RSA modulus is {n.bit_length()} bits; OpenSSH refuses RSA keys"
                f" under {_RSA_MIN_BITS} bits",
                "key-length",
            )
        return _Material("rsa", ints=(e, n))
    numbers = tuple(reader.mpint(f"DSA {name}") for name in ("p", "q", "g", "public value"))
    return _Material("dsa", ints=numbers)


def _plain_blob(material: _Material) -> bytes:
    """``to_blob(force_plain=1)``: what ``ssh-keygen -l`` fingerprints."""
    name = canonical_type_name(material.kind, False, material.curve).encode()
    if material.kind in ("ed25519", "ed25519-sk"):
        body = _ssh_string(material.ed25519)
    elif material.kind in ("ecdsa", "ecdsa-sk"):
        assert material.curve is not None
        assert material.point is not None
        size = _CURVES[material.curve].field_bytes
        x, y = material.point
        point = b"\x04" + x.to_bytes(size, "big") + y.to_bytes(size, "big")
        body = _ssh_string(material.curve.encode()) + _ssh_string(point)
    else:
        body = b"".join(_ssh_mpint(v) for v in material.ints)
    if material.application is not None:
        body += _ssh_string(material.application)
    return _ssh_string(name) + body


def _bits(material: _Material) -> int:
    if material.kind in ("rsa", "dsa"):
        return material.ints[1 if material.kind == "rsa" else 0].bit_length()
    if material.curve is not None:
        return _CURVES[material.curve].bits
    return 256


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def _parse(blob: bytes, allow_cert: bool) -> PublicKey:
    """``sshkey_from_blob_internal``."""
    reader = _Reader(blob)
    type_name = reader.cstring("key type name")
    ktype = _type_from_blob_name(type_name)
    if ktype is None:
        raise KeyFormatError("the key data holds a key type OpenSSH does not know", "unknown-type")
    if ktype.cert and not allow_cert:
        raise KeyFormatError("a certificate cannot be the CA key of a certificate", "certificate")
    if ktype.cert:
        reader.string("certificate nonce")
    material = _read_material(reader, ktype, type_name)
    certificate = _read_certificate(reader, blob) if ktype.cert else None
    reader.finish("key data")
    plain = _plain_blob(material)
    return PublicKey(
        key_type=canonical_type_name(ktype.kind, ktype.cert, material.curve),
        plain_type=canonical_type_name(ktype.kind, False, material.curve),
        bits=_bits(material),
        fingerprint=fingerprint_sha256(plain),
        blob=blob,
        certificate=certificate,
        sk_application=None if material.application is None else _text(material.application),
        rsa_exponent=material.ints[0] if material.kind == "rsa" else None,
        _material=material,
    )


def _pairs(data: bytes, what: str) -> tuple[str, ...]:
    """Critical options / extensions: (name, data) string pairs; the names."""
    reader = _Reader(data)
    names = []
    while reader.remaining:
        names.append(_text(reader.string(f"certificate {what} name")))
        reader.string(f"certificate {what} data")
    return tuple(names)


def _read_certificate(reader: _Reader, blob: bytes) -> Certificate:
    """``cert_parse``: every field, then the CA signature over everything before it."""
    serial = reader.uint(8, "certificate serial")
    cert_type = reader.uint(4, "certificate type")
    key_id = reader.cstring("certificate key id")
    principals_data = reader.string("certificate principals")
    valid_after = reader.uint(8, "certificate validity start")
    valid_before = reader.uint(8, "certificate validity end")
    critical = reader.string("certificate critical options")
    extensions = reader.string("certificate extensions")
    reader.string("certificate reserved field")
    ca_blob = reader.string("certificate CA key")
    signed = blob[: reader.position]
    signature = reader.string("certificate signature")
    if cert_type not in (1, 2):
        raise KeyFormatError(
            f"the certificate type {cert_type} is neither user nor host", "certificate"
        )
    principals_reader = _Reader(principals_data)
    principals: list[str] = []
    while principals_reader.remaining:
        if len(principals) >= _MAX_PRINCIPALS:
            raise KeyFormatError(
                f"the certificate has more than {_MAX_PRINCIPALS} principals", "certificate"
            )
        principals.append(_text(principals_reader.cstring("certificate principal")))
    critical_names = _pairs(critical, "critical option")
    extension_names = _pairs(extensions, "extension")
    try:
        ca = _parse(ca_blob, allow_cert=False)
    except KeyFormatError as err:
        raise KeyFormatError(
            f"the certificate's CA key is not valid: {err}", "certificate"
        ) from None
    signature_type = _verify_signature(ca._material, signature, signed)
    return Certificate(
        serial=serial,
        cert_type="user" if cert_type == 1 else "host",
        key_id=_text(key_id),
        principals=tuple(principals),
        valid_after=valid_after,
        valid_before=valid_before,
        critical_options=critical_names,
        extensions=extension_names,
        ca_key_type=ca.key_type,
        ca_fingerprint=ca.fingerprint,
        signature_type=signature_type,
    )


# --------------------------------------------------------------------------- API


def parse_public_key_blob(blob: bytes) -> PublicKey:
    """``sshkey_from_blob``: the key in ``blob`` (certificates allowed), or ``KeyFormatError``."""
    if len(blob) == 51 and blob.startswith(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20"):
        # Fast path for the commonest key; the general parser gives the same answer.
        material = _Material("ed25519", ed25519=blob[19:])
        return PublicKey(
            "ssh-ed25519", "ssh-ed25519", 256, fingerprint_sha256(blob), blob, _material=material
        )
    return _parse(blob, allow_cert=True)


def read_public_key(type_name: str, key_text: str) -> PublicKey:
    """``sshkey_read`` of ``<type_name> <key_text>``: decode, parse, and match the type.

    ``type_name`` must be an exact OpenSSH name (see ``KEY_TYPE_NAMES``) of the same
    key type as the blob; ``key_text`` is the base64 token as it appears on the line.
    """
    declared = _BY_NAME.get(type_name)
    if declared is None:
        raise KeyFormatError("the key type is not one OpenSSH knows", "unknown-type")
    key = parse_public_key_blob(decode_base64(key_text))
    material = key._material
    if (material.kind, key.is_certificate) != (declared.kind, declared.cert):
        raise KeyFormatError(
            f"the line says {type_name} but the key data is an {key.key_type} key",
            "type-mismatch",
        )
    if declared.curve is not None and material.curve != declared.curve:
        raise KeyFormatError(
            f"the line says {type_name} but the key is on the curve {material.curve}",
            "curve-mismatch",
        )
    return key

"""The vocabulary of OpenSSH's key format: key type names and wire fields.

Key reading has three layers: this module; ``_sshsig`` on it (the CA signature a
certificate carries); ``_sshwire`` on both (public key blobs, what the rest of the
package imports). Parsing a certificate needs its signature checked, and checking a
signature needs the wire reader and the type names, so those live here, below both,
and no import goes in a cycle. This module holds:

- ``KeyFormatError``, raised by every step with the reason a key is refused;
- the key types OpenSSH 9.2 knows (``keyimpls[]``): ``KEY_TYPE_NAMES``,
  ``canonical_type_name`` and the lookup of the type named inside a blob;
- the wire fields (RFC 4251 §5) as OpenSSH's ``sshbuf`` reads and writes them, and
  the limits OpenSSH puts on them.
"""

from __future__ import annotations

from dataclasses import dataclass

# Underscored names are for the sibling modules named above, not public API.
__all__ = [
    "KEY_TYPE_NAMES",
    "_BY_NAME",
    "_MAX_EC_POINT_BYTES",
    "_MAX_PRINCIPALS",
    "_RSA_MIN_BITS",
    "KeyFormatError",
    "_KeyType",
    "_Reader",
    "_ssh_mpint",
    "_ssh_string",
    "_type_from_blob_name",
    "canonical_type_name",
    "short_type_name",
]


class KeyFormatError(ValueError):
    """The key text or blob is not a public key OpenSSH would accept; says why.

    ``code`` is a short stable tag (``base64``, ``truncated``, ``trailing-data``,
    ``unknown-type``, ``type-mismatch``, ``curve-mismatch``, ``ec-point``,
    ``key-length``, ``bignum``, ``format``, ``certificate``, ``signature``).
    Messages never quote the key material.
    """

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class _KeyType:
    name: str
    shortname: str
    kind: str  # ed25519 | ed25519-sk | ecdsa | ecdsa-sk | rsa | dsa
    curve: str | None
    cert: bool
    sigonly: bool = False


# OpenSSH 9.2's keyimpls[], in its order (first match wins for short names and for
# the canonical name of a (kind, cert, curve)). XMSS is not built by default.
_TYPES: tuple[_KeyType, ...] = (
    _KeyType("ssh-ed25519", "ED25519", "ed25519", None, False),
    _KeyType("ssh-ed25519-cert-v01@openssh.com", "ED25519-CERT", "ed25519", None, True),
    _KeyType("sk-ssh-ed25519@openssh.com", "ED25519-SK", "ed25519-sk", None, False),
    _KeyType("sk-ssh-ed25519-cert-v01@openssh.com", "ED25519-SK-CERT", "ed25519-sk", None, True),
    _KeyType("ecdsa-sha2-nistp256", "ECDSA", "ecdsa", "nistp256", False),
    _KeyType("ecdsa-sha2-nistp256-cert-v01@openssh.com", "ECDSA-CERT", "ecdsa", "nistp256", True),
    _KeyType("ecdsa-sha2-nistp384", "ECDSA", "ecdsa", "nistp384", False),
    _KeyType("ecdsa-sha2-nistp384-cert-v01@openssh.com", "ECDSA-CERT", "ecdsa", "nistp384", True),
    _KeyType("ecdsa-sha2-nistp521", "ECDSA", "ecdsa", "nistp521", False),
    _KeyType("ecdsa-sha2-nistp521-cert-v01@openssh.com", "ECDSA-CERT", "ecdsa", "nistp521", True),
    _KeyType("sk-ecdsa-sha2-nistp256@openssh.com", "ECDSA-SK", "ecdsa-sk", "nistp256", False),
    _KeyType(
        "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "ECDSA-SK-CERT", "ecdsa-sk", "nistp256", True
    ),
    _KeyType(
        "webauthn-sk-ecdsa-sha2-nistp256@openssh.com",
        "ECDSA-SK",
        "ecdsa-sk",
        "nistp256",
        False,
        True,
    ),
    _KeyType("ssh-dss", "DSA", "dsa", None, False),
    _KeyType("ssh-dss-cert-v01@openssh.com", "DSA-CERT", "dsa", None, True),
    _KeyType("ssh-rsa", "RSA", "rsa", None, False),
    _KeyType("ssh-rsa-cert-v01@openssh.com", "RSA-CERT", "rsa", None, True),
    _KeyType("rsa-sha2-256", "RSA", "rsa", None, False, True),
    _KeyType("rsa-sha2-256-cert-v01@openssh.com", "RSA-CERT", "rsa", None, True, True),
    _KeyType("rsa-sha2-512", "RSA", "rsa", None, False, True),
    _KeyType("rsa-sha2-512-cert-v01@openssh.com", "RSA-CERT", "rsa", None, True, True),
)
_BY_NAME: dict[str, _KeyType] = {t.name: t for t in _TYPES}

#: Every type name OpenSSH accepts at the start of a key line (``peek_type_nid``).
KEY_TYPE_NAMES: frozenset[str] = frozenset(_BY_NAME)


def _type_from_blob_name(name: bytes) -> _KeyType | None:
    """``sshkey_type_from_name``: exact name, or a plain type's short name in any case."""
    text = name.decode("latin-1")
    exact = _BY_NAME.get(text)
    if exact is not None:
        return exact
    folded = name.lower()
    for t in _TYPES:
        if not t.cert and folded == t.shortname.lower().encode():
            return t
    return None


def short_type_name(key_type: str | None) -> str:
    """The type as ``ssh-keygen -l`` names it (``ED25519``, ``ECDSA-SK-CERT``): the table's
    short name; ``-`` for none, and a name OpenSSH does not know as it is."""
    if key_type is None:
        return "-"
    known = _BY_NAME.get(key_type)
    return key_type if known is None else known.shortname


def canonical_type_name(kind: str, cert: bool, curve: str | None) -> str:
    """The name OpenSSH writes for a key (``sshkey_ssh_name``): the first table entry."""
    for t in _TYPES:
        if t.kind == kind and t.cert == cert and (t.curve is None or t.curve == curve):
            return t.name
    raise ValueError(f"no OpenSSH key type {kind!r}")  # pragma: no cover - internal


# --------------------------------------------------------------------------- reader

_MAX_BIGNUM_BYTES = 16384 // 8  # SSHBUF_MAX_BIGNUM
_MAX_EC_POINT_BYTES = (528 * 2 // 8) + 1  # SSHBUF_MAX_ECPOINT
_MAX_PRINCIPALS = 256  # SSHKEY_CERT_MAX_PRINCIPALS
_RSA_MIN_BITS = 1024  # SSH_RSA_MINIMUM_MODULUS_SIZE


class _Reader:
    """A cursor over SSH wire data; every read names the field it was after."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    @property
    def remaining(self) -> int:
        return len(self._data) - self._pos

    @property
    def position(self) -> int:
        return self._pos

    def _take(self, count: int, what: str) -> bytes:
        if self.remaining < count:
            raise KeyFormatError(
                f"the key data is truncated: it ends inside the {what}", "truncated"
            )
        start = self._pos
        self._pos += count
        return self._data[start : self._pos]

    def uint(self, size: int, what: str) -> int:
        return int.from_bytes(self._take(size, what), "big")

    def string(self, what: str) -> bytes:
        return self._take(self.uint(4, what), what)

    def cstring(self, what: str) -> bytes:
        """``sshbuf_get_cstring``: a NUL is allowed only as the very last byte."""
        value = self.string(what)
        nul = value.find(b"\0")
        if nul != -1:
            if nul != len(value) - 1:
                raise KeyFormatError(f"the {what} contains a NUL byte", "format")
            value = value[:nul]
        return value

    def mpint(self, what: str) -> int:
        """``sshbuf_get_bignum2``: no sign bit, <= 2049 bytes, leading zeros ignored."""
        raw = self.string(what)
        if raw and raw[0] & 0x80:
            raise KeyFormatError(f"the {what} is a negative number", "bignum")
        if len(raw) > _MAX_BIGNUM_BYTES + 1 or (len(raw) == _MAX_BIGNUM_BYTES + 1 and raw[0]):
            raise KeyFormatError(f"the {what} is longer than 16384 bits", "bignum")
        return int.from_bytes(raw, "big")

    def finish(self, what: str) -> None:
        if self.remaining:
            raise KeyFormatError(
                f"the {what} has {self.remaining} unexpected byte(s) after its last field",
                "trailing-data",
            )


def _ssh_string(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def _ssh_mpint(value: int) -> bytes:
    """``sshbuf_put_bignum2``: minimal big-endian, a 0x00 prefix when the top bit is set."""
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
    if raw and raw[0] & 0x80:
        raw = b"\0" + raw
    return _ssh_string(raw)

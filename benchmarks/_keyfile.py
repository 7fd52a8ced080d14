"""A large authorized_keys file of distinct keys of every type, made in seconds.

``ssh-keygen`` makes keys one process at a time; 200,000 that way would take an
hour. So we derive them, knowing what ``ssh-keygen -l`` (and our audit) checks:

- Ed25519 and sk-Ed25519: any 32 bytes are a public key;
- RSA: a modulus of the stated size (nobody checks it has two prime factors);
- DSA: any public value below p, with p, q, g from one real key;
- ECDSA and sk-ECDSA: a point on the curve within OpenSSH's bounds: start from a real
  key's point Q and step Q + G, Q + 2G, ... (one affine addition a key);
- certificates: their CA signature is checked, so these are really signed, by one
  ``ssh-keygen -s`` call per batch of distinct keys (an RSA CA: verifying RSA is cheap
  for both programs, as it is for servers).

Every line holds a different key (``distinct`` checks), so no cache can skip work
``ssh-keygen`` does. ``MIXES`` names the mixes a file can be made of: ``every-type``
(``MIX``, every key type OpenSSH reads, certificates included), ``ed25519`` (only
Ed25519, what most files hold today), ``rsa`` (only RSA, of the three common sizes)
and ``realistic`` (mostly Ed25519, some ECDSA and RSA, as a fleet's files are now).
"""

from __future__ import annotations

import base64
import random
import struct
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: Lines of each kind in every 1,000: every key type OpenSSH reads. Certificates are
#: rare, as in real files (sshd never authorizes one listed in authorized_keys), but
#: each kind is there: 200 of each in 200,000 lines, every signature really checked.
MIX = {
    "ssh-ed25519": 465,
    "ssh-rsa 2048": 60,
    "ssh-rsa 3072": 100,
    "ssh-rsa 4096": 40,
    "ecdsa-sha2-nistp256": 80,
    "ecdsa-sha2-nistp384": 40,
    "ecdsa-sha2-nistp521": 30,
    "sk-ssh-ed25519@openssh.com": 50,
    "sk-ecdsa-sha2-nistp256@openssh.com": 50,
    "ssh-dss": 80,
    "ssh-ed25519-cert-v01@openssh.com": 1,
    "ssh-rsa-cert-v01@openssh.com": 1,
    "ecdsa-sha2-nistp256-cert-v01@openssh.com": 1,
    "sk-ssh-ed25519-cert-v01@openssh.com": 1,
    "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com": 1,
}
#: Mixes by name, each as lines of each kind in every 1,000.
MIXES: dict[str, dict[str, int]] = {
    "every-type": MIX,
    "ed25519": {"ssh-ed25519": 1000},
    "rsa": {"ssh-rsa 2048": 200, "ssh-rsa 3072": 600, "ssh-rsa 4096": 200},
    "realistic": {
        "ssh-ed25519": 880,
        "ecdsa-sha2-nistp256": 50,
        "ecdsa-sha2-nistp384": 10,
        "ssh-rsa 2048": 10,
        "ssh-rsa 3072": 35,
        "ssh-rsa 4096": 15,
    },
}
_PERIOD = 1000
assert all(sum(mix.values()) == _PERIOD for mix in MIXES.values())

# The NIST curves: p, b, the base point G and the order n (FIPS 186-4, D.1.2).
_CURVES = {
    "nistp256": (
        2**256 - 2**224 + 2**192 + 2**96 - 1,
        0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B,
        (
            0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
            0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
        ),
        0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
    ),
    "nistp384": (
        2**384 - 2**128 - 2**96 + 2**32 - 1,
        0xB3312FA7E23EE7E4988E056BE3F82D19181D9C6EFE8141120314088F5013875AC656398D8A2ED19D2A85C8EDD3EC2AEF,
        (
            0xAA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E082542A385502F25DBF55296C3A545E3872760AB7,
            0x3617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113B5F0B8C00A60B1CE1D7E819D7A431D7C90EA0E5F,
        ),
        0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973,
    ),
    "nistp521": (
        2**521 - 1,
        0x0051953EB9618E1C9A1F929A21A0B68540EEA2DA725B99B315F3B8B489918EF109E156193951EC7E937B1652C0BD3BB1BF073573DF883D2C34F1EF451FD46B503F00,
        (
            0x00C6858E06B70404E9CD9E3ECB662395B4429C648139053FB521F828AF606B4D3DBAA14B5E77EFE75928FE1DC127A2FFA8DE3348B3C1856A429BF97E7E31C2E5BD66,
            0x011839296A789A3BC0045C8A5FB42C7D1BD998F54449579B446817AFBD17273E662C97EE72995EF42640C550B9013FAD0761353C7086A272C24088BE94769FD16650,
        ),
        0x01FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFA51868783BF2F966B7FCC0148F709A5D03BB5C9B8899C47AEBB6FB71E91386409,
    ),
}
_FIELD_BYTES = {"nistp256": 32, "nistp384": 48, "nistp521": 66}


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _mpint(value: int) -> bytes:
    # A leading zero byte exactly when the top bit is set: it keeps the number positive.
    return _string(value.to_bytes((value.bit_length() + 8) // 8, "big"))


def _keygen(directory: Path, name: str, *args: str) -> bytes:
    """A real key made by ssh-keygen: its public blob."""
    path = directory / name
    subprocess.run(["ssh-keygen", "-q", *args, "-N", "", "-f", str(path)], check=True)
    return base64.b64decode(path.with_suffix(".pub").read_text().split()[1])


def _read_strings(blob: bytes) -> list[bytes]:
    out, at = [], 0
    while at < len(blob):
        (size,) = struct.unpack(">I", blob[at : at + 4])
        out.append(blob[at + 4 : at + 4 + size])
        at += 4 + size
    return out


def _points(curve: str, start: tuple[int, int]) -> Iterator[bytes]:
    """Uncompressed points start + k*G, k = 1, 2, ..., each within OpenSSH's bounds."""
    p, _, (gx, gy), n = _CURVES[curve]
    size, half = _FIELD_BYTES[curve], n.bit_length() // 2
    x, y = start
    while True:
        slope = (gy - y) * pow(gx - x, -1, p) % p
        x, y = (rx := (slope * slope - x - gx) % p), (slope * (x - rx) - y) % p
        if x.bit_length() > half and y.bit_length() > half and x < n - 1 and y < n - 1:
            yield b"\x04" + x.to_bytes(size, "big") + y.to_bytes(size, "big")


class _Maker:
    """Distinct public key blobs of each kind, derived from a few real keys."""

    def __init__(self, directory: Path, rng: random.Random) -> None:
        self.rng = rng
        self.points = {}
        for curve, bits in (("nistp256", "256"), ("nistp384", "384"), ("nistp521", "521")):
            fields = _read_strings(_keygen(directory, f"seed-{curve}", "-t", "ecdsa", "-b", bits))
            raw, size = fields[2], _FIELD_BYTES[curve]
            start = (
                int.from_bytes(raw[1 : 1 + size], "big"),
                int.from_bytes(raw[1 + size :], "big"),
            )
            self.points[curve] = _points(curve, start)
        dsa = _read_strings(_keygen(directory, "seed-dsa", "-t", "dsa"))
        self.dsa_p, self.dsa_q, self.dsa_g = (int.from_bytes(v, "big") for v in dsa[1:4])

    def ed25519(self) -> bytes:
        return _string(b"ssh-ed25519") + _string(self.rng.randbytes(32))

    def rsa(self, bits: int) -> bytes:
        n = self.rng.getrandbits(bits) | (1 << bits - 1) | 1
        return _string(b"ssh-rsa") + _mpint(65537) + _mpint(n)

    def ecdsa(self, curve: str) -> bytes:
        point = next(self.points[curve])
        return _string(f"ecdsa-sha2-{curve}".encode()) + _string(curve.encode()) + _string(point)

    def sk_ed25519(self) -> bytes:
        return (
            _string(b"sk-ssh-ed25519@openssh.com")
            + _string(self.rng.randbytes(32))
            + _string(b"ssh:")
        )

    def sk_ecdsa(self) -> bytes:
        point = next(self.points["nistp256"])
        name = b"sk-ecdsa-sha2-nistp256@openssh.com"
        return _string(name) + _string(b"nistp256") + _string(point) + _string(b"ssh:")

    def dsa(self) -> bytes:
        y = self.rng.randrange(2, self.dsa_p - 1)
        return _string(b"ssh-dss") + b"".join(
            _mpint(v) for v in (self.dsa_p, self.dsa_q, self.dsa_g, y)
        )

    def plain(self, kind: str) -> Callable[[], bytes]:
        """The maker of plain keys of ``kind`` (a MIX name, certificates excluded)."""
        if kind.startswith("ssh-rsa"):
            bits = int(kind.split()[1]) if " " in kind else 3072
            return lambda: self.rsa(bits)
        return {
            "ssh-ed25519": self.ed25519,
            "ecdsa-sha2-nistp256": lambda: self.ecdsa("nistp256"),
            "ecdsa-sha2-nistp384": lambda: self.ecdsa("nistp384"),
            "ecdsa-sha2-nistp521": lambda: self.ecdsa("nistp521"),
            "sk-ssh-ed25519@openssh.com": self.sk_ed25519,
            "sk-ecdsa-sha2-nistp256@openssh.com": self.sk_ecdsa,
            "ssh-dss": self.dsa,
        }[kind]


def _certificates(
    directory: Path, blobs: list[bytes], ca_args: tuple[str, ...] = ("-t", "rsa", "-b", "2048")
) -> list[str]:
    """``type base64`` of each blob certified by one CA (RSA unless ``ca_args`` say), in batches."""
    if not blobs:
        return []
    ca = directory / "ca"
    subprocess.run(["ssh-keygen", "-q", *ca_args, "-N", "", "-f", str(ca)], check=True)
    work = directory / "certs"
    work.mkdir()
    paths = []
    for i, blob in enumerate(blobs):
        kind = _read_strings(blob[: 4 + struct.unpack(">I", blob[:4])[0]])[0].decode()
        path = work / f"k{i}.pub"
        path.write_text(f"{kind} {base64.b64encode(blob).decode()}\n")
        paths.append(path)
    batches = [paths[i : i + 400] for i in range(0, len(paths), 400)]

    def sign(batch: list[Path]) -> None:
        cmd = ["ssh-keygen", "-q", "-s", str(ca), "-I", "bench", "-n", "user", "-V", "+520w"]
        subprocess.run([*cmd, *map(str, batch)], check=True, stdout=subprocess.DEVNULL)

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(sign, batches))
    return [
        " ".join(path.with_name(path.stem + "-cert.pub").read_text().split()[:2]) for path in paths
    ]


def _kinds(lines: int, rng: random.Random, mix: dict[str, int]) -> list[str]:
    """The kind of every line: ``mix``'s proportions, in a shuffled order."""
    pattern = [kind for kind, count in mix.items() for _ in range(count)]
    kinds = pattern * (lines // _PERIOD) + pattern[: lines % _PERIOD]
    rng.shuffle(kinds)
    return kinds


def make_key_file(
    directory: Path, lines: int = 200_000, seed: int = 1, mix: str = "every-type"
) -> Path:
    """``directory/authorized_keys``: ``lines`` distinct keys in the proportions of ``mix``."""
    rng = random.Random(seed)
    maker = _Maker(directory, rng)
    kinds = _kinds(lines, rng, MIXES[mix])
    plain_of_cert = {
        "ssh-ed25519-cert-v01@openssh.com": "ssh-ed25519",
        "ssh-rsa-cert-v01@openssh.com": "ssh-rsa 3072",
        "ecdsa-sha2-nistp256-cert-v01@openssh.com": "ecdsa-sha2-nistp256",
        "sk-ssh-ed25519-cert-v01@openssh.com": "sk-ssh-ed25519@openssh.com",
        "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com": "sk-ecdsa-sha2-nistp256@openssh.com",
    }
    cert_indices = [i for i, kind in enumerate(kinds) if kind in plain_of_cert]
    certified = _certificates(
        directory, [maker.plain(plain_of_cert[kinds[i]])() for i in cert_indices]
    )
    cert_lines = dict(zip(cert_indices, certified, strict=True))
    makers = {kind: maker.plain(kind) for kind in MIXES[mix] if kind not in plain_of_cert}
    out = directory / "authorized_keys"
    with out.open("w") as fh:
        for i, kind in enumerate(kinds):
            if i in cert_lines:
                key = cert_lines[i]
            else:
                blob = makers[kind]()
                key = kind.split()[0] + " " + base64.b64encode(blob).decode()
            fh.write(f"{key} user{i}@host{i % 97}\n")
    return out


def distinct(path: Path) -> bool:
    """Whether every line of the file holds a different key."""
    with path.open() as fh:
        keys = [line.split()[1] for line in fh]
    return len(set(keys)) == len(keys)

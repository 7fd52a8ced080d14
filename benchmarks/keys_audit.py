"""Figure 2: ``ccanalytics audit-keys`` against ``ssh-keygen -lf``."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from _harness import (
    interleaved,
    report,
    script,
)


def make_key_file(directory: Path, lines: int = 20_000) -> Path:
    """A realistic large file: distinct keys, mostly Ed25519, some ECDSA and RSA.

    Every Ed25519 line is a distinct key (any 32 bytes is a valid Ed25519 public key
    to OpenSSH), so no cache of ours can skip work ssh-keygen does. One line in ten
    is one of 30 ECDSA/RSA keys made by ssh-keygen, with a different comment.
    """
    import base64
    import random
    import struct

    def string(b: bytes) -> bytes:
        return struct.pack(">I", len(b)) + b

    pool = []
    specs = [("ecdsa", b) for b in ("256", "384", "521") for _ in range(6)] + [("rsa", "3072")] * 12
    for i, (kind, bits) in enumerate(specs):
        path = directory / f"k{i}"
        cmd = ["ssh-keygen", "-q", "-t", kind, "-b", bits, "-N", "", "-f", str(path)]
        subprocess.run(cmd, check=True)
        pool.append(path.with_suffix(".pub").read_text().split()[:2])
    rng = random.Random(1)
    out = directory / "authorized_keys"
    with out.open("w") as fh:
        for i in range(lines):
            if i % 10 == 9:
                kind, blob = pool[i % len(pool)]
            else:
                raw = string(b"ssh-ed25519") + string(rng.randbytes(32))
                kind, blob = "ssh-ed25519", base64.b64encode(raw).decode()
            fh.write(f"{kind} {blob} user{i}@host{i % 97}\n")
    return out


def bench() -> None:
    print(
        "2. key audit: ccanalytics audit-keys FILE vs ssh-keygen -lf FILE (20,000 lines)",
        flush=True,
    )
    exe = script()
    if not exe or not shutil.which("ssh-keygen"):
        print("  skipped: needs the ccanalytics script and ssh-keygen on PATH")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = make_key_file(Path(tmp))
        ours = [exe, "audit-keys", str(path)]  # the default table output
        base = ["ssh-keygen", "-lf", str(path)]

        def call(cmd: list[str]) -> Callable[[], None]:
            return lambda: subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)

        t = interleaved({"ours": call(ours), "base": call(base)}, repeat=5)
    report(
        "audit 20k lines, whole process (target <= 1.0x)",
        f"{t['ours']:.3f}s",
        f"{t['base']:.3f}s",
        f"{t['ours'] / t['base']:.2f}x ssh-keygen",
    )

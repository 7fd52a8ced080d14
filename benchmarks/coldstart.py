"""Figure 4: start-up of ``ccanalytics --help`` and of a one-key audit."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _harness import (
    interleaved,
    report,
    script,
    verdict,
)

TARGET = 2.0  # x python -c 'import httpx', kept as first set


def bench() -> None:
    print("4. cold start: whole process, vs python -c 'import httpx'", flush=True)
    exe = script()
    if not exe:
        print("  skipped: the ccanalytics script is not on PATH")
        return
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "k"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        pub = str(key.with_suffix(".pub"))

        def call(cmd: list[str]) -> Callable[[], None]:
            return lambda: subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)

        t = interleaved(
            {
                "base": call([sys.executable, "-c", "import httpx"]),
                "help": call([exe, "--help"]),
                "audit": call([exe, "audit-keys", pub]),
            },
            repeat=15,
        )
    for name, label in (
        ("help", "ccanalytics --help"),
        ("audit", "ccanalytics audit-keys (1 key)"),
    ):
        ratio = t[name] / t["base"]
        report(
            f"{label} (target <= {TARGET:g}x)",
            f"{t[name] * 1000:.0f} ms",
            f"{t['base'] * 1000:.0f} ms",
            f"{ratio:.2f}x: {verdict(ratio <= TARGET)}",
            value=ratio,
            headline="`ccanalytics --help`, vs `python -c 'import httpx'`"
            if name == "help"
            else None,
        )

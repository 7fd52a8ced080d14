"""Figure 2: ``ccanalytics audit-keys`` against ``ssh-keygen -lf``, time and memory.

On three files of 200,000 distinct keys each (``_keyfile.MIXES``), as users have them:
only Ed25519 (what most files hold today), only RSA (where ``ssh-keygen`` is slowest),
and a realistic mix (88 % Ed25519, 6 % ECDSA, 6 % RSA). Targets:

- the table output in <= 1.0x the time ``ssh-keygen -lf`` takes on the Ed25519 file,
  and <= 0.9x on the mix; the RSA file's ratio is printed, with no target;
- JSON output in <= 1.1x the table's time (on the mix);
- peak whole-process RSS (``/usr/bin/time``) <= 100 MB in every format, at any file
  size: entries are judged and written one by one, and only each key's digest is kept
  (to find duplicates: a dict up to 250,000 keys, then 16 bytes a key). Shown on Ed25519 files (the most keys a megabyte)
  of 20,000, 200,000 and 1,000,000 lines, to make the growth visible.

Times are medians of whole processes, ours and the baseline's interleaved, in wall
time and in CPU time (user + system of the child): on a shared machine CPU time is
the steadier of the two, and both ratios are printed.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _harness import report, script, verdict
from _keyfile import distinct, make_key_file

LINES = 200_000
RSS_LINES = (20_000, 200_000, 1_000_000)
#: File (a ``_keyfile.MIXES`` name) -> target, x ``ssh-keygen -lf`` (None: printed only).
TIME_TARGETS: dict[str, float | None] = {"ed25519": 1.0, "realistic": 0.9, "rsa": None}
JSON_TARGET = 1.1  # x the table
RSS_TARGET_MB = 100.0
REPEAT = 3


def _run(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one whole process, its output thrown away."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _timed(commands: dict[str, list[str]]) -> dict[str, tuple[float, float]]:
    """Median wall and CPU time of each command, runs interleaved round-robin."""
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(REPEAT):
        for name, cmd in commands.items():
            runs[name].append(_run(cmd))
    return {
        name: (statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts))
        for name, ts in runs.items()
    }


def _key_file(directory: Path, lines: int, mix: str) -> Path:
    directory.mkdir()
    path = make_key_file(directory, lines, mix=mix)
    assert distinct(path), "the key file repeats a key"
    return path


def _audit_rss_mb(exe: str, path: Path, fmt: str) -> float:
    """Peak RSS of the whole ``audit-keys`` process, as ``/usr/bin/time`` measures it.

    Not ``_harness.child_peak_rss_mb``: a child forked from this process (hundreds
    of MB after making the key file) reports the parent's RSS as its own peak, since
    ``ru_maxrss`` survives exec. ``time`` is a small process: its child's peak is
    the command's alone.
    """
    with tempfile.NamedTemporaryFile("r") as measured:
        cmd = [_TIME, "-f", "%M", "-o", measured.name, exe, "audit-keys", "--format", fmt]
        subprocess.run([*cmd, str(path)], stdout=subprocess.DEVNULL, check=False)
        return int(measured.read().split()[-1]) / 1024  # KiB


_TIME = "/usr/bin/time"


def _ratio_row(
    figure: str,
    ours: tuple[float, float],
    base: tuple[float, float],
    target: float | None,
    of: str,
    headline: str | None = None,
) -> None:
    wall, cpu = ours[0] / base[0], ours[1] / base[1]
    judged = "no target" if target is None else verdict(max(wall, cpu) <= target)
    report(
        figure if target is None else f"{figure} (target <= {target}x)",
        f"{ours[0]:.2f}s wall {ours[1]:.2f}s cpu",
        f"{base[0]:.2f}s wall {base[1]:.2f}s cpu",
        f"{wall:.2f}x {of} wall, {cpu:.2f}x cpu: {judged}",
        value=max(wall, cpu),
        headline=headline,
    )


def bench() -> None:
    print(
        f"2. key audit: ccanalytics audit-keys vs ssh-keygen -lf, {LINES:,} distinct keys a file",
        flush=True,
    )
    exe = script()
    if not exe or not shutil.which("ssh-keygen") or not os.access(_TIME, os.X_OK):
        print("  skipped: needs the ccanalytics script, ssh-keygen and /usr/bin/time")
        return
    with tempfile.TemporaryDirectory() as tmp:
        files = {mix: _key_file(Path(tmp) / mix, LINES, mix) for mix in TIME_TARGETS}
        for mix, target in TIME_TARGETS.items():
            path = str(files[mix])
            commands = {
                "ssh-keygen": ["ssh-keygen", "-lf", path],
                "table": [exe, "audit-keys", path],
            }
            if mix == "realistic":
                commands["json"] = [exe, "audit-keys", "--format", "json", path]
            times = _timed(commands)
            _ratio_row(
                f"audit, {mix} file, table output",
                times["table"],
                times["ssh-keygen"],
                target,
                "ssh-keygen",
                "`audit-keys`, 200k mixed keys, vs `ssh-keygen -lf`"
                if mix == "realistic"
                else None,
            )
            if "json" in times:
                _ratio_row(
                    f"audit, {mix} file, JSON output",
                    times["json"],
                    times["table"],
                    JSON_TARGET,
                    "the table",
                )
        for lines in RSS_LINES:
            sized = (
                files["ed25519"]
                if lines == LINES
                else _key_file(Path(tmp) / f"ed25519-{lines}", lines, "ed25519")
            )
            peaks = {fmt: _audit_rss_mb(exe, sized, fmt) for fmt in ("table", "csv", "json")}
            worst = max(peaks.values())
            report(
                f"peak RSS, {lines:,} Ed25519 lines (target <= {RSS_TARGET_MB:.0f} MB)",
                " / ".join(f"{fmt} {mb:.0f}" for fmt, mb in peaks.items()) + " MB",
                f"{os.path.getsize(sized) / 1e6:.0f} MB file",
                verdict(worst <= RSS_TARGET_MB),
            )

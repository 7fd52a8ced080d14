"""The README is a front door that works: its short tour runs as written, on the sandbox.

The tour's ```python blocks run in one fresh process, then each line of its ```bash
blocks runs in the same folder (the store the Python wrote is the one the shell reads),
as a reader who copies them would; every one must succeed. The Quick start's commands
(``pip install``) are CI's to run (``.ci/run``), and the README's length is kept to a
front door's.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)

pytestmark = pytest.mark.slow


def _section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["MPLBACKEND"] = "Agg"
    for name in ("CCANALYTICS_API_KEY", "CCANALYTICS_BASE_URL"):  # the tour needs neither
        env.pop(name, None)
    return env


def test_the_short_tour_runs_as_written(tmp_path: Path) -> None:
    blocks = BLOCK.findall(_section("A short tour"))
    python = "\n".join(code for kind, code in blocks if kind == "python")
    shell = [
        line
        for kind, code in blocks
        if kind == "bash"
        for line in code.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert python and shell
    env = _environment()
    done = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", python],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    # The tour's figures: the sandbox's idle pods (rank 4 of cl-infer-prod idles at night,
    # 3.78 USD/h) and its straggler (rank 13 of cl-llama70b-train, every hour of the day).
    assert "infer-prod-vllm-004" in done.stdout
    assert re.search(r"cl-llama70b-train\s+13\s", done.stdout)
    assert (tmp_path / "ccstore").is_dir()
    for line in shell:
        ran = subprocess.run(
            shlex.split(line), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert ran.returncode == 0, f"{line}: exit {ran.returncode}\n{ran.stderr}"
        assert "Traceback" not in ran.stderr
    assert (tmp_path / "fleet.html").stat().st_size > 0


def test_the_quick_start_is_the_two_commands() -> None:
    blocks = BLOCK.findall(_section("Quick start"))
    assert [code.strip() for _, code in blocks] == [
        "pip install -e . && ccanalytics report --sandbox --output report.html",
        'pip install -e ".[test]" && pytest',
    ]


def test_the_readme_is_a_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 100
    table = text.split("<!-- benchmarks:start -->\n", 1)[1].split("<!-- benchmarks:end -->")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")][2:]  # no header
    assert 0 < len(rows) <= 5  # the headline ratios (benchmarks/_harness.py's README_ROWS)
    assert "docs/performance.md" in text

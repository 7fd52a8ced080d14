"""What a user installs: the wheel carries the licence, and the extras say what they need."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> str:
    for stop in "<>=!~[; ":
        requirement = requirement.split(stop)[0]
    return requirement.lower().replace("_", "-")


def test_the_repository_holds_the_licence_the_metadata_names() -> None:
    assert PROJECT["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Permission is hereby granted" in text


def test_the_wheel_carries_the_licence(tmp_path: Path) -> None:
    pytest.importorskip("hatchling", reason="building a wheel needs hatchling (the test extra)")
    # hatchling's own PEP 517 hook, as pip or uv would call it (no pip needed).
    build = f"from hatchling.build import build_wheel; build_wheel({str(tmp_path)!r})"
    subprocess.run([sys.executable, "-c", build], cwd=ROOT, check=True, capture_output=True)
    (wheel,) = tmp_path.glob("ccanalytics-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    licences = [n for n in names if n.endswith("/LICENSE") and ".dist-info/" in n]
    assert licences, names[-10:]


def test_no_extra_repeats_a_core_dependency() -> None:
    core = {_name(r) for r in PROJECT["dependencies"]}
    for extra, requirements in PROJECT["optional-dependencies"].items():
        repeated = core & {_name(r) for r in requirements}
        assert not repeated, f"the {extra!r} extra repeats {sorted(repeated)}"


def test_running_the_notebooks_needs_only_the_notebooks_extra() -> None:
    extras = PROJECT["optional-dependencies"]
    needed = {"nbconvert", "ipykernel"}
    assert needed <= {_name(r) for r in extras["notebooks"]}
    assert "nbconvert" not in {_name(r) for r in extras["dev"]}  # one home for it

"""The package's imports flow one way, checked by import-linter (``[tool.importlinter]``).

The layers contract in pyproject.toml states the architecture (errors and the base
modules < keys < api < frames, sandbox < analysis < plots, history < report < cli) and
``lint-imports`` checks it, function-level imports included, in CI and here. These tests
keep the contract honest: every part of the package has a layer, the contract holds, and
it does see a back edge.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import ccanalytics

PACKAGE = Path(ccanalytics.__file__).parent
CONTRACT = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["importlinter"]


def _layered() -> set[str]:
    (layers,) = [
        c["layers"]
        for c in CONTRACT["contracts"]
        if c["type"] == "layers" and "containers" not in c  # the package's own layers
    ]
    return {
        name.strip().removeprefix("ccanalytics.") for line in layers for name in line.split("|")
    }


def _parts() -> set[str]:
    """Every top-level module and subpackage, but the package's own front door."""
    found = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.parent.name for p in PACKAGE.glob("*/__init__.py")
    }
    return found - {"__init__", "__main__"}


def test_every_part_of_the_package_has_a_layer() -> None:
    missing = _parts() - _layered()
    assert not missing, f"give these a layer in [tool.importlinter]: {sorted(missing)}"


def _lint_imports(folder: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on ``folder``'s pyproject.toml, in a child process: in this one
    it would reconfigure logging for every later test."""
    run = "from importlinter.cli import lint_imports; raise SystemExit(lint_imports(no_cache=True))"
    return subprocess.run(
        [sys.executable, "-c", run],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(pythonpath)},
        capture_output=True,
        text=True,
        check=False,
    )


needs_import_linter = pytest.mark.skipif(
    importlib.util.find_spec("importlinter") is None,
    reason="import-linter is in the dev extra (CI runs lint-imports itself)",
)


@needs_import_linter
def test_the_layers_contract_holds() -> None:
    done = _lint_imports(PACKAGE.parent, PACKAGE.parent)
    assert done.returncode == 0, done.stdout[-2000:]


@needs_import_linter
def test_the_contract_sees_a_back_edge_inside_a_function(tmp_path: Path) -> None:
    # A copy of the package with one lazy import against the layers: the contract breaks.
    copy = tmp_path / "ccanalytics"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "frames" / "_input.py").open("a") as module:
        module.write("\n\ndef _back() -> None:\n    from ccanalytics.cli import main  # noqa\n")
    (tmp_path / "pyproject.toml").write_text((PACKAGE.parent / "pyproject.toml").read_text())
    done = _lint_imports(tmp_path, tmp_path)
    assert done.returncode == 1
    assert "ccanalytics.frames._input -> ccanalytics.cli" in done.stdout


@needs_import_linter
def test_the_cli_may_not_reach_into_a_private_module(tmp_path: Path) -> None:
    # The CLI only parses and prints: a private import from it breaks the second contract.
    copy = tmp_path / "ccanalytics"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "cli" / "_pods.py").open("a") as module:
        module.write(
            "\n\ndef _private() -> None:\n    from ccanalytics.history.collector._collect import take_snapshot  # noqa\n"
        )
    (tmp_path / "pyproject.toml").write_text((PACKAGE.parent / "pyproject.toml").read_text())
    done = _lint_imports(tmp_path, tmp_path)
    assert done.returncode == 1
    assert "ccanalytics.cli._pods -> ccanalytics.history.collector._collect" in done.stdout


def _history_contract(kind: str) -> str:
    (name,) = [
        c["name"]
        for c in CONTRACT["contracts"]
        if c["type"] == kind
        and "ccanalytics.history" in (c.get("containers") or c.get("ancestors") or [])
    ]
    return str(name)


@needs_import_linter
@pytest.mark.parametrize(
    ("module", "back_edge", "broken"),
    [
        # The store may not reach up into the queries over it (a circle too: they import it).
        ("history/store/_layout.py", "ccanalytics.history.queries._window", {"layers"}),
        # Inside one subpackage the layers say nothing: a circle there breaks the other.
        ("history/alerts/_alerts.py", "ccanalytics.history.alerts._check", set()),
    ],
)
def test_history_contracts_see_a_back_edge(
    tmp_path: Path, module: str, back_edge: str, broken: set[str]
) -> None:
    copy = tmp_path / "ccanalytics"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / module).open("a") as source:
        source.write(f"\n\ndef _back() -> None:\n    import {back_edge}  # noqa\n")
    (tmp_path / "pyproject.toml").write_text((PACKAGE.parent / "pyproject.toml").read_text())
    done = _lint_imports(tmp_path, tmp_path)
    said = " ".join(done.stdout.split())  # the report wraps long contract names
    assert done.returncode == 1
    for kind in ("layers", "acyclic_siblings"):
        verdict = "BROKEN" if kind in broken | {"acyclic_siblings"} else "KEPT"
        assert f"{_history_contract(kind)} {verdict}" in said, done.stdout[-2000:]


@pytest.mark.parametrize(
    "package",
    [
        "api",
        "frames",
        "keys",
        "plots",
        "report",
        "sandbox",
        "history",
        "history/store",
        "history/collector",
        "history/queries",
        "history/alerts",
        "cli",
    ],
)
def test_each_subpackage_says_what_it_holds_and_may_import(package: str) -> None:
    doc = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text()))
    assert doc and "import" in doc, f"{package}/__init__.py should say what it may import"

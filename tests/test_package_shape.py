"""The package's shape, read with ``ast``: short modules, short functions, private names kept.

- Every module of ``ccanalytics`` is at most 500 lines and every function at most 100: a
  module past a few hundred lines is usually two concepts, a function that needs a scroll
  is a list of steps to name (tests/README.md, docs/architecture.md).
- No package reaches into another's private names: a ``_name`` defined in one package
  (a folder of ``ccanalytics``: ``history/queries``, ``history/alerts``, ``measures``, ...)
  is neither imported nor read as an attribute (``history._sql``) by the modules of
  another. import-linter's contracts are about modules, not names, so this test says it.
  A private *module* (``store/_layout.py``) may be imported: it is how each package is
  cut, and its public names are the package's own to share.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ccanalytics"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 100

#: Over the limits today (none): an entry is split when next touched, and the test fails
#: when one is no longer over its limit, so the list only shrinks.
KNOWN_LONG: dict[str, str] = {}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _package(path: Path) -> str:
    """The folder a module belongs to (``history/queries``; ``""`` for the base modules)."""
    return path.parent.relative_to(PACKAGE).as_posix().strip(".")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _too_long() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in _modules():
        source = path.read_text(encoding="utf-8")
        lines = len(source.splitlines())
        if lines > MAX_MODULE_LINES:
            found[_name(path)] = lines
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found[f"{_name(path)}:{node.name}"] = length
    return found


def test_modules_and_functions_are_short() -> None:
    found = _too_long()
    new = {name: lines for name, lines in found.items() if name not in KNOWN_LONG}
    assert not new, (
        f"over {MAX_MODULE_LINES} lines a module or {MAX_FUNCTION_LINES} a function: {new}"
    )


def test_the_known_long_ones_are_still_long() -> None:
    """An entry of KNOWN_LONG that was split leaves the list, so that it stays split."""
    found = _too_long()
    assert [name for name in KNOWN_LONG if name not in found] == []


def _defined_private_names() -> dict[str, set[str]]:
    """Per package, the private names its modules define (functions, classes, assignments,
    ``self._x = ...`` attributes)."""
    defined: dict[str, set[str]] = defaultdict(set)
    for path in _modules():
        names = defined[_package(path)]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
        defined[_package(path)] = {name for name in names if _private(name)}
    return defined


def _module_package(module: str) -> str | None:
    """The package (folder) of ``ccanalytics.x.y``, or None outside ccanalytics."""
    parts = module.split(".")
    if parts[0] != "ccanalytics":
        return None
    target = PACKAGE.joinpath(*parts[1:])
    if target.is_dir():
        return target.relative_to(PACKAGE).as_posix().strip(".")
    return target.parent.relative_to(PACKAGE).as_posix().strip(".")


def _reaches(path: Path, source: str, defined: dict[str, set[str]]) -> list[str]:
    """Where the module ``source`` (standing at ``path``) reads another package's private names."""
    own = _package(path)
    others = set().union(*(names for package, names in defined.items() if package != own))
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            source = _module_package(node.module)
            if source is not None and source != own:
                found += [
                    f"{_name(path)}:{node.lineno} imports {node.module}.{alias.name}"
                    for alias in node.names
                    if _private(alias.name)
                ]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            reader = node.value
            if isinstance(reader, ast.Name) and reader.id in {"self", "cls"}:
                continue
            if node.attr in others and node.attr not in defined[own]:
                found.append(f"{_name(path)}:{node.lineno} reads .{node.attr}")
    return found


def test_no_package_reaches_into_another_private_names() -> None:
    defined = _defined_private_names()
    found = [
        line
        for path in _modules()
        for line in _reaches(path, path.read_text(encoding="utf-8"), defined)
    ]
    assert found == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ccanalytics.history.queries._history import _spans_disjoint\n", 1),
        ("def f(history):\n    return history._sql('SELECT 1')\n", 1),
        ("def f(self):\n    return self._sql('SELECT 1')\n", 0),
        ("from ccanalytics.history.queries._history import History\n", 0),
    ],
)
def test_the_check_sees_a_reach(source: str, expected: int) -> None:
    """The check itself: a module of ``alerts`` that reaches into ``queries`` is named."""
    defined = _defined_private_names()
    defined["history/queries"] |= {"_sql", "_spans_disjoint"}
    module = PACKAGE / "history" / "alerts" / "_made_up.py"
    assert len(_reaches(module, source, defined)) == expected

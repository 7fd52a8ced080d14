"""The package's imports flow one way: errors < keys < api < frames, sandbox < analysis
< plots, history < report < cli. A lower layer never imports a higher one, nor a
sibling of its own rank, even inside a function, so the layout stays the architecture."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ccanalytics

PACKAGE = Path(ccanalytics.__file__).parent

#: Layer of each top-level part of the package; a module may import only lower layers
#: (and its own part). The package root (``__init__``, ``__main__``) sits above all.
LAYERS: dict[str, float] = {
    "errors": 0,
    "_lazy": 0,
    "_files": 0,
    "_durations": 0,
    "_json": 0,
    "_rules": 0,
    "keys": 1,
    "api": 2,
    "models": 2.5,  # the public path kept for ``ccanalytics.models``: re-exports api
    "frames": 3,
    "sandbox": 3,
    "analysis": 4,
    "plots": 5,
    "history": 5,
    "report": 6,
    "cli": 7,
}


def _part(module: str) -> str | None:
    """``ccanalytics.frames._build`` -> ``frames``; the root package -> ``None``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "ccanalytics" else None


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> set[str]:
    """Every ``ccanalytics`` module ``path`` imports, at any depth of its code."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] == "ccanalytics"}


def _edges() -> list[tuple[str, str]]:
    edges = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        edges.extend((module, imported) for imported in sorted(_imports(path, module)))
    return edges


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {_part(_module_name(p)) for p in PACKAGE.rglob("*.py")} - {None, "__main__"}
    assert parts <= set(LAYERS), f"give these a layer in LAYERS: {parts - set(LAYERS)}"


def test_no_module_imports_a_higher_layer() -> None:
    back_edges = []
    for importer, imported in _edges():
        source, target = _part(importer), _part(imported)
        if source in (None, "__main__") or target is None or source == target:
            continue
        if target not in LAYERS:  # a name imported from a module, e.g. ccanalytics.api.X
            continue
        if LAYERS[target] >= LAYERS[source]:
            back_edges.append(f"{importer} imports {imported}")
    assert not back_edges, "imports against the layers:\n" + "\n".join(back_edges)


@pytest.mark.parametrize(
    "package", ["api", "frames", "keys", "plots", "report", "sandbox", "history", "cli"]
)
def test_each_subpackage_says_what_it_holds_and_may_import(package: str) -> None:
    doc = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text()))
    assert doc and "import" in doc, f"{package}/__init__.py should say what it may import"


def test_the_check_itself_sees_a_back_edge(tmp_path: Path) -> None:
    # The walk must find imports inside functions, where lazy imports live.
    code = "def f():\n    from ccanalytics.cli import main\n"
    (tmp_path / "m.py").write_text(code)
    assert "ccanalytics.cli" in _imports(tmp_path / "m.py", "ccanalytics.frames.m")

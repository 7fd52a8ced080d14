"""The docs site: its generated pages match the code, and every Python example runs.

Each page's ```python blocks run in order, in one namespace per page, in a fresh
folder, with ``CCANALYTICS_BASE_URL``/``CCANALYTICS_API_KEY`` pointing at a sandbox on
127.0.0.1: what a reader copies from the site works as written. ``mkdocs build
--strict`` itself runs in ``.ci/run`` (a broken link or reference fails CI).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest

from ccanalytics.sandbox import FULL_ACCESS_KEY, Sandbox

DOCS = Path(__file__).resolve().parents[2] / "docs"
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
PAGES = sorted(p for p in DOCS.rglob("*.md") if not p.is_symlink() and "notebooks" not in p.parts)


def _generator() -> object:
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_pages_match_the_code() -> None:
    generate = _generator()
    for relative, render in generate.PAGES.items():  # type: ignore[attr-defined]
        committed = (DOCS / relative).read_text(encoding="utf-8")
        assert committed == render(), f"docs/{relative} is stale: run python docs/generate.py"


def test_the_cli_page_names_every_command_and_option() -> None:
    from ccanalytics.cli import build_parser

    page = (DOCS / "reference/cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    pending = [("ccanalytics", parser)]
    while pending:  # every command, and every subcommand (export showback)
        prefix, current = pending.pop()
        subparsers = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        for name, sub in subparsers[0].choices.items() if subparsers else ():
            assert f"## `{prefix} {name}`" in page
            pending.append((f"{prefix} {name}", sub))
            for action in sub._actions:
                for option in action.option_strings:
                    if option not in ("-h", "--help"):
                        assert f"`{option}" in page, f"{name} {option} missing from the CLI page"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_python_example_runs(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = PYTHON_BLOCK.findall(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip("no Python example on this page")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    with Sandbox() as sb:
        monkeypatch.setenv("CCANALYTICS_BASE_URL", sb.url)
        monkeypatch.setenv("CCANALYTICS_API_KEY", FULL_ACCESS_KEY)
        namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
        for number, block in enumerate(blocks, 1):
            code = compile(block, f"{page.relative_to(DOCS)} example {number}", "exec")
            exec(code, namespace)

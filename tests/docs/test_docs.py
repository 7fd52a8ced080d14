"""The docs site: its generated pages match the code, and every Python example runs.

Each page's ```python blocks run in order, in one namespace per page, in a fresh
folder, with ``CCANALYTICS_BASE_URL``/``CCANALYTICS_API_KEY`` pointing at a sandbox on
127.0.0.1: what a reader copies from the site works as written. Every figure they draw
keeps its legends, titles and axis labels inside it, clear of the other axes. ``mkdocs build
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
    _check_figures(page)


def _check_figures(page: Path) -> None:
    """Every figure the page's examples left open keeps its legends, titles and axis
    labels inside it, and no legend runs into another axes (a colorbar is its axes' own)."""
    import matplotlib.pyplot as plt

    try:
        for number in plt.get_fignums():
            figure = plt.figure(number)
            figure.canvas.draw()
            problems = _figure_problems(figure)
            assert not problems, f"{page.name}: figure {number}: {problems}"
    finally:
        plt.close("all")


def _figure_problems(figure: object) -> list[str]:
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    frame = figure.bbox  # type: ignore[attr-defined]
    axes = [ax for ax in figure.axes if ax.get_label() != "<colorbar>"]  # type: ignore[attr-defined]
    problems = []
    for ax in axes:
        legend = ax.get_legend()
        for artist in (legend, ax.title, ax.xaxis.label, ax.yaxis.label):
            if artist is None or not artist.get_visible():
                continue
            if artist is not legend and not artist.get_text():
                continue
            box = artist.get_window_extent(renderer)
            name = "legend" if artist is legend else repr(artist.get_text()[:40])
            if (
                box.x0 < frame.x0 - 1
                or box.y0 < frame.y0 - 1
                or box.x1 > frame.x1 + 1
                or box.y1 > frame.y1 + 1
            ):
                problems.append(f"{name} of {ax.get_title()[:40]!r} runs off the figure")
            if artist is legend:
                for other in axes:
                    if other is not ax and box.overlaps(other.get_window_extent(renderer)):
                        problems.append(
                            f"the legend of {ax.get_title()[:40]!r} runs into {other.get_title()[:40]!r}"
                        )
    return problems

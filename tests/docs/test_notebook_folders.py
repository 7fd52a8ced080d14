"""A notebook leaves nothing behind: the store folder it makes is gone once its kernel exits.

Each example notebook writes a store into a temporary folder. ``tempfile.mkdtemp``
would leave one on disk per run (a month of snapshots, a megabyte or more, every time
the notebook or the suite runs); a ``TemporaryDirectory`` is removed when the kernel
shuts down. The notebook's own lines that make the folder run in a real Jupyter
kernel here (the whole notebook runs under nbval elsewhere in the suite).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _folder_lines(notebook: Path) -> list[str]:
    """The notebook's top-level lines that import tempfile, make a folder with it, or
    name the store's folder (``store = ...``)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    lines = [
        line.split("  #")[0]
        for cell in cells
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
    ]
    return [
        line
        for line in lines
        if not line.startswith(" ") and ("tempfile" in line or line.startswith("store = "))
    ]


def _makes_a_store_folder(notebook: Path) -> bool:
    return any(line.startswith("store = ") for line in _folder_lines(notebook))


@pytest.mark.parametrize(
    "notebook", [n for n in NOTEBOOKS if _makes_a_store_folder(n)], ids=lambda n: n.stem
)
def test_the_notebooks_store_folder_is_gone_when_its_kernel_exits(notebook: Path) -> None:
    manager_module = pytest.importorskip("jupyter_client.manager")
    manager, client = manager_module.start_new_kernel(kernel_name="python3")
    try:
        source = "\n".join([*_folder_lines(notebook), "import os; print(os.fspath(store))"])
        printed: list[str] = []
        reply = client.execute_interactive(
            source,
            timeout=60,
            output_hook=lambda msg: printed.append(msg["content"].get("text", "")),
        )
        assert reply["content"]["status"] == "ok", reply["content"]
        folder = Path("".join(printed).strip())
        assert folder.is_dir()
        (folder / "a-snapshot.parquet").write_bytes(b"rows")  # a store is never empty
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)  # a clean exit, as closing the notebook is
    assert not os.path.exists(folder), f"{notebook.name} left {folder} behind"

"""The plots package shows its public names only, and stays in short modules."""

from __future__ import annotations

from pathlib import Path

import ccanalytics.plots as plots


def test_dir_lists_exactly_the_public_names() -> None:
    assert dir(plots) == sorted(plots.__all__)
    assert not {"np", "pd", "plt", "Any", "Final", "Axes", "matplotlib"} & set(dir(plots))


def test_every_public_name_is_importable_and_documented() -> None:
    for name in plots.__all__:
        assert getattr(plots, name).__doc__, name


def test_each_plots_module_stays_under_400_lines() -> None:
    for module in Path(plots.__file__).parent.glob("*.py"):
        assert len(module.read_text().splitlines()) <= 400, module.name

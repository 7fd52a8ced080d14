"""The package surface: names, lazy imports, typing marker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ccanalytics


def test_all_is_alphabetical_and_every_name_resolves() -> None:
    assert ccanalytics.__all__ == sorted(ccanalytics.__all__)
    for name in ccanalytics.__all__:
        assert getattr(ccanalytics, name) is not None


def test_every_error_is_re_exported_at_the_top_level() -> None:
    # shared/API.md: the errors module's names, all re-exported at the top level.
    assert set(ccanalytics.errors.__all__) <= set(ccanalytics.__all__)
    for name in ccanalytics.errors.__all__:
        assert getattr(ccanalytics, name) is getattr(ccanalytics.errors, name)


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        ccanalytics.no_such_name  # noqa: B018


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def test_importing_the_package_loads_nothing_heavy() -> None:
    loaded = _modules_after("import ccanalytics")
    assert not loaded & {"pandas", "matplotlib", "httpx", "pydantic", "numpy"}


def test_the_client_does_not_load_pandas_or_matplotlib() -> None:
    loaded = _modules_after("from ccanalytics import Client, Pod")
    assert "httpx" in loaded
    assert "pydantic" in loaded
    assert not loaded & {"pandas", "matplotlib"}


def test_frames_register_the_cc_accessor() -> None:
    loaded = _modules_after(
        "import ccanalytics\nf = ccanalytics.pods_frame([])\nassert f.cc.summary().empty"
    )
    assert "pandas" in loaded
    assert "matplotlib" not in loaded


def test_package_is_typed() -> None:
    assert (Path(ccanalytics.__file__).parent / "py.typed").exists()

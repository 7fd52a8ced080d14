"""``df.cc`` for type checkers: ``cc(df)`` is the accessor typed, so mypy sees a misspelled
method; ``df.cc`` itself is what pandas-stubs makes of any attribute (a ``Series``), since
pandas' stubs have no way to declare a registered accessor.

The user script is checked by mypy as a user runs it (strict, pandas-stubs installed,
this package's own types from its ``py.typed``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typecheck import mypy_strict

from ccanalytics.analysis import CCAccessor, cc
from ccanalytics.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

SCRIPT = """\
import pandas as pd

import ccanalytics
from ccanalytics.analysis import cc

pods = ccanalytics.load_cluster_pods(["cl-infer-prod"])
summary = cc(pods).cluster_summary()
reveal_type(summary)
idle: pd.DataFrame = cc(pods).idle_pods(idle_threshold=10)
cc(pods).no_such_method()
"""


def test_mypy_sees_the_accessor_and_a_misspelled_method(tmp_path: Path) -> None:
    script = tmp_path / "user.py"
    script.write_text(SCRIPT)
    report = mypy_strict(script)
    lines = [line for line in report.splitlines() if "user.py:" in line]
    assert any(':8: note: Revealed type is "pandas.core.frame.DataFrame"' in x for x in lines), (
        report
    )
    assert any(':10: error: "CCAccessor" has no attribute "no_such_method"' in x for x in lines), (
        report
    )
    assert len([x for x in lines if ": error:" in x]) == 1, report


def test_pyright_sees_them_too(tmp_path: Path) -> None:
    pyright = shutil.which(
        "pyright",
        path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    if pyright is None:
        pytest.skip("pyright is in the dev extra (pip install pyright; it runs on node)")
    script = tmp_path / "user.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [pyright, "--pythonpath", sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    report = done.stdout + done.stderr
    assert 'user.py:8:13 - information: Type of "summary" is "DataFrame"' in report, report
    assert (
        'user.py:10:10 - error: Cannot access attribute "no_such_method" for class "CCAccessor"'
        in report
    ), report
    assert "1 error" in report, report


def test_cc_is_the_frames_own_accessor() -> None:
    with Sandbox() as sb, sb.client() as client:
        from ccanalytics import load_cluster_pods

        pods = load_cluster_pods(["cl-infer-prod"], client=client)
    accessor = cc(pods)
    assert isinstance(accessor, CCAccessor)
    assert accessor.idle_pods().equals(pods.cc.idle_pods())

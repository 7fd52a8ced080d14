"""``Params``' thresholds are typed attributes that mypy sees, and they are exactly the
registry's (:data:`ccanalytics.measures.THRESHOLDS`): one declared field per entry, in
its order, each a float; a misspelled one is an error for mypy and at run time."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from typecheck import mypy_strict

from ccanalytics.measures import THRESHOLDS, Params

ROOT = Path(__file__).resolve().parents[2]


def test_the_declared_fields_are_the_registry_s_thresholds() -> None:
    hints = typing.get_type_hints(Params)
    declared = [name for name in Params.__annotations__ if not name.startswith("_")]
    assert declared == [t.name for t in THRESHOLDS]
    assert all(hints[name] is float for name in declared)
    assert Params().saturation_threshold == 95.0
    with pytest.raises(AttributeError):
        Params().saturation  # noqa: B018


SCRIPT = """\
from ccanalytics.measures import Params

p = Params(idle_threshold=20)
reveal_type(p.idle_threshold)
reveal_type(p.saturation_threshold)
p.idle_treshold
"""


@pytest.mark.slow
def test_mypy_sees_each_threshold_as_a_float_and_a_misspelling(tmp_path: Path) -> None:
    script = tmp_path / "user.py"
    script.write_text(SCRIPT)
    out = mypy_strict(script)
    assert len(re.findall(r'Revealed type is "(builtins\.)?float"', out)) == 2, out
    assert '"Params" has no attribute "idle_treshold"' in out, out

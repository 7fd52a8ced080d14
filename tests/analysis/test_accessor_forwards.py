"""``df.cc`` forwards to the analysis functions; it does not copy them.

Its methods are generated from the functions (signature and docstring), so
``df.cc.idle_pods(...)`` and ``analysis.idle_pods(df, ...)`` cannot drift: the same
arguments, the same answer, the same error. The frame is validated once, when the
accessor is made, as pandas' own accessors do.
"""

from __future__ import annotations

import inspect
import warnings

import pandas as pd
import pytest

from ccanalytics import analysis, pods_frame
from ccanalytics.sandbox import make_data


def _frame_functions() -> list[str]:
    """Every public analysis function that takes a pods frame first (but ``cc``, the
    typed way to the accessor itself)."""
    names = []
    for name in analysis.__all__:
        member = getattr(analysis, name)
        if member is analysis.cc:
            continue
        if inspect.isfunction(member):
            first = next(iter(inspect.signature(member).parameters))
            if first == "frame":
                names.append(name)
    return names


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return pods_frame(make_data().clusters["cl-llama70b-train"], cluster_id="cl-llama70b-train")


def test_every_frame_function_is_forwarded_and_nothing_else() -> None:
    assert sorted(_frame_functions()) == sorted(analysis.CCAccessor.FORWARDED)


@pytest.mark.parametrize("name", _frame_functions())
def test_the_method_is_the_function_without_the_frame(frame: pd.DataFrame, name: str) -> None:
    function = getattr(analysis, name)
    method = getattr(frame.cc, name)
    expected = inspect.signature(function)
    without_frame = expected.replace(parameters=list(expected.parameters.values())[1:])
    assert inspect.signature(method) == without_frame
    assert method.__doc__ == function.__doc__
    assert method.__name__ == name and method.__wrapped__ is function


@pytest.mark.parametrize("name", [n for n in _frame_functions() if n != "cost_per_gpu_hour"])
def test_both_spellings_of_the_threshold_fail_alike(frame: pd.DataFrame, name: str) -> None:
    function, method = getattr(analysis, name), getattr(frame.cc, name)
    errors = []
    for call in (lambda **kw: function(frame, **kw), method):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(TypeError) as caught:
                call(threshold=20, idle_threshold=20)
        errors.append(str(caught.value).replace(f"{name}()", "").replace("CCAccessor.", ""))
    assert errors[0] == errors[1]


def test_an_argument_the_function_does_not_take_is_refused_by_both(frame: pd.DataFrame) -> None:
    with pytest.raises(TypeError):
        analysis.stragglers(frame, idle=5)
    with pytest.raises(TypeError):
        frame.cc.stragglers(idle=5)


def test_the_frame_is_validated_once_when_the_accessor_is_made() -> None:
    with pytest.raises(AttributeError, match="missing columns: \\['pod_id'"):
        _ = pd.DataFrame({"cluster_id": ["a"]}).cc
    assert pods_frame([]).cc.summary().empty


def test_the_aliases_are_the_same_methods(frame: pd.DataFrame) -> None:
    accessor = frame.cc
    assert accessor.summary == accessor.cluster_summary
    assert accessor.idle == accessor.idle_pods
    assert accessor.cost_by_gpu_type == accessor.cost_per_gpu_hour

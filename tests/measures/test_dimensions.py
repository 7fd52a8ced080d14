"""The dimensions are declared once: their key columns are the pods frame's, dtypes too.

``ccanalytics.measures`` sits below the frames, so the declarations spell the dtypes;
this test holds them to ``POD_COLUMNS`` (a column renamed or retyped there fails here).
"""

from __future__ import annotations

import pytest

from ccanalytics.errors import ArgumentsError
from ccanalytics.frames import POD_COLUMNS
from ccanalytics.measures._dimensions import DIMENSIONS, columns_of, dimensions


@pytest.mark.parametrize("dimension", DIMENSIONS, ids=lambda d: d.name)
def test_a_dimensions_pod_columns_are_the_frames(dimension: object) -> None:
    from ccanalytics.measures._dimensions import Dimension

    assert isinstance(dimension, Dimension)
    for column, dtype in dimension.columns.items():
        if column in POD_COLUMNS:
            assert POD_COLUMNS[column].dtype == dtype, column
    assert set(dimension.keys) | set(dimension.attributes) <= set(dimension.columns)
    assert (dimension.bucket_us is None) or dimension.columns == {
        dimension.name: "datetime64[ns, UTC]"
    }


def test_names_are_taken_in_the_registrys_order_once() -> None:
    chosen = dimensions(["day", "pod", "cluster"])
    assert [d.name for d in chosen] == ["cluster", "pod", "day"]
    assert list(columns_of(chosen)) == [
        "cluster_id",
        "pod_id",
        "name",
        "rank",
        "gpu_type",
        "gpu_count",
        "day",
    ]
    assert dimensions(None) == () and [d.name for d in dimensions("rank")] == ["rank"]


def test_unknown_and_two_time_dimensions_are_refused() -> None:
    with pytest.raises(ValueError, match=r"no dimension 'week'.*known: cluster, team"):
        dimensions("week")
    with pytest.raises(ArgumentsError, match="by= may name one time dimension"):
        dimensions(["day", "hour"])


def test_the_names_spelled_elsewhere_are_the_declared_ones() -> None:
    """History.measures' ``by`` annotation and the command's ``--by`` choices spell the
    names (a type checker and a light import need them literally): they must agree."""
    import inspect
    from typing import Literal, get_args

    from ccanalytics.cli._history import DIMENSION_WORDS
    from ccanalytics.history import History

    declared = tuple(d.name for d in DIMENSIONS)
    annotation = inspect.signature(History.measures).parameters["by"].annotation
    literal = eval(annotation, {"Literal": Literal})
    assert get_args(get_args(literal)[0]) == declared
    assert declared == DIMENSION_WORDS

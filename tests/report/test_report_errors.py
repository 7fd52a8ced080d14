"""The report's and the plots' exceptions live in errors.py, under CCAnalyticsError, and
the old import paths name the same classes."""

from __future__ import annotations

import pickle

import pytest

from ccanalytics import errors, plots, report
from ccanalytics.errors import CCAnalyticsError


@pytest.mark.parametrize(
    ("name", "old", "also"),
    [
        ("NoDataError", plots, ValueError),
        ("ReportLoadError", report, CCAnalyticsError),
        ("ReportOutputError", report, OSError),
    ],
)
def test_defined_in_errors_and_importable_where_they_were(
    name: str, old: object, also: type[BaseException]
) -> None:
    cls = getattr(errors, name)
    assert name in errors.__all__
    assert getattr(old, name) is cls
    assert issubclass(cls, CCAnalyticsError) and issubclass(cls, also)


def test_report_load_error_pickles_with_its_errors() -> None:
    err = errors.ReportLoadError({"cl-a": "404 not found"})
    back = pickle.loads(pickle.dumps(err))
    assert back.errors == {"cl-a": "404 not found"}
    assert str(back) == str(err) and "cl-a: 404 not found" in str(err)


def test_a_plot_with_nothing_to_draw_is_caught_as_ccanalytics_error() -> None:
    from ccanalytics.frames import pods_frame

    with pytest.raises(CCAnalyticsError):
        plots.cost_breakdown(pods_frame([]))

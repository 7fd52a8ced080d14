"""The ``df.cc`` accessor: the analyses as methods of a pods frame, generated from them."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Final

import pandas as pd

from ccanalytics.analysis._by_gpu_type import cost_per_gpu_hour
from ccanalytics.analysis._pods import idle_pods, stragglers
from ccanalytics.analysis._run import A_PODS_FRAME, not_a
from ccanalytics.analysis._summary import cluster_summary

__all__ = ["CCAccessor", "cc"]


def _forwarded(function: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
    """``function`` as a method of :class:`CCAccessor`: called with the accessor's frame
    first, with the function's name, docstring and signature (the frame left out), so
    ``help(df.cc.idle_pods)`` reads as ``help(idle_pods)`` and the two cannot drift."""

    def method(self: CCAccessor, /, *args: Any, **kwargs: Any) -> pd.DataFrame:
        # The function's own checks, errors and warnings (which name the caller's line).
        return function(self._frame, *args, **kwargs)

    functools.update_wrapper(method, function)  # __doc__, __name__, __wrapped__, ...
    signature = inspect.signature(function)
    itself = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    rest = list(signature.parameters.values())[1:]
    method.__signature__ = signature.replace(parameters=[itself, *rest])  # type: ignore[attr-defined]
    return method


#: The columns every forwarded function reads between them: the accessor checks them once.
_ACCESSOR_COLUMNS: Final = (
    "cluster_id",
    "pod_id",
    "rank",
    "cost",
    "gpu_type",
    "gpu_count",
    "gpu_util_mean",
    "gpu_util_max",
    "cpu_util",
)


@pd.api.extensions.register_dataframe_accessor("cc")
class CCAccessor:
    """This module's functions as methods of a pods frame: ``df.cc.idle_pods()``.

    Each method forwards to the function of its name (:data:`FORWARDED`) with the frame
    first, and has its signature and docstring, generated from it:
    :meth:`cluster_summary`, :meth:`idle_pods`, :meth:`stragglers` and
    :meth:`cost_per_gpu_hour`. Shorter aliases, the same methods: ``summary`` =
    ``cluster_summary``, ``idle`` = ``idle_pods``, ``cost_by_gpu_type`` =
    ``cost_per_gpu_hour``. The frame is checked once, when the accessor is made (as
    pandas' own accessors do): one that is not a pods frame has no ``cc``
    (``AttributeError`` naming the missing columns).
    """

    #: The functions forwarded, by name (each a method of that name).
    FORWARDED: Final = ("cluster_summary", "idle_pods", "stragglers", "cost_per_gpu_hour")

    def __init__(self, frame: pd.DataFrame) -> None:
        missing = [c for c in _ACCESSOR_COLUMNS if c not in frame.columns]
        if missing:
            raise AttributeError(not_a(A_PODS_FRAME, missing))
        self._frame = frame

    def __repr__(self) -> str:
        frame = self._frame
        clusters = frame["cluster_id"].nunique()
        pods = f"{len(frame)} pod{'' if len(frame) == 1 else 's'}"
        methods = ", ".join(f".cc.{name}()" for name in self.FORWARDED)
        return (
            f"<ccanalytics accessor on {pods} in {clusters} cluster{'' if clusters == 1 else 's'}: "
            f"{methods}>"
        )

    cluster_summary = _forwarded(cluster_summary)
    idle_pods = _forwarded(idle_pods)
    stragglers = _forwarded(stragglers)
    cost_per_gpu_hour = _forwarded(cost_per_gpu_hour)

    # Documented aliases (the names the README has used).
    summary = cluster_summary
    idle = idle_pods
    cost_by_gpu_type = cost_per_gpu_hour


def cc(frame: pd.DataFrame) -> CCAccessor:
    """``frame.cc``, typed: the same accessor object, for code a type checker reads.

    pandas-stubs cannot declare an accessor registered at run time, so to mypy and
    pyright ``frame.cc`` is whatever any unknown attribute is (a ``Series``) and a
    misspelled method passes; ``cc(frame).idle_pods()`` is checked. Raises
    ``AttributeError`` for a frame that is not a pods frame, as ``frame.cc`` does.
    """
    accessor: CCAccessor = getattr(frame, "cc")  # noqa: B009 (the stubs type .cc as a Series)
    return accessor

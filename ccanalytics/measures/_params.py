"""The rules' parameters, one object that every path takes: :class:`Params`.

The live analyses, History, ``check`` (flags and policy keys), ``check_store``, the
report (live and window) and the plots all judge with a :class:`Params`, so a threshold
given once reaches every answer. Old spellings of the arguments warn here, once.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Final

from ccanalytics.measures.rules import (
    CHRONIC_SHARE,
    IDLE_MEMORY_THRESHOLD,
    IDLE_THRESHOLD,
    LOW_COMPUTE_THRESHOLD,
    MEMORY_THRESHOLD,
    MIN_RANKS_FOR_STRAGGLERS,
    STRAGGLER_MIN_GAP,
    STRAGGLER_Z,
)

__all__ = ["PARAMETER_DOCS", "Params", "deprecated", "idle_threshold_given", "renamed"]

#: Each parameter: what it means, for docstrings, ``--help`` and the docs.
PARAMETER_DOCS: Final = {
    "idle_threshold": "percent: a running GPU pod whose busiest GPU is below it is idle",
    "z": "a rank straggles when its robust z-score is below minus this...",
    "min_gap": "...and it is at least this many points below its cluster's median",
    "chronic_share": "a rank flagged in at least this share of its snapshots is chronic (0-1)",
    "memory_threshold": "percent: a running GPU pod whose fullest GPU's memory is above it is at risk",
    "idle_memory_threshold": "percent: an idle pod whose fullest GPU's memory is at or above it "
    "holds a model (idle, model loaded); below it, idle and empty",
    "low_compute_threshold": "percent: a busy GPU pod whose mean GPU utilization is below it "
    "does low compute",
}


@dataclass(frozen=True)
class Params:
    """The thresholds the rules judge with; every field has the documented default.

    ``Params(idle_threshold=20)`` judges idle pods below 20 %, and stragglers among the
    pods at or above it, on every path that takes it.
    """

    idle_threshold: float = IDLE_THRESHOLD
    z: float = STRAGGLER_Z
    min_gap: float = STRAGGLER_MIN_GAP
    chronic_share: float = CHRONIC_SHARE
    memory_threshold: float = MEMORY_THRESHOLD
    idle_memory_threshold: float = IDLE_MEMORY_THRESHOLD
    low_compute_threshold: float = LOW_COMPUTE_THRESHOLD

    def __post_init__(self) -> None:
        percents = ("idle_threshold", "memory_threshold", "idle_memory_threshold")
        for name in (*percents, "low_compute_threshold"):
            value = getattr(self, name)
            if not _number(value) or not 0 <= value <= 100:
                raise ValueError(f"{name} is a utilization in percent (0-100), not {value!r}")
            object.__setattr__(self, name, float(value))
        for name in ("z", "min_gap"):
            value = getattr(self, name)
            if not _number(value) or value < 0:
                raise ValueError(f"{name} must be a number, 0 or more, not {value!r}")
            object.__setattr__(self, name, float(value))
        if not _number(self.chronic_share) or not 0 <= self.chronic_share <= 1:
            raise ValueError(
                f"chronic_share is a share of snapshots (0-1), not {self.chronic_share!r}"
            )
        object.__setattr__(self, "chronic_share", float(self.chronic_share))

    @classmethod
    def of(cls, params: Params | None = None, **given: Any) -> Params:
        """``params`` (or the defaults) with every ``given`` value that is not None."""
        base = params if params is not None else cls()
        changed = {k: v for k, v in given.items() if v is not None}
        return replace(base, **changed) if changed else base

    def sql(self) -> dict[str, Any]:
        """The named parameters of the rules' SQL (``$idle_threshold``, ``$z``, ...)."""
        return {**asdict(self), "min_ranks": MIN_RANKS_FOR_STRAGGLERS}

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def renamed(old: str, new: str, old_value: Any, new_value: Any, *, what: str = "=") -> Any:
    """``new_value``, or ``old_value`` given under the old name ``old`` (DeprecationWarning).

    Both given is a TypeError: which one was meant cannot be known. The warning names
    the first caller outside ccanalytics (through the accessor, a History method or a
    function alike), so it points at the line to change.
    """
    if old_value is None:
        return new_value
    if new_value is not None:
        raise TypeError(f"pass {new}{what} only ({old}{what} is its old spelling)")
    deprecated(f"{old}{what} is now {new}{what} (the old spelling goes in the next release)")
    return old_value


def deprecated(message: str) -> None:
    """A DeprecationWarning attributed to the first caller outside the package."""
    warnings.warn(message, DeprecationWarning, stacklevel=_outside_level())


def _outside_level() -> int:
    """The ``stacklevel`` of the first frame outside ccanalytics (seen from warn's caller)."""
    import sys

    package = str(Path(__file__).resolve().parents[1])
    frame = sys._getframe(2)  # the caller of deprecated()'s caller's caller: level 2 and up
    level = 2
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(package):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def idle_threshold_given(idle_threshold: float | None, threshold: float | None) -> float:
    """``idle_threshold``, or its old spelling ``threshold=`` with a DeprecationWarning."""
    value = renamed("threshold", "idle_threshold", threshold, idle_threshold)
    return IDLE_THRESHOLD if value is None else float(value)

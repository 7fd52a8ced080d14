"""Every threshold the rules judge with, declared once: :data:`THRESHOLDS`.

Each is a :class:`Threshold` (name, default, :class:`Unit` with its bounds, meaning,
policy key and flag), from which :class:`~ccanalytics.measures.Params`, the CLI's flags,
the policy's keys and the docs' table are read. A new threshold is one entry here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

__all__ = ["PERCENT", "POINTS", "SHARE", "Threshold", "Unit", "Z"]


@dataclass(frozen=True)
class Unit:
    """What a threshold's values are: their bounds, and how a message or a flag says so."""

    name: str  #: "percent", "z", "points", "share"
    low: float  #: the least value allowed (included)
    high: float | None  #: the greatest (included); None: no bound
    what: str  #: "a utilization in percent (0-100)": the library's message
    expected: str  #: "a percentage from 0 to 100": the CLI's message
    metavar: str  #: the flag's value, in ``--help``

    def allows(self, value: Any) -> bool:
        """Whether ``value`` is a finite number (not a bool) within the bounds."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if not math.isfinite(value) or value < self.low:
            return False
        return self.high is None or value <= self.high


PERCENT: Final = Unit(
    "percent", 0, 100, "a utilization in percent (0-100)", "a percentage from 0 to 100", "PERCENT"
)
Z: Final = Unit("z", 0, None, "a number, 0 or more", "a number, 0 or more", "Z")
POINTS: Final = Unit("points", 0, None, "a number, 0 or more", "a number, 0 or more", "POINTS")
SHARE: Final = Unit("share", 0, 1, "a share of snapshots (0-1)", "a share from 0 to 1", "SHARE")


@dataclass(frozen=True)
class Threshold:
    """One threshold the rules judge with, declared once.

    :class:`~ccanalytics.measures.Params` (its field, default and validation), the SQL
    parameter ``$name``, the CLI flag of every command that judges pods
    (``--straggler-z``), the policy key (``[defaults]`` and per rule) and the docs'
    thresholds table are all read off this entry.
    """

    name: str  #: the Params field and the SQL parameter
    default: float
    unit: Unit
    meaning: str  #: one sentence: ``--help``, the docs, docstrings
    key: str = ""  #: the policy key and the flag (``--key-with-dashes``); default ``name``

    @property
    def policy_key(self) -> str:
        return self.key or self.name

    @property
    def flag(self) -> str:
        """The CLI option: the policy key with dashes."""
        return "--" + self.policy_key.replace("_", "-")

    def checked(self, value: Any) -> float:
        """``value`` as a float, or ValueError saying what the threshold takes."""
        if not self.unit.allows(value):
            raise ValueError(f"{self.name} is {self.unit.what}, not {value!r}")
        return float(value)


#: Every threshold, in the order Params, the flags and the docs list them.
THRESHOLDS: Final[tuple[Threshold, ...]] = (
    Threshold(
        "idle_threshold",
        10.0,
        PERCENT,
        "a running GPU pod whose busiest GPU is below it is idle",
    ),
    Threshold(
        "z",
        3.5,
        Z,
        "a rank straggles when its robust z-score is below minus this...",
        key="straggler_z",
    ),
    Threshold(
        "min_gap",
        10.0,
        POINTS,
        "...and it is at least this many utilization points below its cluster's median",
    ),
    Threshold(
        "chronic_share",
        0.5,
        SHARE,
        "a rank flagged in at least this share of its snapshots is a chronic straggler",
    ),
    Threshold(
        "memory_threshold",
        95.0,
        PERCENT,
        "a running GPU pod whose fullest GPU's memory is above it is at risk",
    ),
    Threshold(
        "idle_memory_threshold",
        10.0,
        PERCENT,
        "an idle pod whose fullest GPU's memory is at or above it holds a model (idle, model "
        "loaded); below it, idle and empty",
    ),
    Threshold(
        "low_compute_threshold",
        30.0,
        PERCENT,
        "a busy GPU pod whose mean GPU utilization is below it does low compute",
    ),
    Threshold(
        "saturation_threshold",
        95.0,
        PERCENT,
        "a running GPU pod whose least busy GPU is above it is saturated",
    ),
)

_THRESHOLD: Final[Mapping[str, Threshold]] = MappingProxyType({t.name: t for t in THRESHOLDS})


def threshold(name: str) -> Threshold:
    """The threshold called ``name`` (KeyError naming the known ones otherwise)."""
    try:
        return _THRESHOLD[name]
    except KeyError:
        raise KeyError(f"no threshold {name!r} (known: {', '.join(_THRESHOLD)})") from None

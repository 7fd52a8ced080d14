"""What a threshold is: its :class:`Unit` (bounds, and how messages and flags say them)
and the :class:`Threshold` entry the registry declares each one with
(:data:`ccanalytics.measures.THRESHOLDS`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
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

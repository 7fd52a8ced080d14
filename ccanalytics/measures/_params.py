"""The rules' parameters, one object that every path takes: :class:`Params`.

The live analyses, History, ``check`` (flags and policy keys), ``check_store``, the
report (live and window) and the plots all judge with a :class:`Params`, so a threshold
given once reaches every answer. Old spellings of the arguments warn here, once.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ccanalytics.measures._thresholds import THRESHOLDS, threshold as _threshold
from ccanalytics.measures.rules import MIN_RANKS_FOR_STRAGGLERS

__all__ = ["PARAMETER_DOCS", "Params", "deprecated", "idle_threshold_given", "renamed"]

#: Each parameter: what it means, for docstrings, ``--help`` and the docs (the registry's).
PARAMETER_DOCS: Final[Mapping[str, str]] = {
    t.name: f"{t.unit.name}: {t.meaning}" for t in THRESHOLDS
}
_INDEX: Final = {t.name: i for i, t in enumerate(THRESHOLDS)}


class Params:
    """The thresholds the rules judge with: one field per registry entry
    (:data:`ccanalytics.measures.THRESHOLDS`), each with its documented default.

    ``Params(idle_threshold=20)`` judges idle pods below 20 %, and stragglers among the
    pods at or above it, on every path that takes it. Immutable and hashable; a value
    outside its entry's bounds is a ValueError saying what it takes.
    """

    __slots__ = ("_values",)
    _values: tuple[float, ...]

    # One typed attribute per entry of THRESHOLDS, in its order, so a type checker sees
    # ``params.idle_threshold`` as a float and a misspelling as an error; the values
    # live in ``_values`` (tests/measures/test_params_typing.py holds the two together).
    idle_threshold: float
    z: float
    min_gap: float
    chronic_share: float
    memory_threshold: float
    idle_memory_threshold: float
    low_compute_threshold: float
    saturation_threshold: float

    def __init__(self, **given: float) -> None:
        unknown = [name for name in given if name not in _INDEX]
        if unknown:
            raise TypeError(
                f"Params() got an unexpected keyword argument {unknown[0]!r} "
                f"(thresholds: {', '.join(_INDEX)})"
            )
        values = tuple(t.checked(given.get(t.name, t.default)) for t in THRESHOLDS)
        object.__setattr__(self, "_values", values)

    if not TYPE_CHECKING:  # the declared attributes above are all a checker may read

        def __getattr__(self, name: str) -> float:
            index = _INDEX.get(name)
            if index is None or name == "_values":
                raise AttributeError(f"Params has no threshold {name!r}")
            return self._values[index]

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Params) and other._values == self._values

    def __hash__(self) -> int:
        return hash(self._values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{t.name}={v!r}" for t, v in zip(THRESHOLDS, self._values, strict=True))
        return f"Params({inner})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (self.asdict(),))

    def asdict(self) -> dict[str, float]:
        """Every threshold by name, in the registry's order."""
        return {t.name: v for t, v in zip(THRESHOLDS, self._values, strict=True)}

    def replace(self, **changed: float) -> Params:
        """These thresholds with ``changed`` ones (checked as the constructor checks)."""
        return Params(**{**self.asdict(), **changed})

    @classmethod
    def of(cls, params: Params | None = None, **given: Any) -> Params:
        """``params`` (or the defaults) with every ``given`` value that is not None."""
        base = params if params is not None else cls()
        changed = {k: v for k, v in given.items() if v is not None}
        return base.replace(**changed) if changed else base

    def sql(self) -> dict[str, Any]:
        """The named parameters of the rules' SQL (``$idle_threshold``, ``$z``, ...)."""
        return {**self.asdict(), "min_ranks": MIN_RANKS_FOR_STRAGGLERS}

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(t.name for t in THRESHOLDS)


def _rebuilt(values: Mapping[str, float]) -> Params:
    return Params(**values)


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
    return _threshold("idle_threshold").default if value is None else float(value)

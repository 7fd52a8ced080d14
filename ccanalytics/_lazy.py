"""Module ``__getattr__`` for lazy re-exports, so a light import stays light.

A package lists its public names and the private module defining each; the module
is imported on first access (PEP 562). ``import ccanalytics`` then loads nothing
heavy, and importing one private module of a subpackage does not drag in its
siblings (the frames do not need httpx; the key audit needs no pydantic).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``names`` map to defining modules."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__

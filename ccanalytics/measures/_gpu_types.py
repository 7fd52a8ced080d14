"""The table of GPU types: the memory of one GPU, in GB, by the service's ``gpu.id``.

The data is one file, ``gpu_types.toml`` beside this module (read through
:mod:`importlib.resources`, so it works from a wheel or a zip). A user extends or
corrects it without editing the package: :func:`gpu_types` takes a file of the same
form (or a mapping ``{gpu id: memory in GB}``) whose entries win. Right-sizing reads
it (:meth:`ccanalytics.history.History.rightsizing`); prices are not here, they are
what the store observed each type cost.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import Any

from ccanalytics.errors import GpuTypesError

__all__ = ["GpuTypes", "gpu_types"]

#: What :func:`gpu_types` accepts besides the packaged table: a TOML file of the same
#: form, or a mapping of GPU id to memory in GB.
GpuTypes = str | PathLike[str] | Mapping[str, float]

_PACKAGED = "gpu_types.toml"


def gpu_types(extra: GpuTypes | None = None) -> dict[str, float]:
    """The packaged table of GPU memory (GB per GPU, by ``gpu.id``), ``extra``'s entries winning.

    ``extra``: a TOML file like the packaged one (``[types]`` then ``"id" = { memory_gb
    = 80 }`` per type) or a mapping ``{"NVIDIA L40S": 48}``. A file that cannot be read, a
    TOML error, or a memory that is not a positive number is a
    :class:`~ccanalytics.errors.GpuTypesError` naming the file and the type.
    """
    text = resources.files(__package__).joinpath(_PACKAGED).read_text(encoding="utf-8")
    table = _parse(text, _PACKAGED)
    if extra is None:
        return table
    if isinstance(extra, Mapping):
        return {**table, **_checked(dict(extra), "the gpu_types mapping")}
    path = Path(extra)
    try:
        given = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else type(err).__name__
        raise GpuTypesError(f"{path}: cannot read the table of GPU types: {reason}") from None
    return {**table, **_parse(given, str(path))}


def _parse(text: str, where: str) -> dict[str, float]:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise GpuTypesError(f"{where}: not valid TOML: {err}") from None
    types = document.get("types")
    if not isinstance(types, dict) or set(document) - {"types"}:
        raise GpuTypesError(f"{where}: expected one [types] table of GPU ids")
    memory: dict[str, Any] = {}
    for gpu_id, entry in types.items():
        if not isinstance(entry, dict) or set(entry) != {"memory_gb"}:
            raise GpuTypesError(f"{where}: {gpu_id!r} must be {{ memory_gb = <GB> }}")
        memory[gpu_id] = entry["memory_gb"]
    return _checked(memory, where)


def _checked(memory: dict[Any, Any], where: str) -> dict[str, float]:
    out = {}
    for gpu_id, gb in memory.items():
        if (
            not isinstance(gpu_id, str)
            or isinstance(gb, bool)
            or not isinstance(gb, int | float)
            or not math.isfinite(gb)
            or gb <= 0
        ):
            raise GpuTypesError(
                f"{where}: {gpu_id!r}: the memory is a positive number of GB, not {gb!r}"
            )
        out[gpu_id] = float(gb)
    return out

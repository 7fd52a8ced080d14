"""A frame as a table for people: aligned columns, each column's unit, values as read.

``--format table`` (the default on a terminal or without ``--output``) prints this;
CSV, JSON and Parquet keep the raw numbers for programs. The unit of a column is the
measure registry's (History's answers) or the pods frame's documented one, so a
table says what the docs say; a share (0-1) is shown in percent. Text from the API or a
store is made visible (:func:`ccanalytics._visible.visible`): a pod name cannot move
the terminal's cursor.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ccanalytics._visible import visible

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NO_ROWS", "format_table"]

#: What an empty answer prints: the words, not pandas' "Empty DataFrame".
NO_ROWS = "no rows\n"
_MISSING = "-"
_MAX_TEXT = 40  # longer text is cut with an ellipsis, as pandas' max_colwidth did
_GAP = "  "

# A unit as the registry or the field table says it -> as a table's header says it.
_SHORT_UNITS = {
    "USD per hour": "USD/h",
    "0-1": "%",
    "GPU-hours": "GPU-h",
    "pod-hours": "pod-h",
    "UTC instant": "",
    "robust z": "z",
}
# The field table's prose units, by how they start.
_PROSE_UNITS = (
    ("integer percent", "%"),
    ("integer seconds", "s"),
    ("USD per hour", "USD/h"),
    ("GB", "GB"),
)


def format_table(frame: pd.DataFrame) -> str:
    """``frame`` as aligned text: a line of names, a line of units (when any column has
    one), then the rows; ``"no rows"`` when it has none."""
    if frame.empty:
        return NO_ROWS
    names = [str(name) for name in frame.columns]
    units = [_unit(frame[name]) for name in names]
    cells = [
        [_formatter(frame[name], unit)(v) for v in frame[name]]
        for name, unit in zip(names, units, strict=True)
    ]
    right = [_is_numeric(frame[name]) for name in names]
    header = [names, units] if any(units) else [names]
    lines = []
    for row in [*header, *zip(*cells, strict=True)]:
        parts = []
        for i, text in enumerate(row):
            width = max(len(names[i]), len(units[i]), *(len(c) for c in cells[i]))
            parts.append(text.rjust(width) if right[i] else text.ljust(width))
        lines.append(_GAP.join(parts))
    return "\n".join(lines) + "\n"


@functools.cache
def column_unit(name: str) -> str:
    """The unit a table shows under column ``name`` (``""``: none or unknown)."""
    from ccanalytics.measures import MEASURES

    for measure in MEASURES:
        if name == measure.name:
            return _SHORT_UNITS.get(measure.unit, measure.unit)
        if name == measure.live and measure.live_unit:
            return _SHORT_UNITS.get(measure.live_unit, measure.live_unit)
    field_unit = _field_units().get(name, "")
    for prefix, short in _PROSE_UNITS:
        if field_unit.startswith(prefix):
            return short
    return _unit_by_name(name)


def _unit_by_name(name: str) -> str:
    """The columns neither table declares (``observed_hours``, ``*_at``) by their names."""
    if name.endswith("_hours"):
        return "h"
    if name.endswith(("_cost", "_usd")) or name in ("cost_usd", "spend"):
        return "USD"
    if name.endswith("_share"):
        return "%"
    return ""


def _unit(series: pd.Series) -> str:
    import pandas as pd

    if isinstance(series.dtype, pd.DatetimeTZDtype):
        return "UTC"
    return column_unit(str(series.name))


@functools.cache
def _field_units() -> dict[str, str]:
    """Each pods-frame column's unit, as its documented meaning states it after the
    source (``"cost, USD per hour; ..."``: the field table writes them so)."""
    from ccanalytics.frames import POD_COLUMNS

    units = {}
    for name, spec in POD_COLUMNS.items():
        source = spec.meaning.split(";", 1)[0]
        units[name] = source.split(", ", 1)[1] if ", " in source else ""
    return units


def _is_numeric(series: pd.Series) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(series)) and not pd.api.types.is_bool_dtype(series)


def _formatter(series: pd.Series, unit: str) -> Callable[[Any], str]:
    """How one column's values are written: by its dtype, and its unit for floats."""
    import pandas as pd

    types = pd.api.types
    if types.is_bool_dtype(series):
        return _missing_or(lambda v: "yes" if v else "no")
    if types.is_datetime64_any_dtype(series):
        return _missing_or(_instant)
    if types.is_integer_dtype(series):
        return _missing_or(lambda v: str(int(v)))
    if types.is_float_dtype(series):
        if unit == "%" and _is_share(series):
            return _missing_or(lambda v: f"{v * 100:,.1f}")
        decimals = 2 if unit.startswith("USD") or unit in ("", "z") else 0 if unit == "s" else 1
        return _missing_or(lambda v: f"{v:,.{decimals}f}")
    return _missing_or(_text)


def _is_share(series: pd.Series) -> bool:
    """A share column (0-1, the registry's unit) rather than a percent (0-100, the API's)."""
    name = str(series.name)
    return name not in _field_units()


def _instant(value: Any) -> str:
    stamp = value.tz_convert("UTC") if value.tzinfo is not None else value
    return f"{stamp:%Y-%m-%d %H:%M}" + (f":{stamp:%S}" if stamp.second else "")


def _text(value: Any) -> str:
    text = visible(str(value))
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _missing_or(write: Callable[[Any], str]) -> Callable[[Any], str]:
    import pandas as pd

    def cell(value: Any) -> str:
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            return _MISSING
        return write(value)

    return cell

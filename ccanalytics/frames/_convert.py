"""Columns of raw JSON values turned into nullable pandas arrays.

One function per dtype of the frames (``Float64``, ``Int64``, ``boolean``, ``string``,
``datetime64[ns, UTC]``), each applying the reading rules in :mod:`ccanalytics.frames._build`:
missing, ``null`` and wrongly typed values become ``<NA>``, and nothing is coerced
across JSON types. Each function checks the element types of a whole column at once
(a ``set`` of the types), so the common case converts in C through numpy or Arrow and
only a column holding a stray value takes the per-value Python path.

``checked=True`` skips that check: the caller vouches that every value already has
the column's JSON type or is ``None``. The typed decoder's chunks are checked so
(:mod:`ccanalytics.frames._decode` decodes each leaf as its column's type, and a pod
with a stray value takes the per-pod path instead), as are columns of strings this
package built itself (joined lists). The check is a pass over every value in Python
(``set(map(type, ...))``): about a tenth of a large load.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Final, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd
from pandas.api.extensions import ExtensionArray

# Underscored names are for ``_frames``, not public API.
__all__ = [
    "BoolArray",
    "FloatArray",
    "IntArray",
    "Values",
    "_bool_column",
    "_float_column",
    "_floats",
    "_int_column",
    "_ints",
    "_masked_floats",
    "_str_or_none",
    "_string_column",
    "_timestamp_column",
    "_utc_stamps",
]

#: A column of raw JSON values, one per pod (or per GPU), before any type check.
Values: TypeAlias = Sequence[Any]
FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]

_STRING_DTYPE: Final = pd.StringDtype()  # "string" with <NA>, not pandas 3's NaN-based "str"
_ARROW_STRINGS: Final = _STRING_DTYPE.storage == "pyarrow"
if _ARROW_STRINGS:  # then pandas itself needs pyarrow, so it is installed
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]
_NS_MIN: Final = pd.Timestamp.min.tz_localize("UTC")
_NS_MAX: Final = pd.Timestamp.max.tz_localize("UTC")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_EXACT_IN_FLOAT: Final = 2.0**53  # integers below this survive a round trip through float64

# Element types that let a whole column take numpy's C conversion: np.array(...,
# dtype=float64) turns None into NaN, but would also turn True into 1.0 and "3" into
# 3.0, so the fast path is only taken when no bool or str is present.
_NUMBER_TYPES: Final = frozenset({int, float, type(None)})
_STR_TYPES: Final = frozenset({str, type(None)})
_BOOL_TYPES: Final = frozenset({bool, type(None)})


def _float_or_nan(value: Any) -> float:
    """A JSON number as float; NaN (missing) for anything else, bools included."""
    if isinstance(value, float):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            return math.nan
    return math.nan


def _floats(values: Values, checked: bool = False) -> FloatArray:
    """Values as float64, NaN where missing or not a number."""
    if checked or _NUMBER_TYPES.issuperset(map(type, values)):
        try:
            return np.array(values, dtype=np.float64)
        except OverflowError:  # an int beyond float range: take the per-value path
            pass
    return np.array([_float_or_nan(v) for v in values], dtype=np.float64)


def _int_or_none(value: Any) -> int | None:
    """A JSON integer (or integral number like ``13.0``) in int64 range, else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        if not value.is_integer():
            return None
        value = int(value)
    if isinstance(value, int) and _INT64_MIN <= value <= _INT64_MAX:
        return value
    return None


def _ints(values: Values, checked: bool = False) -> tuple[IntArray, BoolArray]:
    """Values as int64 data and a missing-mask (missing, non-integral or not a number)."""
    if checked or _NUMBER_TYPES.issuperset(map(type, values)):
        try:
            as_float = np.array(values, dtype=np.float64)
        except OverflowError:
            as_float = None
        # Through float64 is exact only below 2**53; larger values take the slow path.
        if as_float is not None and not (np.abs(as_float) >= _EXACT_IN_FLOAT).any():
            mask = np.isnan(as_float) | (as_float != np.trunc(as_float))
            return np.where(mask, 0.0, as_float).astype(np.int64), mask
    exact = [_int_or_none(v) for v in values]
    mask = np.array([v is None for v in exact], dtype=np.bool_)
    return np.array([0 if v is None else v for v in exact], dtype=np.int64), mask


def _float_column(values: Values, checked: bool = False) -> pd.arrays.FloatingArray:
    return _masked_floats(_floats(values, checked))


def _masked_floats(data: FloatArray) -> pd.arrays.FloatingArray:
    """Float64 array from float64 data where NaN means missing."""
    return pd.arrays.FloatingArray(data, np.isnan(data))


def _int_column(values: Values, checked: bool = False) -> pd.arrays.IntegerArray:
    data, mask = _ints(values, checked)
    return pd.arrays.IntegerArray(data, mask)


def _bool_column(values: Values, checked: bool = False) -> pd.arrays.BooleanArray:
    if checked or _BOOL_TYPES.issuperset(map(type, values)):
        objects = np.array(values, dtype=object)
        return pd.arrays.BooleanArray(objects.astype(np.bool_), pd.isna(objects))
    data = np.array([v is True for v in values], dtype=np.bool_)
    mask = np.array([not isinstance(v, bool) for v in values], dtype=np.bool_)
    return pd.arrays.BooleanArray(data, mask)


def _str_or_none(values: Values, checked: bool = False) -> Values:
    """Values with everything that is not a string replaced by ``None``."""
    if checked or _STR_TYPES.issuperset(map(type, values)):
        return values
    return [v if isinstance(v, str) else None for v in values]


def _string_column(values: Values, checked: bool = False) -> ExtensionArray:
    strings = _str_or_none(values, checked)
    if _ARROW_STRINGS:
        # pandas stores "string" in pyarrow: hand it a pyarrow array built in one C++
        # pass (pd.array of a list takes ~15x longer, of an object ndarray ~4x).
        try:
            text = pa.array(strings, type=pa.large_string())
        except UnicodeEncodeError:
            # A lone surrogate ("\ud800", only possible in dicts built in Python) is
            # not text that UTF-8, and so Arrow, can hold: <NA> like any non-string.
            text = pa.array([_utf8_or_none(v) for v in strings], type=pa.large_string())
        # The array type's own constructor: pd.array() would check the data again.
        arrow: ExtensionArray = pd.arrays.ArrowStringArray(text)
        return arrow
    return pd.array(np.array(strings, dtype=object), _STRING_DTYPE, copy=False)


def _utf8_or_none(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        value.encode()
    except UnicodeEncodeError:
        return None
    return value


#: The form the service sends (RFC 3339 in UTC, ``Z``), which Arrow parses in C at
#: ~6x the speed of pandas' ISO 8601 parser; anything else goes to pandas.
_RFC3339_UTC: Final = (
    r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z$"
)


def _utc_stamps(ns: IntArray) -> ExtensionArray:
    """Nanoseconds since the epoch as a ``datetime64[ns, UTC]`` column (no NaT)."""
    return pd.DatetimeIndex(ns.view("datetime64[ns]")).tz_localize("UTC").array


def _timestamp_column(values: Values, checked: bool = False) -> ExtensionArray:
    """ISO 8601 strings as datetime64[ns, UTC]; NaT where missing, invalid or out of range."""
    strings = _str_or_none(values, checked)
    if _ARROW_STRINGS:
        fast = _rfc3339_utc(strings)
        if fast is not None:
            return fast
    # One string at a time: pandas' vectorised ISO 8601 parse of a column mixing forms
    # (a date, a naive time, an offset) depends on the pandas version (2.2 shifted a
    # naive time by another row's offset); a naive time means UTC, as everywhere here.
    stamps = [_iso_utc(s) for s in strings]
    return pd.DatetimeIndex(stamps, dtype="datetime64[ns, UTC]").array


def _iso_utc(text: str | None) -> pd.Timestamp | None:
    """An ISO 8601 string as a UTC time to the nanosecond; None if missing, not ISO 8601,
    invalid, or outside the nanosecond range (1677-2262)."""
    if text is None or _ISO_8601.match(text) is None:
        return None
    try:
        when = pd.Timestamp(text)
        when = when.tz_localize("UTC") if when.tzinfo is None else when.tz_convert("UTC")
        return when.as_unit("ns")  # year 1 reads at second resolution, then is out of range
    except (ValueError, OverflowError):  # Feb 30th; OutOfBoundsDatetime is a ValueError
        return None


#: The ISO 8601 forms read (pandas alone would also read "Nov 18 2026" and the like).
_ISO_8601: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?\Z",
    re.IGNORECASE,
)


def _rfc3339_utc(strings: Values) -> ExtensionArray | None:
    """The column parsed by Arrow, or ``None`` unless every string has the service's
    form and a valid date in the nanosecond range (then pandas decides, as ever)."""
    try:
        text = pa.array(strings, type=pa.large_string())
    except UnicodeEncodeError:
        return None
    if (
        text.null_count == len(text)
        or not pc.all(pc.match_substring_regex(text, _RFC3339_UTC)).as_py()
    ):
        return None
    try:
        stamps = text.cast(pa.timestamp("ns", tz="UTC"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # Feb 30th, year 1, ...
        return None
    naive = stamps.to_numpy(zero_copy_only=False)  # datetime64[ns] (UTC), NaT for null
    return pd.DatetimeIndex(naive).tz_localize("UTC").array

"""The time window of a history query: ``since``/``until`` to ``[start, end)`` in UTC.

Each bound is ``None`` (open), anything :class:`pandas.Timestamp` reads (a naive time
means UTC), or a duration counted back from the newest snapshot in the store
(``since=timedelta(hours=24)`` or ``since="24h"``: the last day of history, however
old it is). A duration is a :class:`~datetime.timedelta`, a :class:`pandas.Timedelta`
or a string the CLI's ``--window`` reads (``"30s"``, ``"90min"``, ``"24h"``, ``"7d"``,
``"1w"``, ``"7 days"``, ``"1h30m"``: :func:`ccanalytics._durations.parse_duration`,
the one parser).

No ambiguity: a string that is only numbers followed by the units ``s``, ``m``,
``min``, ``h``, ``d``, ``w`` (or their words, ``7 days``) is a duration, always; no timestamp is written that way (a date
has separators, a time has colons), so every other string is read as a timestamp.

The store's newest (and oldest) snapshot is one definition, :func:`snapshot_bounds`,
over both tables, used by every window: a half-written snapshot (its gpus file
written, its pods file not) moves both ends alike.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, TypeAlias

from ccanalytics._durations import DURATION_FORMS, parse_duration

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

__all__ = [
    "BOUNDS_SQL",
    "BOUNDS_VIEW",
    "DurationLike",
    "TimeLike",
    "as_duration",
    "newest_snapshot",
    "resolve_window",
    "snapshot_bounds",
]

#: A window bound: a time, a duration back from the newest snapshot, or None (open).
TimeLike: TypeAlias = "str | datetime | date | pd.Timestamp | timedelta | pd.Timedelta | None"
#: A duration: a timedelta or a string like ``"90min"``, ``"24h"``, ``"1h30m"``.
DurationLike: TypeAlias = "str | timedelta | pd.Timedelta"


def as_duration(value: object) -> pd.Timedelta | None:
    """``value`` as a :class:`pandas.Timedelta` if it is a duration, else ``None``.

    A timedelta is one; a string is one when :func:`parse_duration` reads it (the CLI's
    grammar: ``"24h"``, ``"7d"``, ``"1h30m"``).
    """
    import pandas as pd

    if isinstance(value, timedelta | pd.Timedelta):
        return pd.Timedelta(value)
    if isinstance(value, str):
        try:
            seconds = parse_duration(value)
        except ValueError:
            return None
        return pd.Timedelta(seconds=seconds)
    return None


#: The store's oldest and newest ``observed_at`` in epoch µs over the views ``pods``,
#: ``gpus`` and ``snapshots``: the one definition. Every table, so a snapshot only half
#: written (one table's file missing) still bounds the store the same for every query,
#: and a snapshot whose listings were empty or failed is a snapshot too.
BOUNDS_SQL = (
    "SELECT epoch_us(min(lo)) AS lo_us, epoch_us(max(hi)) AS hi_us FROM ("
    "SELECT min(observed_at) AS lo, max(observed_at) AS hi FROM pods "
    "UNION ALL SELECT min(observed_at), max(observed_at) FROM gpus "
    "UNION ALL SELECT min(observed_at), max(observed_at) FROM snapshots)"
)
#: The view holding :data:`BOUNDS_SQL`'s answer (``lo_us``, ``hi_us``). History
#: defines it beside the tables' views: as that query, or as the same two numbers
#: taken from the files' footers when every file's footer tells them.
BOUNDS_VIEW = "_bounds"


def snapshot_bounds(con: duckdb.DuckDBPyConnection) -> tuple[int, int] | None:
    """The oldest and newest ``observed_at`` of the store (:data:`BOUNDS_SQL`).

    In epoch µs; ``None``: the store holds no snapshot.
    """
    # fetchall, not fetchone: a result left unfinished blocks the connection's next query.
    rows = con.execute(f"SELECT lo_us, hi_us FROM {BOUNDS_VIEW}").fetchall()
    row = rows[0] if rows else None
    if row is None or row[0] is None:
        return None
    return int(row[0]), int(row[1])


def newest_snapshot(con: duckdb.DuckDBPyConnection) -> pd.Timestamp | None:
    """The latest ``observed_at`` of the store's views (``None``: empty store)."""
    import pandas as pd

    bounds = snapshot_bounds(con)
    return None if bounds is None else pd.Timestamp(bounds[1], unit="us", tz="UTC")


def _timestamp(value: object, name: str) -> pd.Timestamp:
    import pandas as pd

    if isinstance(value, int | float):  # bool too
        raise TypeError(f"{name} must be a time or a timedelta, not a number ({value!r})")
    try:
        when = pd.Timestamp(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        # A string may have been meant as either: say both, the duration as the CLI says it.
        also = f"; nor a duration: {DURATION_FORMS}" if isinstance(value, str) else ""
        raise ValueError(f"{name}={value!r} is not a time pandas can read ({err}){also}") from None
    if pd.isna(when):
        raise ValueError(f"{name} is NaT: pass None for an open bound")
    return when.tz_localize("UTC") if when.tzinfo is None else when.tz_convert("UTC")


def _bound(value: TimeLike, name: str, newest: pd.Timestamp | None) -> pd.Timestamp | None:
    if value is None:
        return None
    import pandas as pd

    span = as_duration(value)
    if span is not None:
        if span < pd.Timedelta(0):
            raise ValueError(
                f"{name}: a timedelta counts back from the newest snapshot; got {value}"
            )
        return None if newest is None else newest - span
    return _timestamp(value, name)


def resolve_window(
    con: duckdb.DuckDBPyConnection, since: TimeLike = None, until: TimeLike = None
) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
    """``(start, end)`` in UTC for the window ``[since, until)``; ``None`` is an open bound.

    ``con`` must have the views ``pods`` and ``gpus`` (a timedelta needs the newest
    snapshot). A timedelta on an empty store gives ``(None, None)``: nothing to select.
    Raises ``ValueError`` for an unreadable time or a window that ends before it starts.
    """
    relative = any(as_duration(v) is not None for v in (since, until))
    newest = newest_snapshot(con) if relative else None
    start, end = _bound(since, "since", newest), _bound(until, "until", newest)
    if start is not None and end is not None and end < start:
        raise ValueError(f"until ({end}) is before since ({start})")
    return start, end

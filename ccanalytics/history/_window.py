"""The time window of a history query: ``since``/``until`` to ``[start, end)`` in UTC.

Each bound is ``None`` (open), anything :class:`pandas.Timestamp` reads (a naive time
means UTC), or a :class:`~datetime.timedelta` counted back from the newest snapshot in
the store (``since=timedelta(hours=24)``: the last day of history, however old it is).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

__all__ = ["newest_snapshot", "resolve_window"]


def newest_snapshot(con: duckdb.DuckDBPyConnection) -> pd.Timestamp | None:
    """The latest ``observed_at`` in the views ``pods`` and ``gpus`` (``None``: empty store)."""
    import pandas as pd

    row = con.execute(
        "SELECT epoch_us(max(t)) FROM (SELECT max(observed_at) AS t FROM pods "
        "UNION ALL SELECT max(observed_at) FROM gpus)"
    ).fetchone()
    if row is None or row[0] is None:
        return None
    return pd.Timestamp(row[0], unit="us", tz="UTC")


def _timestamp(value: Any, name: str) -> pd.Timestamp:
    import pandas as pd

    if isinstance(value, int | float):  # bool too
        raise TypeError(f"{name} must be a time or a timedelta, not a number ({value!r})")
    try:
        when = pd.Timestamp(value)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name}={value!r} is not a time pandas can read: {err}") from None
    if pd.isna(when):
        raise ValueError(f"{name} is NaT: pass None for an open bound")
    return when.tz_localize("UTC") if when.tzinfo is None else when.tz_convert("UTC")


def _bound(value: Any, name: str, newest: pd.Timestamp | None) -> pd.Timestamp | None:
    if value is None:
        return None
    import pandas as pd

    if isinstance(value, timedelta | pd.Timedelta):
        if pd.Timedelta(value) < pd.Timedelta(0):
            raise ValueError(
                f"{name}: a timedelta counts back from the newest snapshot; got {value}"
            )
        return None if newest is None else newest - pd.Timedelta(value)
    return _timestamp(value, name)


def resolve_window(
    con: duckdb.DuckDBPyConnection, since: Any = None, until: Any = None
) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
    """``(start, end)`` in UTC for the window ``[since, until)``; ``None`` is an open bound.

    ``con`` must have the views ``pods`` and ``gpus`` (a timedelta needs the newest
    snapshot). A timedelta on an empty store gives ``(None, None)``: nothing to select.
    Raises ``ValueError`` for an unreadable time or a window that ends before it starts.
    """
    import pandas as pd

    relative = any(isinstance(v, timedelta | pd.Timedelta) for v in (since, until))
    newest = newest_snapshot(con) if relative else None
    start, end = _bound(since, "since", newest), _bound(until, "until", newest)
    if start is not None and end is not None and end < start:
        raise ValueError(f"until ({end}) is before since ({start})")
    return start, end

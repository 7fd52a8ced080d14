"""Spend so far in the current UTC day, ISO week and calendar month, and where it is heading.

The method, stated once (the column docs of :data:`SPEND_COLUMNS` say it too):

- **now** is the store's newest snapshot (or the ``at`` given): the figures are those of
  the history collected, never of the local clock;
- **spent** is Σ cost·Δt over ``[period start, now)`` by the one rule of time every
  History answer uses (:meth:`History.idle_cost`'s ``total_cost``): unobserved time is
  never counted as spend, and never projected;
- **burn rate** is the USD per hour of each cluster's latest snapshot at or before now
  (the sum of its pods' ``cost``; each pod once);
- **projected** is spent + burn rate × the hours left until the period ends.

A cluster that appears mid-period has spent only from its first snapshot; one whose
collection stopped keeps the burn rate of its last snapshot (its spend stops growing).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

if TYPE_CHECKING:
    import pandas as pd

    from ccanalytics.history.queries._window import DurationLike, TimeLike

__all__ = ["PERIODS", "SPEND_COLUMNS", "Ledger", "period_bounds", "spend"]

Period = Literal["day", "week", "month"]

#: The periods a budget can be set for, each starting at a UTC boundary.
PERIODS: Final[tuple[Period, ...]] = ("day", "week", "month")

#: Columns of :meth:`History.spend`: name -> meaning and unit.
SPEND_COLUMNS: Final[Mapping[str, str]] = {
    "cluster_id": "the cluster (absent with by=None: the whole store)",
    "period": "'day' (UTC), 'week' (ISO: from Monday 00:00 UTC) or 'month' (calendar, UTC)",
    "period_start": "UTC start of the period that holds now",
    "period_end": "UTC end of that period (exclusive)",
    "now": "the instant judged: the store's newest snapshot, or the at= given",
    "spent": "USD spent from period_start to now: Σ cost·Δt over observed time only",
    "observed_hours": "cluster-hours of [period_start, now) covered by snapshots",
    "unobserved_hours": "cluster-hours of [period_start, now) no snapshot covers (not spend)",
    "burn_rate": "USD per hour of the latest snapshot at or before now",
    "hours_left": "hours from now to period_end",
    "projected": "USD by period_end: spent + burn_rate × hours_left",
}


class Ledger(Protocol):
    """What spend reads of a :class:`~ccanalytics.history.History`.

    A protocol, not the class: History calls this module, so this module may not import it.
    """

    def sql(self, query: str, params: Any = None) -> pd.DataFrame: ...

    def window_bounds(
        self, since: TimeLike = None, until: TimeLike = None
    ) -> tuple[pd.Timestamp | None, pd.Timestamp | None]: ...

    def idle_cost(
        self,
        since: TimeLike = None,
        until: TimeLike = None,
        *,
        by: Literal["cluster", "day", "pod"] | None = "cluster",
        max_gap: DurationLike | None = None,
    ) -> pd.DataFrame: ...


def period_bounds(now: pd.Timestamp, period: Period) -> tuple[pd.Timestamp, pd.Timestamp]:
    """``[start, end)`` in UTC of the ``period`` that holds ``now`` (an aware timestamp)."""
    import pandas as pd

    midnight = now.tz_convert("UTC").floor("D")
    if period == "day":
        return midnight, midnight + pd.Timedelta(days=1)
    if period == "week":
        monday = midnight - pd.Timedelta(days=midnight.weekday())  # ISO weeks start on Monday
        return monday, monday + pd.Timedelta(days=7)
    if period == "month":
        first = midnight.replace(day=1)
        return first, first + pd.offsets.MonthBegin(1)
    raise ValueError(f"period must be one of {', '.join(PERIODS)}, not {period!r}")


def spend(
    history: Ledger,
    at: pd.Timestamp | None,
    *,
    by: Literal["cluster"] | None = "cluster",
    max_gap: pd.Timedelta | None = None,
) -> pd.DataFrame:
    """Spent so far and projected per period (and cluster): see the module's method."""
    import pandas as pd

    now = _newest_snapshot(history, at)
    if now is None:
        return _empty(by)
    rates = burn_rates(history, now)
    parts = [_period_rows(history, now, period, rates, max_gap) for period in PERIODS]
    rows = pd.concat(parts, ignore_index=True)
    if by is None:
        rows = _totals(rows)
    return rows[[c for c in SPEND_COLUMNS if c in rows.columns]].reset_index(drop=True)


def _newest_snapshot(history: Ledger, at: pd.Timestamp | None) -> pd.Timestamp | None:
    """The newest snapshot in the store; with ``at``, ``at`` itself if a snapshot precedes it."""
    import pandas as pd

    if at is None:  # the one definition of the newest instant every window uses (both tables)
        return history.window_bounds(timedelta(0))[0]
    found = history.sql(
        "SELECT max(observed_at) AS t FROM pods WHERE observed_at <= $at",
        {"at": at.to_pydatetime()},
    )
    newest = found["t"].iloc[0] if len(found) else None
    # Judged at ``at`` itself when given: the hours left count from there.
    return None if newest is None or pd.isna(newest) else at


def _period_rows(
    history: Ledger,
    now: pd.Timestamp,
    period: Period,
    rates: pd.Series,
    max_gap: pd.Timedelta | None,
) -> pd.DataFrame:
    """One row per cluster seen in the period or burning at ``now``."""
    import pandas as pd

    start, end = period_bounds(now, period)
    costs = history.idle_cost(start, now, by="cluster", max_gap=max_gap).set_index("cluster_id")
    clusters = sorted(set(costs.index.astype(str)) | set(rates.index.astype(str)))
    frame = pd.DataFrame({"cluster_id": pd.array(clusters, dtype="string")})
    frame["period"] = period
    frame["period_start"] = start
    frame["period_end"] = end
    frame["now"] = now
    for column, source in (
        ("spent", "total_cost"),
        ("observed_hours", "observed_hours"),
        ("unobserved_hours", "unobserved_hours"),
    ):
        values = costs[source].astype("Float64") if len(costs) else pd.Series(dtype="Float64")
        frame[column] = frame["cluster_id"].map(values).astype("Float64").fillna(0.0)
    frame["burn_rate"] = frame["cluster_id"].map(rates).astype("Float64").fillna(0.0)
    frame["hours_left"] = (end - now) / pd.Timedelta(hours=1)
    frame["projected"] = frame["spent"] + frame["burn_rate"] * frame["hours_left"]
    return frame


def burn_rates(history: Ledger, now: pd.Timestamp) -> pd.Series:
    """USD per hour of each cluster's latest snapshot at or before ``now`` (each pod once)."""
    import pandas as pd

    rates = history.sql(
        """
        WITH latest AS (
            SELECT cluster_id, max(observed_at) AS observed_at
            FROM pods WHERE observed_at <= $now GROUP BY cluster_id
        ), per_pod AS (  -- a snapshot held by two files still counts each pod once
            SELECT p.cluster_id, coalesce(p.pod_id, p.name) AS pod, max(p.cost) AS cost
            FROM pods AS p JOIN latest USING (cluster_id, observed_at)
            GROUP BY p.cluster_id, pod
        )
        SELECT cluster_id, coalesce(sum(cost), 0.0) AS burn_rate
        FROM per_pod GROUP BY cluster_id
        """,
        {"now": now.to_pydatetime()},
    )
    if rates.empty:
        return pd.Series(dtype="Float64")
    return rates.set_index(rates["cluster_id"].astype(str))["burn_rate"].astype("Float64")


def _totals(rows: pd.DataFrame) -> pd.DataFrame:
    keys = ["period", "period_start", "period_end", "now", "hours_left"]
    sums = ["spent", "observed_hours", "unobserved_hours", "burn_rate", "projected"]
    return rows.groupby(keys, sort=False, as_index=False)[sums].sum()


def _empty(by: Literal["cluster"] | None) -> pd.DataFrame:
    import pandas as pd

    dtypes = {
        "cluster_id": "string",
        "period": "string",
        "period_start": "datetime64[ns, UTC]",
        "period_end": "datetime64[ns, UTC]",
        "now": "datetime64[ns, UTC]",
    }
    columns = [c for c in SPEND_COLUMNS if by is not None or c != "cluster_id"]
    return pd.DataFrame({c: pd.Series(dtype=dtypes.get(c, "Float64")) for c in columns})

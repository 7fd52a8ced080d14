"""Spend anomalies: each cluster's latest hour of spend against its own usual for that hour.

The rule, stated once (:data:`SPEND_ANOMALY_COLUMNS` says it per column):

- **the hour** is the latest complete UTC hour before now (the store's newest snapshot,
  or the ``at`` given): now 14:30 or 14:00 judges 13:00-14:00;
- **its spend** is Σ cost·Δt in that hour by the one rule of time every History answer
  uses, per observed hour (USD/h; the hour's USD when, as usual, it is all observed), so
  a collection gap reads neither as a drop nor as a jump; an hour with nothing observed
  has no spend and is not judged;
- **the baseline** is the same hour of the week, 1 to ``weeks`` weeks back
  (:data:`~ccanalytics.measures.rules.SPEND_BASELINE_WEEKS`, 4), each observed one
  counting once: ``usual`` is its median and ``mad`` its median absolute deviation,
  and ``robust_z`` is :func:`~ccanalytics.measures.rules.robust_z_sql`, the straggler
  rule's statistics (one definition);
- **too few weeks**: with fewer than
  :data:`~ccanalytics.measures.rules.SPEND_MIN_BASELINE_WEEKS` (3) observed baseline
  hours, a median and a MAD say nothing: ``robust_z`` is NULL and nothing is unusual
  (no alarm; a young store says so, it does not guess);
- **unusual** when ``robust_z`` is above ``z`` *and* the spend is at least
  :data:`~ccanalytics.measures.rules.SPEND_ANOMALY_MIN_RATIO` (1.5) times the usual. A
  steady cluster's baseline has MAD 0: its z is then +inf for any spend above the median,
  so the ratio alone decides (as the straggler rule's gap does) and a cent of noise never
  alarms.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import pandas as pd

from ccanalytics.history.queries._accounting import (
    US_PER_HOUR,
    hourly_spend_ctes,
    run,
    to_utc,
)
from ccanalytics.measures import KIND_RELATIONS, of_kind, projections
from ccanalytics.measures.rules import (
    SPEND_ANOMALY_MIN_RATIO,
    SPEND_ANOMALY_Z,
    SPEND_BASELINE_WEEKS,
    median_sql,
)

__all__ = ["SPEND_ANOMALY_COLUMNS", "spend_anomalies"]

#: Columns of :meth:`History.spend_anomalies`: name -> meaning and unit.
SPEND_ANOMALY_COLUMNS: Final[Mapping[str, str]] = {
    "cluster_id": "the cluster (one row per cluster observed in the hour)",
    "hour": "UTC start of the hour judged: the latest complete hour before now",
    "spend": "USD per observed hour spent in that hour (Σ cost·Δt / observed hours)",
    "usual": "median spend of the same hour of the week over the baseline weeks (USD/h)",
    "mad": "median absolute deviation of those hours from usual (USD/h)",
    "weeks": "baseline hours observed (of weeks=); fewer than 3: not judged",
    "ratio": "spend / usual (inf when usual is 0 and spend is not)",
    "robust_z": "MAD_SCALE·(spend − usual)/MAD; with MAD 0 ±inf off the usual, 0 at it; "
    "NULL with too few baseline weeks",
    "unusual": "robust_z > z and spend >= 1.5 × usual",
}

_HOUR: Final = US_PER_HOUR
_WEEK_HOURS: Final = 7 * 24


def _sql() -> str:
    """The hour against its baseline: the inputs per cluster (``anomaly_inputs``), then
    the registry's anomaly measures over them (``robust_z`` among them)."""
    figures = ", ".join(projections("anomaly"))
    return f"""WITH {hourly_spend_ctes(f"($hour - k) % {_WEEK_HOURS} = 0")},
    hours AS (SELECT cluster_id, k, rate AS v FROM hourly_spend),
    latest AS (SELECT cluster_id, v AS spend FROM hours WHERE k = $hour),
    baseline AS (SELECT cluster_id, v FROM hours WHERE k < $hour),
    centre AS (
        SELECT cluster_id, count(*) AS weeks, {median_sql("v")} AS usual
        FROM baseline GROUP BY cluster_id
    ),
    spread AS (
        SELECT cluster_id, {median_sql("abs(b.v - c.usual)")} AS mad
        FROM baseline b JOIN centre c USING (cluster_id) GROUP BY cluster_id
    ),
    {KIND_RELATIONS["anomaly"].name} AS (
        SELECT l.cluster_id, l.spend, c.usual, s.mad, coalesce(c.weeks, 0) AS weeks
        FROM latest l LEFT JOIN centre c USING (cluster_id) LEFT JOIN spread s USING (cluster_id)
    )
SELECT cluster_id, spend, usual, mad, weeks, {figures}
FROM {KIND_RELATIONS["anomaly"].name}
ORDER BY cluster_id"""


_DTYPES: Final = {
    "cluster_id": "string",
    "hour": "datetime64[ns, UTC]",
    "spend": "Float64",
    "usual": "Float64",
    "mad": "Float64",
    "weeks": "Int64",
    "ratio": "Float64",
    "robust_z": "Float64",
    "unusual": "boolean",
}


def _dtypes() -> dict[str, str]:
    """The answer's columns: the rule's, then any further anomaly measure's (Float64)."""
    more = {m.answer_column: "Float64" for m in of_kind("anomaly")}
    return {**_DTYPES, **{c: t for c, t in more.items() if c not in _DTYPES}}


def spend_anomalies(
    con: Any,
    now: pd.Timestamp | None,
    *,
    weeks: int = SPEND_BASELINE_WEEKS,
    z: float = SPEND_ANOMALY_Z,
) -> pd.DataFrame:
    """Per cluster: the latest complete hour's spend against its baseline (the module's rule)."""
    if not isinstance(weeks, int) or isinstance(weeks, bool) or weeks < 1:
        raise ValueError(f"weeks must be a whole number of weeks, 1 or more, not {weeks!r}")
    if now is None:
        return pd.DataFrame(columns=list(_dtypes())).astype(_dtypes())
    hour = int(to_utc(now).value // 1000) // _HOUR - 1
    frame = run(
        con,
        _sql(),
        {
            "hour": hour,
            "start_us": (hour - weeks * _WEEK_HOURS) * _HOUR,
            "end_us": (hour + 1) * _HOUR,
            "max_gap_us": None,
        },
    )
    frame["hour"] = pd.to_datetime(hour * _HOUR, unit="us", utc=True)
    usual = frame["usual"].astype("float64")
    spend = frame["spend"].astype("float64")
    frame["ratio"] = (spend / usual).where(usual > 0, float("inf")).where(spend > 0, 0.0)
    frame.loc[usual.isna(), "ratio"] = float("nan")
    robust = frame["robust_z"].astype("float64")
    frame["unusual"] = (robust > z) & (spend >= SPEND_ANOMALY_MIN_RATIO * usual)
    dtypes = _dtypes()
    return frame[list(dtypes)].astype(dtypes).reset_index(drop=True)

"""What a :class:`~ccanalytics.history.History` shows in Jupyter: its store at a glance.

The tables and their rows, the snapshots, the clusters, the span from the oldest to the
newest snapshot, the files' size on disk and each cluster's coverage (snapshots taken,
failed and missing), read with the History's own queries when it is displayed; ``repr``
stays the cheap ``History('/path')`` (a traceback or a log line runs no query).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ccanalytics._show import html_table, human_bytes

if TYPE_CHECKING:
    import pandas as pd


class History(Protocol):
    """What is read of the History (a protocol: History's module imports this one)."""

    @property
    def store(self) -> Path | str: ...
    def sql(self, query: str, params: Any = None) -> pd.DataFrame: ...
    def coverage(self) -> pd.DataFrame: ...


__all__ = ["history_html"]

_SPAN_SQL = (
    "SELECT min(observed_at) AS lo, max(observed_at) AS hi, "
    "count(DISTINCT observed_at) AS snapshots, count(DISTINCT cluster_id) AS clusters "
    "FROM snapshots"
)


def history_html(history: History) -> str:
    """The store of ``history`` as two small tables: the overview, then the coverage."""
    store = history.store
    span = history.sql(_SPAN_SQL).iloc[0]
    rows: list[tuple[object, ...]] = [("store", store)]
    counts = {
        t: int(history.sql(f"SELECT count(*) AS n FROM {t}")["n"].iloc[0])
        for t in ("pods", "gpus", "snapshots")
    }
    rows.append(("tables", ", ".join(f"{t}: {n:,} rows" for t, n in counts.items())))
    rows.append(("snapshots", f"{int(span['snapshots']):,}"))
    rows.append(("clusters", f"{int(span['clusters']):,}"))
    if counts["snapshots"]:
        hours = (span["hi"] - span["lo"]).total_seconds() / 3600
        rows.append(
            (
                "span",
                f"{span['lo']:%Y-%m-%d %H:%M} to {span['hi']:%Y-%m-%d %H:%M} UTC ({hours:,.1f} h)",
            )
        )
    rows.append(("size", _size(store)))
    overview = html_table("History", rows)
    coverage = history.coverage()
    if coverage.empty:
        return overview
    columns = ["cluster_id", "taken", "failed", "missing", "last_error"]
    shown = coverage[columns].astype(object).where(coverage[columns].notna(), "")
    cells = [list(row) for row in shown.itertuples(index=False)]
    return overview + html_table("Coverage per cluster", cells, header=columns)


def _size(store: Path | str) -> str:
    """The Parquet files' size on disk; an object store's is not listed here."""
    if not isinstance(store, Path):
        return "not measured (object storage)"
    total = files = 0
    for folder, _, names in os.walk(store):
        for name in names:
            if name.endswith(".parquet"):
                total += os.path.getsize(os.path.join(folder, name))
                files += 1
    return f"{human_bytes(total)} in {files:,} Parquet files"

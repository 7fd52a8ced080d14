"""docs/guide/measures-sql.md shows one measure in two dialects: what the command prints."""

from __future__ import annotations

import re
from pathlib import Path

from ccanalytics.history import measures_sql

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "measures-sql.md"


def test_the_page_s_statements_are_what_measures_sql_prints() -> None:
    blocks = re.findall(r"^```sql\n(.*?)\n^```", PAGE.read_text(encoding="utf-8"), re.M | re.S)
    assert blocks == [
        measures_sql("idle_cost", dialect="duckdb", by="cluster"),
        measures_sql("idle_cost", dialect="spark", by="cluster"),
    ]

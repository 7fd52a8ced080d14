"""The rules' median is numpy's to the bit, at every group size and with ties.

``rules.median_sql`` is an aggregate over DuckDB; the straggler rule compares each
rank to it and to the MAD (another median), so one ulp off at a boundary flips a flag.
numpy's median is the middle value, or the two middle values' sum halved.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from ccanalytics.measures.rules import median_sql

#: Group sizes: every small one (odd and even), and a few large ones.
SIZES = [*range(1, 41), 99, 100, 1000, 4097, 20000]


@pytest.fixture(scope="module")
def medians() -> dict[int, tuple[float, float]]:
    """Per group: (numpy's median, median_sql's), over values with ties and signs."""
    rng = np.random.default_rng(35)
    groups, values, expected = [], [], {}
    for g, n in enumerate(SIZES):
        decimals = g % 4  # 0-3 decimals: coarse values tie often
        x = np.round(rng.normal(50, 30, n), decimals)
        if g % 5 == 0:
            x[: n // 2] = x[0]  # half the group one value
        groups += [g] * n
        values += x.tolist()
        expected[g] = float(np.median(x))
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT g, {median_sql('v')} FROM (SELECT unnest($g) AS g, unnest($v) AS v) GROUP BY g",
        {"g": groups, "v": values},
    ).fetchall()
    return {g: (expected[g], got) for g, got in rows}


def test_median_sql_is_numpys_median_to_the_bit(medians: dict[int, tuple[float, float]]) -> None:
    assert len(medians) == len(SIZES)
    for g, (want, got) in medians.items():
        assert got == want, f"group of {SIZES[g]}: {got!r} != numpy's {want!r}"


def test_median_sql_of_a_hand_computed_group() -> None:
    con = duckdb.connect()
    got = con.execute(
        f"SELECT {median_sql('v')} FROM (SELECT unnest([4.0, 1.0, 3.0, 2.0, 10.0, 2.5]) AS v)"
    ).fetchone()
    assert got == (2.75,)  # sorted 1, 2, 2.5, 3, 4, 10: (2.5 + 3) / 2

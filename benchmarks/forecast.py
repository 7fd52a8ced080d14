"""Figure 9: the seasonal month-end forecast against the burn-rate line, eight weeks of the
sandbox's weekly office fleet (``WeeklyFleet``), several seeds and holiday placements.

Each store is tests/simulated_weeks.py's (Monday 2026-10-05 to 2026-12-01, a snapshot
every 30 minutes, one holiday), built once per seed and holiday and cached in the
temporary directory. From 12:00 UTC of every day of November, ``History.spend``'s
month-end ``projected_p50`` (seasonal) and ``projected`` (the line) are compared with
November's actual spend (``idle_cost``'s ``total_cost``); the interval's coverage is
the share of the 30 days whose P10-P90 holds it. Targets: the seasonal MAPE
at most half the line's; coverage 70-90 %.

Coverage is of thirty forecasts of one month-end: they share one outcome, so one month
more expensive than the weeks before it (a seed whose November leaves more pods running
overnight) moves every one of them at once, so coverage is judged pooled over the
seeds with the holiday in October (the test pools seeds 0-2); the holiday in November
is what the method does when the month itself holds one.
"""

from __future__ import annotations

import sys
import tempfile
from datetime import date
from pathlib import Path

from _harness import report, verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the stores' builder

#: (seed, holiday): the test's stores (seeds 0-2) first, then two more seeds, pooled with
#: them; then a holiday in November, on its own.
CASES = tuple((seed, date(2026, 10, 12)) for seed in range(5))
CASES_IN_MONTH = ((0, date(2026, 11, 26)),)
CACHE = Path(tempfile.gettempdir()) / "ccanalytics-bench-forecast-v1"


def _store(seed: int, holiday: date) -> Path:
    from simulated_weeks import write_weeks

    path = CACHE / f"seed{seed}-{holiday:%m%d}"
    if not (path / ".complete").exists():
        import shutil

        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        write_weeks(path, seed=seed, holiday=holiday)
        (path / ".complete").touch()
    return path


def measure(store: Path) -> tuple[float, float, float]:
    """(seasonal MAPE, line MAPE, interval coverage) from every day of November."""
    from ccanalytics import History

    seasonal, line, held = [], [], []
    with History(store) as h:
        actual = float(h.idle_cost("2026-11-01", "2026-12-01", by=None)["total_cost"].iloc[0])
        for day in range(1, 31):
            spend = h.spend(at=f"2026-11-{day:02d}T12:00", by=None)
            month = spend[spend["period"] == "month"].iloc[0]
            seasonal.append(abs(float(month["projected_p50"]) - actual) / actual)
            line.append(abs(float(month["projected"]) - actual) / actual)
            low, high = float(month["projected_p10"]), float(month["projected_p90"])
            held.append(low <= actual <= high)
    return sum(seasonal) / 30, sum(line) / 30, sum(held) / 30


def bench() -> None:
    print("9. forecast: seasonal month-end vs the burn-rate line, 8 simulated weeks")
    pooled: list[float] = []
    for seed, holiday in (*CASES, *CASES_IN_MONTH):
        mape, line_mape, coverage = measure(_store(seed, holiday))
        if (seed, holiday) in CASES:
            pooled.append(coverage)
        where = f"seed {seed}, holiday {holiday:%b %d}"
        report(
            f"month-end MAPE, {where}",
            f"{mape:.1%}",
            f"{line_mape:.1%} line",
            f"{line_mape / mape:.1f}x better; {verdict(mape <= line_mape / 2)} (<= half)",
        )
        report(
            f"  80 % interval coverage, {where}",
            f"{coverage:.0%}",
            "70-90 % pooled",
            "one month-end",
        )
    for name, part in (("seeds 0-2", pooled[:3]), (f"seeds 0-{len(pooled) - 1}", pooled)):
        held = sum(part) / len(part)
        report(
            f"80 % interval coverage pooled, {name}",
            f"{held:.0%}",
            "70-90 %",
            verdict(0.7 <= held <= 0.9),
        )


if __name__ == "__main__":
    bench()

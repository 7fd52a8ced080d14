"""A policy judging a projected budget by the seasonal forecast's P50 or P90, or the line.

The store is ``weekly_store`` (tests/weekly_store.py), judged at Monday Nov 9 00:00: 552
USD spent in November, the line projects 1080 (1 USD/h at midnight), the seasonal
forecast 2232 with no spread (five identical weeks), reaching 2000 on Friday the 27th.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from history_helpers import ts
from weekly_store import write_weekly_store

from ccanalytics import History
from ccanalytics.errors import PolicyError
from ccanalytics.history import judge_policy, parse_policy


@pytest.fixture(scope="module")
def weekly_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_weekly_store(tmp_path_factory.mktemp("weekly"))


def _policy(forecast: str | None) -> str:
    line = f'forecast = "{forecast}"\n' if forecast else ""
    return f'[[rule]]\nname = "w"\nclusters = "w"\nmax_projected_spend = {{ month = 2000 }}\n{line}'


def test_the_line_stays_the_default_and_is_fine(weekly_store: Path) -> None:
    with History(weekly_store) as h:
        (judged,) = judge_policy(parse_policy(_policy(None)), h).judgements
        (named,) = judge_policy(parse_policy(_policy("linear")), h).judgements
    assert judged.value == pytest.approx(1080.0)
    assert not judged.breached
    assert named.value == judged.value


@pytest.mark.parametrize("forecast", ["p50", "p90"])
def test_a_forecast_budget_breaches_and_gives_the_breach_date_its_interval(
    weekly_store: Path, forecast: str
) -> None:
    with History(weekly_store) as h:
        (judged,) = judge_policy(parse_policy(_policy(forecast)), h).judgements
    assert judged.value == pytest.approx(2232.0)
    assert judged.breached
    assert f"{forecast.upper()} of the seasonal forecast" in judged.sentence
    assert "reaches its 2,000 USD month on 2026-11-27 (between 2026-11-27 and 2026-11-27)" in (
        judged.sentence
    )
    assert f"{judged.breach_at:%Y-%m-%d %H:%M}" == "2026-11-27 08:00"


def test_an_unknown_forecast_is_a_policy_error_naming_the_key() -> None:
    with pytest.raises(PolicyError, match="forecast must be one of 'linear', 'p50', 'p90'"):
        parse_policy(_policy("p75"))


def test_the_breach_interval_is_on_the_judgement_and_in_the_textfile(weekly_store: Path) -> None:
    from ccanalytics.history import render_textfile

    with History(weekly_store) as h:
        report = judge_policy(parse_policy(_policy("p90")), h)
    (judged,) = report.judgements
    assert f"{judged.breach_at_p90:%Y-%m-%d %H:%M}" == "2026-11-27 08:00"
    assert f"{judged.breach_at_p10:%Y-%m-%d %H:%M}" == "2026-11-27 08:00"
    text = render_textfile(report).decode()
    stamp = ts("2026-11-27T08:00").timestamp()
    for q in ("p90", "p10"):
        line = next(
            x for x in text.splitlines() if x.startswith(f"ccanalytics_projected_breach_{q}")
        )
        assert float(line.rsplit(" ", 1)[1]) == pytest.approx(stamp)

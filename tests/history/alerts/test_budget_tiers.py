"""Budget tiers (warn_at), the breach date and spend anomalies, judged and told.

Figures from ``budget_store`` (budget_store.py): cl-a costs 2.50 USD/h, hourly from Nov 1
00:00 to Nov 10 12:00, with nothing observed from Nov 5 01:00 to Nov 6 00:00 (23 h).
Spent this month at noon, by hand: Nov 1 30.00, Nov 2 90.00, Nov 3 150.00, Nov 4 210.00,
Nov 5 242.50 (the gap), Nov 6 272.50, Nov 7 332.50, Nov 8 392.50, Nov 9 452.50, Nov 10
512.50. A day: 2.50 USD/h from midnight, 7.50 USD every three hours.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import ts
from prometheus_client.parser import text_string_to_metric_families

from ccanalytics import History
from ccanalytics.errors import PolicyError
from ccanalytics.history.alerts._alerts import STATE_FILE, notify_on_change, read_state, snooze
from ccanalytics.history.alerts._judge import judge_policy
from ccanalytics.history.alerts._policy import load_policy, parse_policy
from ccanalytics.history.alerts._textfile import render_textfile

URL = "https://hooks.example.com/services/T0/B0/secret-token"

MONTH = f"""
[[rule]]
name = "a"
clusters = "cl-a"
max_spend = {{ month = 400 }}
warn_at = [0.5, 0.8]
notify = "{URL}"
"""


class Receiver:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def __call__(self, url: str, text: str) -> str | None:
        self.sent.append((url, text))
        return None


def _told(store: Path, policy_text: str, instants: list[str], state: Path) -> list[str]:
    """Judge at each instant and notify on change: ``"when: first words"`` per message."""
    policy = parse_policy(policy_text)
    post = Receiver()
    said = []
    with History(store) as h:
        for at in instants:
            report = judge_policy(policy, h, at=ts(at))
            before = len(post.sent)
            notify_on_change(state, report.alerts(policy), now=ts(at).to_pydatetime(), post=post)
            said += [f"{at}: {text}" for _, text in post.sent[before:]]
    return said


def _starts(said: list[str], expected: list[str]) -> bool:
    return len(said) == len(expected) and all(
        s.startswith(e) for s, e in zip(said, expected, strict=True)
    )


def test_a_budget_warns_at_each_tier_of_its_spend_then_breaches(
    budget_store: Path, tmp_path: Path
) -> None:
    noons = [f"2026-11-{day:02d}T12:00" for day in range(1, 11)]
    said = _told(budget_store, MONTH, noons, tmp_path)
    # 200 (half of 400) is passed by Nov 4 noon (210.00), 320 by Nov 7 (332.50), 400 by
    # Nov 9 (452.50): one message each, none while a tier holds.
    assert _starts(
        said,
        [
            "2026-11-04T12:00: ccanalytics check: warning, past 50% of a budget",
            "2026-11-07T12:00: ccanalytics check: warning, past 80% of a budget",
            "2026-11-09T12:00: ccanalytics check: cl-a: 452.50 USD spent this month",
        ],
    ), said
    entry = read_state(tmp_path).alerts["a/max_spend.month@cl-a"]
    assert (entry["state"], entry["warned"], entry["warned_period"]) == (
        "breached",
        1.0,
        "2026-11-01",
    )


def test_a_projection_past_two_tiers_at_once_sends_the_higher_only(
    budget_store: Path, tmp_path: Path
) -> None:
    # Nov 1 12:00: 30.00 + 2.50 x 708 h = 1800.00 projected, 90 % of 2000: the 80 % tier.
    policy = MONTH.replace("max_spend = { month = 400 }", "max_projected_spend = { month = 2000 }")
    said = _told(budget_store, policy, ["2026-11-01T12:00", "2026-11-02T12:00"], tmp_path)
    assert _starts(said, ["2026-11-01T12:00: ccanalytics check: warning, past 80% of a budget"])
    with History(budget_store) as h:
        (judged,) = judge_policy(parse_policy(policy), h, at=ts("2026-11-01T12:00")).judgements
    assert judged.tier == 0.8 and not judged.breached
    assert judged.sentence.startswith(
        "cl-a: 1,800.00 USD projected for the month (30.00 USD spent since 2026-11-01, then "
        "2.50 USD/h to its end), past 80% of the limit of 2,000.00 USD (rule 'a')"
    )


DAY = f"""
[[rule]]
name = "a"
clusters = "cl-a"
max_spend = {{ day = 50 }}
warn_at = [0.5, 0.8]
notify = "{URL}"
"""


@pytest.mark.slow
def test_a_new_period_starts_the_tiers_again_and_never_a_lower_after_a_higher(
    budget_store: Path, tmp_path: Path
) -> None:
    every_3h = [f"{t:%Y-%m-%dT%H:%M}" for t in pd.date_range("2026-11-02", periods=13, freq="3h")]
    said = _told(budget_store, DAY, every_3h, tmp_path)
    # Nov 2: 30.00 at 12:00 (>= 25), 45.00 at 18:00 (>= 40), 52.50 at 21:00 (> 50);
    # Nov 3 00:00: a new day, 0.00 spent: fine again; 30.00 at 12:00: half, again.
    assert _starts(
        said,
        [
            "2026-11-02T12:00: ccanalytics check: warning, past 50% of a budget",
            "2026-11-02T18:00: ccanalytics check: warning, past 80% of a budget",
            "2026-11-02T21:00: ccanalytics check: cl-a: 52.50 USD spent today",
            "2026-11-03T00:00: ccanalytics check: fine again. cl-a: 0.00 USD spent today",
            "2026-11-03T12:00: ccanalytics check: warning, past 50% of a budget",
        ],
    ), said


def test_a_snoozed_warning_waits_for_the_snooze(budget_store: Path, tmp_path: Path) -> None:
    snooze(tmp_path, "a", duration=timedelta(hours=2), now=ts("2026-11-02T11:00"))
    said = _told(budget_store, DAY, ["2026-11-02T12:00", "2026-11-02T15:00"], tmp_path)
    # Owed at 12:00 (snoozed until 13:00), sent at 15:00 with the figure then: 37.50.
    assert _starts(said, ["2026-11-02T15:00: ccanalytics check: warning, past 50% of a budget"])
    assert "cl-a: 37.50 USD spent today" in said[0]


def test_a_state_file_from_before_tiers_reads_and_does_not_repeat_a_breach(
    budget_store: Path, tmp_path: Path
) -> None:
    old = {"version": 2, "alerts": {"a/max_spend.month@cl-a": {"state": "breached",
           "since": "2026-11-09T12:00:00+00:00", "notified": True}}, "snoozes": {}}  # fmt: skip
    (tmp_path / STATE_FILE).write_text(json.dumps(old))
    assert _told(budget_store, MONTH, ["2026-11-10T12:00"], tmp_path) == []


BAD_WARN_AT = [
    ("warn_at = [0.8, 0.5]", "must increase"),
    ("warn_at = [0.5, 0.5]", "must increase"),
    ("warn_at = [0, 0.5]", "between 0 and 1"),
    ("warn_at = [0.5, 1]", "between 0 and 1"),
    ('warn_at = "half"', "list of shares"),
    ("warn_at = [true]", "list of shares"),
]


@pytest.mark.parametrize(("line", "words"), BAD_WARN_AT)
def test_a_bad_warn_at_names_file_line_and_key(tmp_path: Path, line: str, words: str) -> None:
    path = tmp_path / "budget.toml"
    path.write_text(f'[[rule]]\nclusters = "cl-a"\nmax_spend = {{ month = 4 }}\n{line}\n')
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value).startswith(f"{path}, line 4: ") and words in str(caught.value)
    assert (caught.value.line, caught.value.key) == (4, "warn_at")


def test_warn_at_without_a_budget_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "budget.toml"
    path.write_text("[[rule]]\nmax_idle_cost = 1\nwarn_at = [0.5]\n")
    with pytest.raises(PolicyError, match="warn_at warns of budgets") as caught:
        load_policy(path)
    assert (caught.value.line, caught.value.key) == (3, "warn_at")


def test_the_textfile_carries_the_tier_and_the_breach_date(budget_store: Path) -> None:
    policy = parse_policy(
        '[[rule]]\nname = "a"\nclusters = "cl-*"\nmax_spend = { month = 600 }\n'
        "warn_at = [0.5, 0.8]\n"
    )
    with History(budget_store) as h:
        report = judge_policy(policy, h)
    families = {f.name: f for f in text_string_to_metric_families(render_textfile(report).decode())}
    tier = {s.labels["cluster"]: s.value for s in families["ccanalytics_budget_tier_ratio"].samples}
    # cl-a: 512.50 of 600 is 85 %: the 80 % tier; cl-b: 216.00 is 36 %: none.
    assert tier == {"cl-a": 0.8, "cl-b": 0.0}
    breach = {
        s.labels["cluster"]: s.value
        for s in families["ccanalytics_projected_breach_timestamp_seconds"].samples
    }
    # cl-a: (600 - 512.50) / 2.50 = 35 h after Nov 10 12:00; cl-b: (600 - 216) / 4 = 96 h.
    assert breach == {
        "cl-a": ts("2026-11-11T23:00").timestamp(),
        "cl-b": ts("2026-11-14T12:00").timestamp(),
    }


def test_a_warning_is_sent_but_is_not_a_breach(budget_store: Path, tmp_path: Path) -> None:
    import shutil

    from ccanalytics.history import check

    store = tmp_path / "store"
    shutil.copytree(budget_store, store)
    post = Receiver()
    policy = MONTH.replace("month = 400", "month = 600")  # 512.50 of 600: past 80 %
    run = check(store, policy=parse_policy(policy), now=ts("2026-11-10T12:00"), post=post)
    assert not run.breached  # check exits 0 for a warning
    assert [text[:50] for _, text in post.sent] == [
        "ccanalytics check: warning, past 80% of a budget. "
    ]
    assert "cl-a reaches its 600 USD month on 2026-11-11." in post.sent[0][1]

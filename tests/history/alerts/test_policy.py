"""Policy files for check: parsed strictly, judged per cluster, exported for Prometheus.

Figures come from ``budget_store`` (budget_store.py), computed there by hand:
at the newest snapshot (Nov 10 12:00) cl-a has spent 512.50 USD this month and is
projected at 1742.50; cl-b 216.00 and 2184.00.
"""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import pytest
from history_helpers import pod_row, ts, write_store
from prometheus_client.parser import text_string_to_metric_families

from ccanalytics import History
from ccanalytics.errors import CCAnalyticsError, PolicyError
from ccanalytics.history.alerts._judge import judge_policy
from ccanalytics.history.alerts._policy import load_policy, parse_policy
from ccanalytics.history.alerts._textfile import render_textfile, write_textfile

SECRET_URL = "https://hooks.example.com/services/T000/B000/very-secret-token"

FLEET_POLICY = """
[defaults]
window = "2h"

[[rule]]
name = "fleet"
clusters = "cl-*"
max_spend = { month = 600 }
max_projected_spend = { month = 2000, day = 1000 }
notify_env = "CC_TEST_WEBHOOK"

[[rule]]
name = "nobody"
clusters = ["cl-nope-*"]
max_idle_cost = 1
"""


@pytest.fixture
def webhook_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC_TEST_WEBHOOK", SECRET_URL)


# --------------------------------------------------------------------------- parsing


def test_a_policy_parses_into_rules_with_their_thresholds(webhook_env: None) -> None:
    policy = parse_policy(FLEET_POLICY)
    fleet = policy.rule("fleet")
    assert fleet.clusters == ("cl-*",)
    assert [t.key for t in fleet.thresholds] == [
        "fleet/max_spend.month",
        "fleet/max_projected_spend.day",
        "fleet/max_projected_spend.month",
    ]
    assert fleet.window.total_seconds() == 7200  # inherited from [defaults]
    assert fleet.webhook() == SECRET_URL
    assert SECRET_URL not in repr(policy)


BAD_POLICIES = [
    # (text, the line named, the key named, words in the message)
    ('[[rule]]\nclusters = "cl-*"\nmax_spent = 3\n', 3, "max_spent", "unknown key"),
    ("[[rule]]\nmax_idle_cost = -5\n", 2, "max_idle_cost", "0 or more"),
    ('[[rule]]\nmax_idle_cost = "lots"\n', 2, "max_idle_cost", "must be a number"),
    ("[[rule]]\nmax_spend = { year = 5 }\n", 2, "year", "unknown key"),
    ("[[rule]]\nmax_spend = { day = -1 }\n", 2, "day", "0 or more"),
    ("[[rule]]\nmax_idle_cost_share = 1.5\n", 2, "max_idle_cost_share", "fraction"),
    ("[[rule]]\nmax_stragglers = 1.5\n", 2, "max_stragglers", "whole number"),
    ('[[rule]]\nmax_idle_cost = 1\nwindow = "soon"\n', 3, "window", "duration"),
    ('[[rule]]\nmax_idle_cost = 1\nnotify_env = "UNSET_CC_VARIABLE"\n', 3, "notify_env", "not set"),
    (
        f'[[rule]]\nmax_idle_cost = 1\nnotify = "{SECRET_URL}"\nnotify_env = "X"\n',
        4,
        "notify_env",
        "not both",
    ),
    ('[[rule]]\nclusters = "cl-a"\n', 1, "rule", "no threshold"),
    ('[defaults]\nwindow = "1h"\n', None, "rule", "at least one [[rule]]"),
    (
        "[defaults]\nmax_idle_cost = 3\n[[rule]]\nmax_idle_cost = 1\n",
        2,
        "max_idle_cost",
        "unknown key",
    ),
    (
        '[[rule]]\nname = "a"\nmax_idle_cost = 1\n[[rule]]\nname = "a"\nmax_idle_cost = 2\n',
        5,
        "name",
        "two rules",
    ),
]


@pytest.mark.parametrize(("text", "line", "key", "words"), BAD_POLICIES)
def test_a_malformed_policy_is_one_line_naming_file_line_and_key(
    tmp_path: Path, text: str, line: int | None, key: str, words: str
) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    err = caught.value
    message = str(err)
    assert "\n" not in message
    assert message.startswith(f"{path}, line {line}: " if line else f"{path}: ")
    assert words in message
    assert (err.path, err.line, err.key) == (path, line, key)
    assert SECRET_URL not in message
    assert isinstance(err, CCAnalyticsError) and isinstance(err, ValueError)
    assert str(pickle.loads(pickle.dumps(err))) == message


def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("[[rule]]\nmax_idle_cost = = 3\n")
    with pytest.raises(PolicyError, match=r"p\.toml: not valid TOML: .*line 2"):
        load_policy(path)


def test_an_unreadable_policy_is_a_policy_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read the policy"):
        load_policy(tmp_path / "missing.toml")


def test_a_url_with_a_typo_is_refused_without_quoting_it() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy('[[rule]]\nmax_idle_cost = 1\nnotify = "htps://hooks.example.com/secret"\n')
    assert "secret" not in str(caught.value)


# --------------------------------------------------------------------------- judging


def test_each_threshold_is_judged_per_cluster_to_the_cent(
    budget_store: Path, webhook_env: None
) -> None:
    with History(budget_store) as h:
        report = judge_policy(parse_policy(FLEET_POLICY), h)
    by_key = {j.key: j for j in report.judgements}
    assert round(by_key["fleet/max_spend.month@cl-a"].value, 2) == 512.50
    assert not by_key["fleet/max_spend.month@cl-a"].breached
    assert round(by_key["fleet/max_projected_spend.month@cl-b"].value, 2) == 2184.00
    assert by_key["fleet/max_projected_spend.month@cl-b"].breached
    assert not by_key["fleet/max_projected_spend.month@cl-a"].breached  # 1742.50 <= 2000
    # Today's projection: cl-b 48 spent + 4.00 x 12 h left = 96.00.
    assert round(by_key["fleet/max_projected_spend.day@cl-b"].value, 2) == 96.00
    assert [j.key for j in report.breaches] == ["fleet/max_projected_spend.month@cl-b"]
    # Within 600 but projected over it: (600 - 512.50) / 2.50 = 35 h after Nov 10 12:00.
    assert by_key["fleet/max_spend.month@cl-a"].sentence == (
        "cl-a: 512.50 USD spent this month (since 2026-11-01), within the limit of "
        "600.00 USD (rule 'fleet'). cl-a reaches its 600 USD month on 2026-11-11."
    )
    assert by_key["fleet/max_spend.month@cl-a"].breach_at == ts("2026-11-11T23:00")
    sentence = by_key["fleet/max_projected_spend.month@cl-b"].sentence
    assert sentence == (
        "cl-b: 2,184.00 USD projected for the month (216.00 USD spent since 2026-11-01, "
        "then 4.00 USD/h to its end), over the limit of 2,000.00 USD (rule 'fleet'). "
        # (2000 - 216) / 4 = 446 h = 18 d 14 h after Nov 10 12:00: Nov 29 02:00.
        "cl-b reaches its 2,000 USD month on 2026-11-29."
    )
    assert report.unmatched == (
        "rule 'nobody': no cluster in the store matches cl-nope-* "
        "(set may_match_nothing = true on the rule if it may)",
    )


def test_each_pattern_that_matches_nothing_is_named_unless_the_rule_may(
    budget_store: Path,
) -> None:
    policy = parse_policy(
        '[[rule]]\nname = "typo"\nclusters = ["cl-a", "cl-infer-prd", "cl-x*"]\n'
        "max_idle_cost = 1\n\n"
        '[[rule]]\nname = "soon"\nclusters = "cl-new-*"\nmax_idle_cost = 1\n'
        "may_match_nothing = true\n"
    )
    with History(budget_store) as h:
        report = judge_policy(policy, h)
    # cl-a matches and is judged; the two other patterns of the rule match nothing.
    assert [j.key for j in report.judgements] == ["typo/max_idle_cost@cl-a"]
    assert report.unmatched == (
        "rule 'typo': no cluster in the store matches cl-infer-prd, cl-x* "
        "(set may_match_nothing = true on the rule if it may)",
    )


def test_may_match_nothing_is_true_or_false() -> None:
    with pytest.raises(PolicyError, match=r"line 3.*may_match_nothing must be true or false"):
        parse_policy('[[rule]]\nmax_idle_cost = 1\nmay_match_nothing = "yes"\n')


def test_window_figures_name_the_costliest_idle_pods(tmp_path: Path) -> None:
    rows = []
    for hour in range(5):
        t = f"2026-11-02T{hour:02d}:00"
        for pod, cost in (("idle-x", 3.0), ("idle-y", 2.0), ("idle-z", 1.0), ("idle-w", 0.5)):
            rows.append(pod_row("cl-idle", t, pod, cost=cost, gpu_util_mean=1.0, gpu_util_max=2.0))
        rows.append(pod_row("cl-idle", t, "busy", cost=3.5, gpu_util_mean=90.0, gpu_util_max=95.0))
    write_store(tmp_path, rows)
    policy = parse_policy(
        '[[rule]]\nname = "idle"\nclusters = "cl-idle"\nwindow = "2h"\n'
        "max_idle_cost = 10\nmax_idle_cost_share = 0.5\nmax_stragglers = 0\n"
    )
    with History(tmp_path) as h:
        report = judge_policy(policy, h)
    by_key = {j.key: j for j in report.judgements}
    # Window 02:00-04:00: idle pods cost 3 + 2 + 1 + 0.5 = 6.5 USD/h for 2 h = 13.00 USD;
    # all pods 10 USD/h x 2 h = 20.00 USD, so the idle share is 0.65.
    idle = by_key["idle/max_idle_cost@cl-idle"]
    assert round(idle.value, 2) == 13.00 and idle.breached
    assert idle.sentence == (
        "cl-idle: idle GPUs cost 13.00 USD in the last 2 h, over the limit of 10.00 USD "
        "(rule 'idle'); costliest idle pods: idle-x 6.00 USD, idle-y 4.00 USD, idle-z 2.00 USD."
    )
    share = by_key["idle/max_idle_cost_share@cl-idle"]
    assert share.value == pytest.approx(0.65) and share.breached
    assert "idle GPUs were 65% of the spend" in share.sentence
    assert by_key["idle/max_stragglers@cl-idle"].value == 0.0


# --------------------------------------------------------------------------- textfile


def test_the_textfile_parses_with_prometheus_client_and_holds_no_secret(
    budget_store: Path, webhook_env: None, tmp_path: Path
) -> None:
    with History(budget_store) as h:
        report = judge_policy(parse_policy(FLEET_POLICY), h)
    snoozed = {"fleet/max_projected_spend.month@cl-b"}
    path = write_textfile(tmp_path / "ccanalytics.prom", report, snoozed)
    text = path.read_text()
    assert SECRET_URL not in text and "hooks.example.com" not in text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["ccanalytics_spend_usd"].type == "gauge"  # it resets each period
    spend = {
        (s.labels["cluster"], s.labels["period"]): s.value
        for s in families["ccanalytics_spend_usd"].samples
    }
    assert spend == {
        ("cl-a", "month"): pytest.approx(512.50),
        ("cl-b", "month"): pytest.approx(216.0),
    }
    assert "ccanalytics_spend_usd{" in text and "_total" not in text
    breached = {
        (s.labels["rule"], s.labels["figure"], s.labels["period"], s.labels["cluster"]): s.value
        for s in families["ccanalytics_breached"].samples
    }
    assert breached[("fleet", "max_projected_spend", "month", "cl-b")] == 1.0
    assert breached[("fleet", "max_spend", "month", "cl-a")] == 0.0
    snooze = {
        s.labels["cluster"]: s.value
        for s in families["ccanalytics_snoozed"].samples
        if s.labels["figure"] == "max_projected_spend" and s.labels["period"] == "month"
    }
    assert snooze == {"cl-a": 0.0, "cl-b": 1.0}
    newest = families["ccanalytics_newest_snapshot_timestamp_seconds"].samples[0].value
    assert newest == pytest.approx(1_794_312_000.0)  # 2026-11-10T12:00Z
    for line in text.splitlines():
        if line.startswith("# HELP") or line.startswith("# TYPE"):
            assert line.split()[2].startswith("ccanalytics_")
    assert render_textfile(report, snoozed) == path.read_bytes()


@pytest.mark.parametrize(
    ("route", "value"),
    [
        ("notify_env", "https://hooks.example.com/secret\r"),  # a CRLF env file's \r
        ("notify_env", "https://hooks example.com/secret"),
        ("notify_env", "https://"),
        ("notify", "https://hooks.example.com/secret\r"),
        ("notify", "https://hooks.example.com/sec ret"),
    ],
)
def test_a_malformed_webhook_route_is_refused_without_quoting_it(
    monkeypatch: pytest.MonkeyPatch, route: str, value: str
) -> None:
    monkeypatch.setenv("CC_CRLF_HOOK", value)
    given = '"CC_CRLF_HOOK"' if route == "notify_env" else json.dumps(value)
    with pytest.raises(PolicyError) as caught:
        parse_policy(f"[[rule]]\nmax_idle_cost = 1\n{route} = {given}\n")
    assert caught.value.key == route and "webhook URL" in str(caught.value)
    assert "secret" not in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("text", "line", "key", "words"), BAD_POLICIES)
def test_a_malformed_policys_message_names_its_key_in_words(
    tmp_path: Path, text: str, line: int | None, key: str, words: str
) -> None:
    # The message itself names the key, not only an attribute ('soon' is not a duration).
    path = tmp_path / "policy.toml"
    path.write_text(text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert re.search(rf"\b{re.escape(key)}\b", str(caught.value)), str(caught.value)

"""``history.check``: what ``ccanalytics check`` runs, used as a library (no CLI).

The store is ``budget_store`` (see budget_store.py): at its newest snapshot cl-a has
spent 512.50 USD this month (over the 500 of rule "cl-a budget") and cl-b is projected
at 2,184.00 USD (over the 2,000 of rule "fleet").
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from ccanalytics.errors import CheckOutputError, PolicyError, StoreError
from ccanalytics.history import check, parse_policy, read_state, snooze

POLICY = """
[[rule]]
name = "fleet"
clusters = "cl-*"
max_projected_spend = { month = 2000 }

[[rule]]
name = "cl-a budget"
clusters = "cl-a"
max_spend = { month = 500 }
"""
HOOK = "http://127.0.0.1:9/hook"


class Poster:
    """Records each message; answers like post_message (None: sent)."""

    def __init__(self, fail: bool = False) -> None:
        self.sent: list[tuple[str, str]] = []
        self.fail = fail

    def __call__(self, url: str, text: str) -> str | None:
        if self.fail:
            return "connection refused"
        self.sent.append((url, text))
        return None


@pytest.fixture
def store(budget_store: Path, tmp_path: Path) -> Path:
    """A copy of the module's budget store (conftest.py): check writes its state and
    snoozes into the store, and a copy costs a tenth of writing the store again."""
    return Path(shutil.copytree(budget_store, tmp_path / "store"))


def test_a_policy_breach_is_judged_and_each_change_posted_once(store: Path) -> None:
    post = Poster()
    run = check(store, policy=parse_policy(POLICY), notify=HOOK, post=post)
    assert run.thresholds is None and run.policy is not None
    assert run.breached and not run.all_snoozed
    assert sorted(j.cluster_id for j in run.policy.breaches) == ["cl-a", "cl-b"]
    assert sorted(text.split()[2] for _, text in post.sent) == ["cl-a:", "cl-b:"]
    assert run.notified is not None and len(run.notified.sent) == 2
    again = check(store, policy=parse_policy(POLICY), notify=HOOK, post=post)
    assert again.breached and len(post.sent) == 2  # no change, no message
    assert HOOK not in (store / "check-state.json").read_text()


def test_flags_and_a_policy_are_judged_together(store: Path) -> None:
    run = check(store, window=timedelta(hours=6), max_idle_cost=0.0, policy=parse_policy(POLICY))
    assert run.thresholds is not None and run.policy is not None
    assert run.thresholds.window == timedelta(hours=6)
    assert run.thresholds.idle_cost == 0.0 and not run.thresholds.breached  # no idle GPU
    assert run.breached  # the policy's budgets


def test_breaches_of_snoozed_rules_only_are_all_snoozed(store: Path) -> None:
    for rule in ("fleet", "cl-a budget"):
        snooze(store, rule, duration=timedelta(hours=4), who="alice", why="load test")
    post = Poster()
    run = check(store, policy=parse_policy(POLICY), notify=HOOK, post=post)
    assert run.breached and run.all_snoozed and post.sent == []
    flags = check(store, limits={"max_spend": {"month": 0}}, policy=parse_policy(POLICY))
    assert flags.breached and not flags.all_snoozed  # the flags' threshold never snoozes


def test_a_textfile_that_cannot_be_written_is_kept_and_the_alerts_still_go(
    store: Path, tmp_path: Path
) -> None:
    post = Poster()
    target = tmp_path / "missing" / "cc.prom"
    run = check(store, policy=parse_policy(POLICY), notify=HOOK, textfile=target, post=post)
    assert isinstance(run.textfile_error, CheckOutputError)
    assert str(target) in str(run.textfile_error)
    assert len(post.sent) == 2


def test_a_failed_post_is_reported_and_retried_next_run(store: Path) -> None:
    run = check(store, policy=parse_policy(POLICY), notify=HOOK, post=Poster(fail=True))
    assert run.notified is not None
    assert [reason for _, reason in run.notified.failed] == ["connection refused"] * 2
    post = Poster()
    check(store, policy=parse_policy(POLICY), notify=HOOK, post=post)
    assert len(post.sent) == 2
    assert all(entry["notified"] for entry in read_state(store).alerts.values())


def test_a_policy_file_is_read(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "budgets.toml"
    path.write_text(POLICY)
    assert check(store, policy=path).breached
    path.write_text("[[rule]]\nname = 1\n")
    with pytest.raises(PolicyError):
        check(store, policy=path)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({}, "at least one threshold"),
        ({"max_idle_cost": 1.0, "textfile": "x.prom"}, "give policy="),
        ({"max_idle_cost": 1.0, "notify": HOOK + "\r"}, "notify"),
    ],
)
def test_bad_arguments_are_value_errors(store: Path, kwargs: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words) as caught:
        check(store, **kwargs)  # type: ignore[arg-type]
    assert "127.0.0.1" not in str(caught.value)  # a webhook URL is a secret


def test_an_empty_store_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        check(tmp_path, max_idle_cost=1.0)

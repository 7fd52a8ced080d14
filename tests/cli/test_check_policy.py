"""``ccanalytics check --policy``: budgets per cluster, routed alerts, snoozes, a textfile.

The store is ``budget_store`` (tests/budget_store.py): at its newest snapshot
cl-a has spent 512.50 USD this month (projected 1742.50), cl-b 216.00 (projected 2184.00).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from budget_store import write_budget_store
from loopback import Receiver, webhook_receiver
from prometheus_client.parser import text_string_to_metric_families

from ccanalytics.cli import main

POLICY = """
[[rule]]
name = "fleet"
clusters = "cl-*"
max_projected_spend = { month = 2000 }
notify_env = "CC_FLEET_HOOK"

[[rule]]
name = "cl-a budget"
clusters = "cl-a"
max_spend = { month = 500 }
notify_env = "CC_A_HOOK"
"""


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Receiver]]:
    """Two loopback receivers, one per rule, named by environment variables."""
    with contextlib.ExitStack() as stack:
        found = {}
        for env in ("CC_FLEET_HOOK", "CC_A_HOOK"):
            found[env] = stack.enter_context(webhook_receiver(f"/{env.lower()}"))
            monkeypatch.setenv(env, found[env].url)
        yield found


@pytest.fixture(scope="module")
def budget_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The budget store, written once per module and never changed."""
    return write_budget_store(tmp_path_factory.mktemp("budget"))


@pytest.fixture
def store(budget_store: Path, tmp_path: Path) -> Path:
    """A copy of the module's budget store: check writes its state and snoozes into the
    store, and a copy costs a hundredth of writing the store again (3 ms, not 0.24 s)."""
    return Path(shutil.copytree(budget_store, tmp_path / "store"))


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(POLICY)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["check", *argv])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_breaches_print_one_sentence_each_and_route_to_their_rule(
    store: Path, policy: Path, hooks: dict[str, Receiver], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "--store", str(store), "--policy", str(policy))
    assert code == 3, err
    assert out.splitlines() == [
        "cl-b: 2,184.00 USD projected for the month (216.00 USD spent since 2026-11-01, then "
        "4.00 USD/h to its end), over the limit of 2,000.00 USD (rule 'fleet'). "
        "cl-b reaches its 2,000 USD month on 2026-11-29.",  # (2000 - 216) / 4 h on
        "cl-a: 512.50 USD spent this month (since 2026-11-01), over the limit of 500.00 USD "
        "(rule 'cl-a budget').",
    ]
    assert [len(h.bodies) for h in hooks.values()] == [1, 1]
    assert "cl-b" in hooks["CC_FLEET_HOOK"].texts()[0]
    assert "cl-a" in hooks["CC_A_HOOK"].texts()[0]
    assert _run(capsys, "--store", str(store), "--policy", str(policy))[0] == 3
    assert [len(h.bodies) for h in hooks.values()] == [1, 1]  # still breached: no message
    state = (store / "check-state.json").read_text()
    assert "127.0.0.1" not in state  # the webhook URLs are secrets


def test_a_snoozed_rule_prints_marked_sends_nothing_and_exits_4(
    store: Path, policy: Path, hooks: dict[str, Receiver], capsys: pytest.CaptureFixture[str]
) -> None:
    for rule in ("fleet", "cl-a budget"):
        code, out, _ = _run(
            capsys, "--store", str(store), "--policy", str(policy),
            "--snooze", rule, "--for", "4h", "--who", "alice", "--why", "load test",
        )  # fmt: skip
        assert code == 0 and f"Rule {rule!r} snoozed until" in out and "by alice: load test" in out
    code, out, _ = _run(capsys, "--store", str(store), "--policy", str(policy))
    assert code == 4
    assert all("(snoozed until" in line for line in out.splitlines()) and len(out.splitlines()) == 2
    assert [len(h.bodies) for h in hooks.values()] == [0, 0]


def test_a_snooze_of_an_unknown_rule_is_bad_usage(
    store: Path, policy: Path, hooks: dict[str, Receiver], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        capsys, "--store", str(store), "--policy", str(policy), "--snooze", "nope", "--for", "1h"
    )
    assert code == 2 and "no rule 'nope'" in err and "fleet" in err


def test_a_malformed_policy_is_one_line_and_exit_2_before_judging(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\nclusters = "cl-*"\nmax_spend = { month = -3 }\n')
    code, out, err = _run(capsys, "--store", str(store), "--policy", str(bad))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{bad}, line 3" in err and "0 or more" in err
    assert not (store / "check-state.json").exists()


def test_an_unset_webhook_variable_is_exit_2(
    store: Path, policy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CC_FLEET_HOOK", raising=False)
    code, _, err = _run(capsys, "--store", str(store), "--policy", str(policy))
    assert code == 2 and "CC_FLEET_HOOK (notify_env) is not set" in err


def test_a_rule_matching_no_cluster_is_exit_2_after_the_others_are_judged_and_sent(
    store: Path, tmp_path: Path, hooks: dict[str, Receiver], capsys: pytest.CaptureFixture[str]
) -> None:
    # A typo (cl-infer-prd) would check nothing, every run: cron must hear of it, and
    # the rules that do match still alert (cl-a has spent 512.50 of 500).
    path = tmp_path / "p.toml"
    path.write_text(
        '[[rule]]\nclusters = "cl-infer-prd"\nmax_idle_cost = 1\n\n'
        '[[rule]]\nname = "cl-a budget"\nclusters = "cl-a"\nmax_spend = { month = 500 }\n'
        'notify_env = "CC_A_HOOK"\n'
    )
    code, out, err = _run(capsys, "--store", str(store), "--policy", str(path))
    assert code == 2
    assert out.startswith("cl-a: 512.50 USD spent this month") and len(out.splitlines()) == 1
    assert err == (
        "ccanalytics check: rule 'cl-infer-prd': no cluster in the store matches "
        "cl-infer-prd (set may_match_nothing = true on the rule if it may)\n"
    )
    assert len(hooks["CC_A_HOOK"].bodies) == 1


def test_a_rule_that_may_match_nothing_is_judged_quietly(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        '[[rule]]\nclusters = "cl-infer-*"\nmax_idle_cost = 1\nmay_match_nothing = true\n'
    )
    assert _run(capsys, "--store", str(store), "--policy", str(path)) == (0, "", "")


def test_a_budget_far_from_reached_holds_and_exits_0(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its crossing, (1e8 - 1742.50) / 6.50 h away, is centuries past the month's end.
    path = tmp_path / "p.toml"
    path.write_text('[[rule]]\nclusters = "cl-*"\nmax_projected_spend = { month = 100000000 }\n')
    code, out, err = _run(capsys, "--store", str(store), "--policy", str(path))
    assert (code, out, err) == (0, "", "")


def test_the_textfile_holds_the_judged_figures(
    store: Path, policy: Path, hooks: dict[str, Receiver], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    target = tmp_path / "ccanalytics.prom"
    code, _, _ = _run(
        capsys, "--store", str(store), "--policy", str(policy), "--textfile", str(target)
    )
    assert code == 3
    families = {f.name: f for f in text_string_to_metric_families(target.read_text())}
    projected = {
        s.labels["cluster"]: s.value for s in families["ccanalytics_projected_spend_usd"].samples
    }
    assert projected == {"cl-a": pytest.approx(1742.50), "cl-b": pytest.approx(2184.00)}
    assert "127.0.0.1" not in target.read_text()


@pytest.mark.parametrize(
    "argv",
    [
        ["--textfile", "x.prom", "--max-idle-cost", "3"],
        ["--notify", "https://hooks.example.com/secret\r", "--max-idle-cost", "3"],
        ["--snooze", "fleet", "--max-idle-cost", "3"],
        ["--for", "1h", "--max-idle-cost", "3"],
        ["--outptu", "x"],
    ],
)
def test_bad_usage_is_one_line_and_exit_2(
    store: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "--store", str(store), *argv)
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err and "secret" not in err


def test_a_state_that_cannot_be_saved_is_exit_1_and_posts_nothing_twice(
    store: Path, policy: Path, hooks: dict[str, Receiver],
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr("ccanalytics.history.store._fs.LocalLocation.replace", read_only)
    for _ in range(2):
        code, _, err = _run(capsys, "--store", str(store), "--policy", str(policy))
        assert code == 1 and "cannot save the alert state" in err
    assert [len(h.bodies) for h in hooks.values()] == [0, 0]
    monkeypatch.undo()  # the store is writable again: each change is sent, once
    monkeypatch.setenv("CC_FLEET_HOOK", hooks["CC_FLEET_HOOK"].url)
    monkeypatch.setenv("CC_A_HOOK", hooks["CC_A_HOOK"].url)
    for _ in range(2):
        assert _run(capsys, "--store", str(store), "--policy", str(policy))[0] == 3
    assert [len(h.bodies) for h in hooks.values()] == [1, 1]


@pytest.mark.parametrize("where", ["missing-folder/x.prom", "a-file/x.prom", "."])
def test_a_textfile_that_cannot_be_written_is_one_line_and_exit_1(
    store: Path, policy: Path, hooks: dict[str, Receiver], tmp_path: Path,
    capsys: pytest.CaptureFixture[str], where: str,
) -> None:  # fmt: skip
    (tmp_path / "a-file").write_text("not a folder")
    target = tmp_path / where
    code, _, err = _run(
        capsys, "--store", str(store), "--policy", str(policy), "--textfile", str(target)
    )
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccanalytics check: cannot write the textfile")
    assert str(target) in lines[0]

"""The report with a policy opens with the budget status, with check's figures to the cent.

The store is ``budget_store`` (tests/budget_store.py): this month cl-a and cl-b
have spent 512.50 + 216.00 = 728.50 USD; at 2.50 + 4.00 = 6.50 USD/h for the 492 h left,
the month reaches 728.50 + 3198.00 = 3926.50 USD.
"""

from __future__ import annotations

from html import unescape
from pathlib import Path

import pytest
from budget_store import write_budget_store

from ccanalytics.cli import main
from ccanalytics.report import write_report
from ccanalytics.sandbox import Sandbox

POLICY = '[[rule]]\nname = "month"\nclusters = "cl-*"\nmax_projected_spend = { month = 2000 }\n'


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    return write_budget_store(tmp_path / "store"), policy


@pytest.mark.slow
def test_the_report_opens_with_the_budget_status(setup: tuple[Path, Path], tmp_path: Path) -> None:
    store, policy = setup
    out = tmp_path / "r.html"
    with Sandbox() as sb, sb.client() as client:
        summary = write_report(["cl-infer-prod"], out, client=client, store=store, policy=policy)
    html = out.read_text()
    month = (
        "This month 728.50 USD spent (since 2026-11-01); at the current 6.50 USD/h it "
        "reaches 3,926.50 USD by 2026-12-01."
    )
    assert month in html and month in str(summary)
    assert "1 budget rule breached." in html
    assert html.index('id="budget"') < html.index('id="window"')
    assert "cl-b: 2,184.00 USD projected for the month" in html
    assert "cl-a: 1,742.50" not in html  # within its limit: not listed


def test_a_policy_needs_a_store(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="store"):
        write_report(["cl-a"], tmp_path / "r.html", policy=tmp_path / "p.toml")


def test_the_command_refuses_a_policy_without_a_store_and_a_bad_policy(
    setup: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, _ = setup
    out = str(tmp_path / "r.html")
    assert main(["report", "--sandbox", "-o", out, "--policy", "p.toml"]) == 2
    bad = tmp_path / "bad.toml"
    bad.write_text("[[rule]]\nmax_spend = 3\n")
    assert (
        main(["report", "--sandbox", "-o", out, "--store", str(store), "--policy", str(bad)]) == 2
    )
    err = capsys.readouterr().err
    assert "--policy needs --store" in err and f"{bad}, line 2: max_spend must be a table" in err
    assert not Path(out).exists()


@pytest.mark.slow
def test_a_rule_that_checks_nothing_is_named_in_the_report(tmp_path: Path) -> None:
    """A typo in a rule's clusters checks nothing: ``check`` exits 2 for it, and the
    report says so where the budget status is, not "every budget rule holds"."""
    store = write_budget_store(tmp_path / "store")
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY.replace('"cl-*"', '["cl-a", "cl-infer-prd"]'))
    out = tmp_path / "r.html"
    with Sandbox() as sb, sb.client() as client:
        summary = write_report(["cl-infer-prod"], out, client=client, store=store, policy=policy)
    page = unescape(out.read_text())
    said = "rule 'month': no cluster in the store matches cl-infer-prd"
    assert said in page and said in str(summary)
    assert "Every budget rule holds; 1 rule checks nothing." in page

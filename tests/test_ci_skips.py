"""Under CI=true a skip for a reason tests/README.md does not list fails the run (a machine
without ssh-keygen once skipped 75 key tests and passed)."""

from __future__ import annotations

import ci_skips
import pytest

SUITE = """
import pytest

def test_runs():
    pass

def test_documented():
    pytest.skip("no Python example on this page")

@pytest.mark.skipif(True, reason="ssh-keygen is not installed")
def test_needs_a_tool():
    pass
"""
CONFTEST = "import ci_skips\n\ndef pytest_configure(config):\n    ci_skips.register(config)\n"


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def test_an_undocumented_skip_fails_a_ci_run_and_is_named(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    result = suite.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*skips not allowed in CI*", "test_suite.py::test_needs_a_tool: ssh-keygen is not*"]
    )
    assert "test_documented:" not in result.stdout.str()


def test_outside_ci_a_skip_is_only_reported(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    result = suite.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2)
    assert result.ret == pytest.ExitCode.OK


def test_the_allowed_reasons_are_the_readmes_list() -> None:
    allowed = ci_skips.allowed_skips()
    assert "no Python example on this page" in allowed
    assert "no Chromium (apt-get install chromium) for the layout check" in allowed
    assert not any("ssh-keygen is not installed".startswith(reason) for reason in allowed)

"""Under ``CI=true``, a test that skips for a reason tests/README.md does not list fails the
run: a machine missing a tool (ssh-keygen, node, openssl) must not pass with the tests
that need it quietly skipped. The allowed reasons are the README's list, its one home."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).with_name("README.md")
SECTION = "## Skips allowed in CI"

__all__ = ["UndocumentedSkips", "allowed_skips", "register"]


def allowed_skips(readme: Path = README) -> list[str]:
    """The reasons listed (as ``- `reason` ...`` items) under the README's section."""
    section = readme.read_text(encoding="utf-8").split(SECTION, 1)[1]
    return re.findall(r"^- `([^`]+)`", section.split("\n## ", 1)[0], re.M)


class UndocumentedSkips:
    """The plugin: remembers each skip whose reason starts with no allowed one, lists them
    after the run and makes its exit status 1. Under xdist it runs in the controller,
    which sees every worker's reports."""

    def __init__(self, allowed: list[str]) -> None:
        self.allowed = allowed
        self.found: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        if not any(reason.startswith(allowed) for allowed in self.allowed):
            self.found.append(f"{report.nodeid}: {reason}")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.found and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.found:
            terminalreporter.section("skips not allowed in CI (tests/README.md)", red=True)
            for line in self.found:
                terminalreporter.line(line)


def register(config: pytest.Config) -> None:
    """Install the plugin when ``CI`` is ``true`` (in the controller only, under xdist)."""
    if os.environ.get("CI", "").lower() == "true" and not hasattr(config, "workerinput"):
        config.pluginmanager.register(UndocumentedSkips(allowed_skips()), "undocumented-skips")

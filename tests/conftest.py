"""Shared fixtures: the sandbox over real loopback HTTP, fast retries, secret scanning."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ccanalytics.sandbox import FULL_ACCESS_KEY, Sandbox, SandboxApp


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """A fresh sandbox (default seed, generous quotas) served on a free 127.0.0.1 port."""
    with Sandbox() as sb:
        yield sb


@pytest.fixture
def make_sandbox() -> Iterator[object]:
    """Factory for sandboxes with custom quotas, latency or faults; all stopped at teardown."""
    started: list[Sandbox] = []

    def make(**options: object) -> Sandbox:
        sb = Sandbox(SandboxApp(**options)).start()  # type: ignore[arg-type]
        started.append(sb)
        return sb

    yield make
    for sb in started:
        sb.stop()


@pytest.fixture
def client(sandbox: Sandbox) -> Iterator[object]:
    """A Client on the loopback sandbox, with full access."""
    with sandbox.client() as c:
        yield c


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrink backoff delays so retry tests take milliseconds, not seconds."""
    import ccanalytics.api._retry as retry

    monkeypatch.setattr(retry, "INITIAL_RETRY_DELAY", 0.01)
    monkeypatch.setattr(retry, "MAX_RETRY_DELAY", 0.05)


@pytest.fixture
def api_key() -> str:
    return FULL_ACCESS_KEY


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    """Close matplotlib figures a test left open (only if matplotlib was imported)."""
    yield
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")

"""The commands on a store in ``s3://`` (the local S3 server of tests/s3server.py):
``collect``, ``report`` and ``check`` take the address; ``check``'s alert state lives in
the bucket, so a second run notifies nothing new."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from loopback import webhook_receiver

from ccanalytics import collect
from ccanalytics.history.store._fs import open_store
from ccanalytics.sandbox import EXEMPT_KEY, Sandbox, SandboxApp, SimulatedClock

# Whole commands over the local S3 server: seconds each. The library's S3 paths they
# take are in tests/history/store/test_backends.py's fast tests too.
pytestmark = pytest.mark.slow

CLUSTERS = ["cl-infer-prod", "cl-llama70b-train", "cl-bringup"]


def _fill(store: str, snapshots: int) -> None:
    clock = SimulatedClock(datetime(2026, 11, 20, 10, tzinfo=UTC))
    with Sandbox(SandboxApp(clock=clock)) as sb, sb.client(EXEMPT_KEY) as client:
        for _ in range(snapshots):
            collect(CLUSTERS, store, client=client, trust_service_clock=True)
            clock.advance(timedelta(minutes=5))


def _hidden(store: str) -> list[str]:
    """The dot-named objects of the store's prefix (markers, locks, the alert state)."""
    import boto3

    bucket, prefix = store.removeprefix("s3://").split("/", 1)
    listed = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/")
    names = [o["Key"].rsplit("/", 1)[-1] for o in listed.get("Contents", ())]
    return sorted(n for n in names if n.startswith("."))


def test_check_keeps_its_alert_state_in_s3_and_notifies_once(
    s3_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from ccanalytics.cli import main
    from ccanalytics.history.alerts._alerts import STATE_FILE, read_state

    with webhook_receiver() as hook:
        _fill(s3_store, snapshots=3)
        argv = ["check", "--store", s3_store, "--max-stragglers", "0", "--notify", hook.url]
        assert [main(argv) for _ in range(2)] == [3, 3]
    assert len(hook.bodies) == 1  # the change, once: the second run read the state from S3
    location = open_store(s3_store)
    assert location.read_bytes(location.root / STATE_FILE)
    assert read_state(s3_store).alerts
    assert ".check-state.lock" not in _hidden(s3_store)  # the lock object was released
    capsys.readouterr()


def test_the_cli_collects_reports_and_checks_an_s3_store(
    s3_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ccanalytics.cli import main

    assert main(["collect", "cl-infer-prod", "--store", s3_store, "--sandbox"]) == 0
    out = tmp_path / "report.html"
    assert main(["report", "cl-infer-prod", "--sandbox", "-o", str(out), "--store", s3_store]) == 0
    assert out.stat().st_size > 0
    assert main(["check", "--store", s3_store, "--max-idle-cost", "1000000"]) == 0
    assert "Traceback" not in capsys.readouterr().err

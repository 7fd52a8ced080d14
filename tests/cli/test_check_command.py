"""``ccanalytics check``: exit codes, one sentence per breach, History's figures to the cent,
and edge-triggered notifications to a real HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, ts, write_store
from loopback import Receiver, webhook_receiver

from ccanalytics.cli import main
from ccanalytics.history import History
from ccanalytics.history.alerts._alerts import STATE_FILE


def _snapshots(start: str, count: int, *, idle: bool, straggler: bool) -> list[dict[str, object]]:
    """``count`` 5-minute snapshots of a 6-rank cluster and a 2-pod inference cluster."""
    rows = []
    for i in range(count):
        when = str(ts(start) + pd.Timedelta(minutes=5 * i))
        for rank in range(6):
            util = 20.0 if straggler and rank == 3 else 90.0
            rows.append(
                pod_row(
                    "cl-train",
                    when,
                    f"t{rank}",
                    rank=rank,
                    cost=12.0,
                    gpu_util_mean=util,
                    gpu_util_max=util + 3,
                )
            )
        for pod in range(2):
            util = 1.0 if idle else 70.0
            rows.append(
                pod_row(
                    "cl-infer",
                    when,
                    f"i{pod}",
                    cost=4.5,
                    gpu_count=1,
                    gpu_util_mean=util,
                    gpu_util_max=util + 1,
                )
            )
    return rows


@pytest.fixture(scope="module")
def breached(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An hour of an idle pod and a straggler, written once per module and never read."""
    folder = tmp_path_factory.mktemp("breached")
    write_store(folder, _snapshots("2026-04-01 10:00", 13, idle=True, straggler=True))
    return folder


@pytest.fixture
def breached_store(breached: Path, tmp_path: Path) -> Path:
    """A copy of it per test: check keeps its state in the store, readers their caches."""
    return Path(shutil.copytree(breached, tmp_path / "store"))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_breach_exits_3_with_one_sentence_each(
    breached_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(
        capsys,
        "--store",
        str(breached_store),
        "--window",
        "1h",
        "--max-idle-cost",
        "5",
        "--max-stragglers",
        "0",
    )
    assert code == 3
    lines = out.splitlines()
    assert len(lines) == 2
    # The flags are one rule over every cluster, judged as a policy's rules are.
    assert lines[0].startswith(
        "all clusters: idle GPUs cost 9.00 USD in the last 1 h, over the limit of 5.00 USD"
    )
    assert "costliest idle pods: i0 4.50 USD, i1 4.50 USD" in lines[0]
    assert lines[1].startswith(
        "all clusters: 1 rank straggled in the last 1 h, over the limit of 0"
    )


def test_the_idle_cost_printed_is_historys_to_the_cent(
    breached_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with History(breached_store) as history:
        expected = history.idle_cost(timedelta(hours=1), by=None)["idle_cost"].iloc[0]
    # 2 pods x 4.5 USD/h x 60 min (12 intervals of 5 min in the last hour)
    assert round(expected, 2) == 9.00
    code, out, _ = _run(
        capsys, "--store", str(breached_store), "--window", "30min", "--max-idle-cost", "0"
    )
    with History(breached_store) as history:
        half = history.idle_cost(timedelta(minutes=30), by=None)["idle_cost"].iloc[0]
    assert code == 3 and f"idle GPUs cost {half:,.2f} USD in the last 30 min" in out


def test_thresholds_that_hold_exit_0_silently(
    breached_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(
        capsys, "--store", str(breached_store), "--max-idle-cost", "100", "--max-stragglers", "1"
    )
    assert (code, out, err) == (0, "", "")
    code, out, _ = _run(capsys, "--store", str(breached_store), "--max-idle-cost", "100", "-v")
    assert code == 0 and out.startswith("Over the last 1 h (to 2026-04-01 11:00 UTC)")


def test_an_empty_or_missing_store_is_a_store_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "--store", str(tmp_path / "none"), "--max-idle-cost", "1")
    assert code == 1 and out == "" and "holds no snapshot" in err


def test_a_corrupt_store_is_a_store_failure(
    breached_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = next((breached_store / "pods").rglob("*.parquet"))
    bad.write_bytes(b"not parquet at all")
    code, _, err = _run(capsys, "--store", str(breached_store), "--max-idle-cost", "1")
    assert code == 1 and str(bad) in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--max-idle-cost", "1"],  # no --store
        ["--store", "S"],  # no threshold
        ["--store", "S", "--max-idle-cost", "-1"],
        ["--store", "S", "--max-idle-cost", "nan"],
        ["--store", "S", "--max-stragglers", "1.5"],
        ["--store", "S", "--max-idle-cost", "1", "--window", "soon"],
        ["--store", "S", "--max-idle-cost", "1", "--window", "-1h"],
        ["--store", "S", "--max-idle-cost", "1", "--notify", "ftp://x"],
    ],
)
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["check", *argv])
    except SystemExit as exit_:  # argparse
        code = int(exit_.code or 0)
    assert code == 2
    assert "Traceback" not in capsys.readouterr().err


# ---- notifications -------------------------------------------------------------------


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as hook:
        yield hook


def test_notify_only_when_the_state_changes(
    tmp_path: Path,
    receiver: Receiver,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = receiver.url
    argv = ["--store", str(tmp_path), "--max-idle-cost", "5", "--notify", url]
    write_store(tmp_path, _snapshots("2026-04-01 10:00", 13, idle=False, straggler=False))
    assert _run(capsys, *argv)[0] == 0
    assert receiver.bodies == []  # fine from the start: nothing to say

    write_store(tmp_path, _snapshots("2026-04-01 11:05", 13, idle=True, straggler=False))
    assert _run(capsys, *argv)[0] == 3
    assert len(receiver.bodies) == 1
    text = str(receiver.bodies[0]["text"])
    assert text.startswith("ccanalytics check: breached.") and "9.00 USD" in text

    assert _run(capsys, *argv)[0] == 3
    assert len(receiver.bodies) == 1  # still breached: no second message

    write_store(tmp_path, _snapshots("2026-04-01 12:10", 13, idle=False, straggler=False))
    assert _run(capsys, *argv)[0] == 0
    assert len(receiver.bodies) == 2
    assert str(receiver.bodies[1]["text"]).startswith("ccanalytics check: fine again.")
    assert _run(capsys, *argv)[0] == 0
    assert len(receiver.bodies) == 2

    state = json.loads((tmp_path / STATE_FILE).read_text())
    assert [entry["state"] for entry in state["alerts"].values()] == ["fine"]
    assert url not in (tmp_path / STATE_FILE).read_text()  # the URL is a secret
    # Besides the data, only the state and its (hidden) lock file, and the readers'
    # cache of vetted files (history.store._vetted).
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".check-state.lock",
        ".vetted.json",
        "check-state.json",
        "gpus",
        "pods",
    ]


def test_a_failed_notification_is_sent_again_next_run(
    breached_store: Path,
    receiver: Receiver,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = receiver.url
    argv = ["--store", str(breached_store), "--max-idle-cost", "5", "--notify", url]
    receiver.status = 500
    code, _, err = _run(capsys, *argv)
    # The alert reached no one: the network failed, 1, not 3.
    assert code == 1 and "notification failed: HTTP 500" in err and url not in err
    receiver.status = 200
    assert _run(capsys, *argv)[0] == 3
    assert len(receiver.bodies) == 2  # the failed one, then the retry
    assert _run(capsys, *argv)[0] == 3
    assert len(receiver.bodies) == 2


def test_each_set_of_thresholds_keeps_its_own_state(
    breached_store: Path,
    receiver: Receiver,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = receiver.url
    base = ["--store", str(breached_store), "--notify", url]
    assert _run(capsys, *base, "--max-idle-cost", "5")[0] == 3
    assert _run(capsys, *base, "--max-stragglers", "0")[0] == 3
    assert len(receiver.bodies) == 2  # two checks, each breached for the first time


@pytest.mark.parametrize(
    "content",
    [
        "[" * 100_000 + "]" * 100_000,  # nested past the parser's recursion limit
        '{"version": 2, "alerts": {"k": "breached"}}',  # a wrong type
        '{"version": 2, "alerts": {}, "snoozes": {"r": {"until": "9999-12-31T23:59:59-23:59"}}}',
    ],
    ids=["deep", "wrong type", "date overflow"],
)
def test_a_hostile_state_file_is_one_line_and_exit_1(
    breached_store: Path,
    receiver: Receiver,
    capsys: pytest.CaptureFixture[str],
    content: str,
) -> None:
    url = receiver.url
    (breached_store / STATE_FILE).write_text(content)
    argv = ["--store", str(breached_store), "--max-idle-cost", "5", "--notify", url]
    code, _, err = _run(capsys, *argv)
    assert code == 1 and "Traceback" not in err
    last = err.splitlines()[-1]  # after the breach's summary: the failure, in one line
    assert last.startswith("ccanalytics check: ") and STATE_FILE in last and url not in err
    assert receiver.bodies == []  # nothing posted that could not be remembered
    assert (breached_store / STATE_FILE).read_text() == content  # left for a person


def test_a_webhook_variable_with_a_stray_carriage_return_is_one_line_and_exit_2(
    breached_store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CRLF env file leaves "\r" at the end of the URL the policy's notify_env names.
    monkeypatch.setenv("CC_CRLF_HOOK", "https://hooks.example.com/services/secret\r")
    policy = breached_store.parent / "policy.toml"
    policy.write_text('[[rule]]\nname = "idle"\nmax_idle_cost = 1\nnotify_env = "CC_CRLF_HOOK"\n')
    try:
        code, out, err = _run(capsys, "--store", str(breached_store), "--policy", str(policy))
    except SystemExit as exit_:  # never: the usage error is returned, not raised
        pytest.fail(f"SystemExit {exit_.code}")
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.count("\n") == 1 and "CC_CRLF_HOOK" in err and "secret" not in err


def test_a_state_that_cannot_be_saved_is_exit_1_and_is_posted_once_when_it_can(
    breached_store: Path,
    receiver: Receiver,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:

    url = receiver.url
    argv = ["--store", str(breached_store), "--max-idle-cost", "5", "--notify", url]

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr("ccanalytics.history.store._fs.LocalLocation.replace", read_only)
    for _ in range(2):  # cron's next run finds the store as read-only as before
        code, _, err = _run(capsys, *argv)
        assert code == 1 and "cannot save the alert state" in err.splitlines()[-1]
    assert receiver.bodies == []  # nothing posted that could not be remembered
    monkeypatch.undo()
    assert [_run(capsys, *argv)[0] for _ in range(2)] == [3, 3]
    assert len(receiver.bodies) == 1  # the change, once

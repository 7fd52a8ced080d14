"""Alert state: edge-triggered, one message per change under concurrency, snoozes, deadlines."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ccanalytics.errors import StoreError
from ccanalytics.history.alerts._alerts import (
    STATE_FILE,
    Alert,
    notify_on_change,
    post_message,
    read_state,
    snooze,
    webhook_problem,
)

URL = "https://hooks.example.com/services/T0/B0/secret-token"
T0 = datetime(2026, 11, 10, 12, tzinfo=UTC)


class Receiver:
    """A fake POST that records what it was asked to send."""

    def __init__(self, ok: bool = True, delay: float = 0.0) -> None:
        self.ok, self.delay = ok, delay
        self.sent: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, url: str, text: str) -> str | None:
        time.sleep(self.delay)
        with self._lock:
            self.sent.append((url, text))
        return None if self.ok else "HTTP 500"


def _alert(breached: bool, key: str = "rule/max_idle_cost@cl-a", rule: str = "rule") -> Alert:
    return Alert(key, breached, "breached" if breached else "fine again", URL, rule)


def test_a_message_is_sent_only_when_the_state_changes(tmp_path: Path) -> None:
    post = Receiver()
    for breached in (False, True, True, True, False, False):
        notify_on_change(tmp_path, [_alert(breached)], now=T0, post=post)
    assert [text for _, text in post.sent] == ["breached", "fine again"]
    saved = json.loads((tmp_path / STATE_FILE).read_text())
    assert saved["alerts"]["rule/max_idle_cost@cl-a"]["state"] == "fine"
    assert URL not in (tmp_path / STATE_FILE).read_text()


def test_overlapping_runs_send_one_message_for_one_change(tmp_path: Path) -> None:
    post = Receiver(delay=0.2)  # each POST slow enough for the runs to overlap
    runs = [
        threading.Thread(
            target=notify_on_change,
            args=(tmp_path, [_alert(True)]),
            kwargs={"now": T0, "post": post},
        )
        for _ in range(3)
    ]
    for run in runs:
        run.start()
    for run in runs:
        run.join(10)
    assert len(post.sent) == 1


_PROCESS_RUN = """
import sys, time
from datetime import UTC, datetime
from pathlib import Path
from ccanalytics.history.alerts._alerts import Alert, notify_on_change
store, key = Path(sys.argv[1]), sys.argv[2]
def post(url, text):
    time.sleep(0.3)  # slow enough for the other processes to be waiting on the lock
    with open(store / "posted.txt", "a") as log:
        log.write(key + "\\n")
notify_on_change(store, [Alert(key, True, "breached", "https://example.invalid/x")],
                 now=datetime(2026, 11, 10, 12, tzinfo=UTC), post=post)
"""


@pytest.mark.parametrize("keys", [["k", "k", "k"], ["a", "b", "c"]], ids=["one check", "three"])
def test_processes_share_the_lock(tmp_path: Path, keys: list[str]) -> None:
    # Separate processes (cron's overlapping runs): one message per change, no state lost.
    runs = [
        subprocess.Popen([sys.executable, "-c", _PROCESS_RUN, str(tmp_path), key]) for key in keys
    ]
    assert [run.wait(60) for run in runs] == [0, 0, 0]
    posted = (tmp_path / "posted.txt").read_text().split()
    assert sorted(posted) == sorted(set(keys))
    assert set(read_state(tmp_path).alerts) == set(keys)


def test_two_checks_keep_each_others_state(tmp_path: Path) -> None:
    post = Receiver()
    a, b = _alert(True, key="a"), _alert(True, key="b")
    threads = [
        threading.Thread(
            target=notify_on_change, args=(tmp_path, [x]), kwargs={"now": T0, "post": post}
        )
        for x in (a, b)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert set(read_state(tmp_path).alerts) == {"a", "b"}


def test_a_failed_post_is_retried_by_the_next_run(tmp_path: Path) -> None:
    notify_on_change(tmp_path, [_alert(True)], now=T0, post=Receiver(ok=False))
    assert read_state(tmp_path).alerts["rule/max_idle_cost@cl-a"]["notified"] is False
    post = Receiver()
    outcome = notify_on_change(tmp_path, [_alert(True)], now=T0, post=post)
    assert outcome.sent == ("rule/max_idle_cost@cl-a",) and len(post.sent) == 1
    notify_on_change(tmp_path, [_alert(True)], now=T0, post=post)
    assert len(post.sent) == 1


def test_a_state_that_cannot_be_saved_posts_nothing_and_never_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr("ccanalytics.history.store._local.LocalLocation.replace", read_only)
    post = Receiver()
    for _ in range(3):
        with pytest.raises(StoreError, match="cannot save the alert state"):
            notify_on_change(tmp_path, [_alert(True)], now=T0, post=post)
    assert post.sent == []
    monkeypatch.undo()
    notify_on_change(tmp_path, [_alert(True)], now=T0, post=post)
    notify_on_change(tmp_path, [_alert(True)], now=T0, post=post)
    assert len(post.sent) == 1


@pytest.mark.parametrize(
    "content",
    [
        "[" * 100_000 + "]" * 100_000,  # nested past the parser's recursion limit
        '{"version": 2, "alerts": [], "snoozes": {}}',
        '{"version": 2, "alerts": {"k": {"state": "maybe"}}}',
        '{"version": 2, "alerts": {}, "snoozes": {"r": {"until": 5}}}',
        '"just a string"',
        "{not json",
        # A snooze ending at a date past what Python's dates can hold in UTC.
        '{"version": 2, "alerts": {}, "snoozes": {"r": {"until": "9999-12-31T23:59:59-23:59"}}}',
        '{"version": 2, "alerts": {}, "snoozes": {"r": {"until": "0001-01-01T00:00:00+23:59"}}}',
    ],
)
def test_a_foreign_or_corrupt_state_is_a_store_error_and_is_left_alone(
    tmp_path: Path, content: str
) -> None:
    (tmp_path / STATE_FILE).write_text(content)
    post = Receiver()
    with pytest.raises(StoreError, match="not an alert state ccanalytics wrote") as caught:
        notify_on_change(tmp_path, [_alert(True)], now=T0, post=post)
    assert "\n" not in str(caught.value) and caught.value.path == tmp_path / STATE_FILE
    assert (tmp_path / STATE_FILE).read_text() == content
    assert post.sent == []


def test_version_1_state_files_still_read(tmp_path: Path) -> None:
    old = {
        "window=3600s max-idle-cost=5.0 max-stragglers=None": {"state": "breached", "since": "x"}
    }
    (tmp_path / STATE_FILE).write_text(json.dumps(old))
    post = Receiver()
    notify_on_change(tmp_path, [_alert(True, key=next(iter(old)))], now=T0, post=post)
    assert post.sent == []  # it was breached already: no change


def test_a_snoozed_rule_is_silent_until_its_time_then_sends_the_change(tmp_path: Path) -> None:
    entry = snooze(
        tmp_path, "rule", duration=timedelta(hours=4), who="alice", why="retraining", now=T0
    )
    assert entry.until == T0 + timedelta(hours=4)
    post = Receiver()
    outcome = notify_on_change(tmp_path, [_alert(True)], now=T0 + timedelta(hours=1), post=post)
    assert outcome.snoozed == ("rule/max_idle_cost@cl-a",) and post.sent == []
    notify_on_change(tmp_path, [_alert(True)], now=T0 + timedelta(hours=3, minutes=59), post=post)
    assert post.sent == []
    notify_on_change(tmp_path, [_alert(True)], now=T0 + timedelta(hours=4), post=post)
    assert [text for _, text in post.sent] == ["breached"]
    saved = read_state(tmp_path).snoozes["rule"]
    assert (saved.who, saved.why) == ("alice", "retraining")
    assert saved.describe() == "snoozed until 2026-11-10 16:00 UTC by alice: retraining"


def test_a_snooze_must_end_in_the_future(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="future"):
        snooze(tmp_path, "rule", until=T0 - timedelta(hours=1), now=T0)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        (URL + "\r", "control character"),
        ("ftp://hooks.example.com/x", "must start with"),
        ("https://", "no host"),
        ("https://hooks example.com/", "space"),
    ],
)
def test_a_bad_webhook_url_is_named_without_quoting_it(url: str, words: str) -> None:
    problem = webhook_problem(url)
    assert problem is not None and words in problem and "hooks" not in problem


def test_a_good_webhook_url_has_no_problem() -> None:
    assert webhook_problem(URL) is None


def test_a_post_to_a_receiver_that_drips_has_a_total_deadline() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def drip() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
            while not stop.is_set():
                conn.sendall(b"x")
                if stop.wait(0.3):
                    break

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    started = time.monotonic()
    reason = post_message(f"http://127.0.0.1:{port}/hook", "hi", deadline=1.0)
    elapsed = time.monotonic() - started
    stop.set()
    server.close()
    assert reason == "no answer within 1 s"
    assert elapsed < 5.0  # the deadline (1 s), not the 30 s the drip would take


def test_a_post_to_a_malformed_url_is_a_reason_not_a_traceback() -> None:
    reason = post_message(URL + "\r", "hi", deadline=1.0)
    assert reason == "the webhook URL is not a valid URL"

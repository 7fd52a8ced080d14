"""One question, one listing: a question History answers in several queries reads the
store as one listing of it found it.

``spend`` (its periods, its window, its burn rates), ``pods("6h")`` (the window, then its
rows) and a policy's judgements (spend, idle cost by pod for the sentences, each
threshold's window) are several DuckDB queries each; every query used to list the store
again (an S3 store's listing is a request and a page of XML per thousand objects), and a
collector writing between two of them made one answer from two states of the store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from history_helpers import pod_row, write_store

import ccanalytics.history.queries._history as history_module
from ccanalytics import History
from ccanalytics.history import check_policy, compact, parse_policy
from ccanalytics.history.alerts._judge import judge_policy

POLICY = """
[[rule]]
name = "budget"
clusters = "cl-*"
max_spend = { day = 10, month = 100 }
max_projected_spend = { month = 100 }
max_idle_cost = 1
window = "6h"
"""


def _hours(store: Path, day: str, hours: range, cluster: str = "cl-a") -> None:
    """One file per hour (as a collector leaves a day before compaction)."""
    for hour in hours:
        write_store(store, [pod_row(cluster, f"{day}T{hour:02d}:00", "p-0", gpu_util_max=2.0)])


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each listing of the store History makes, counted."""
    made: list[int] = []
    real = history_module.list_tables

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(history_module, "list_tables", counted)
    return made


def test_a_policys_judgements_and_spend_each_list_the_store_once(
    tmp_path: Path, listings: list[int]
) -> None:
    _hours(tmp_path, "2026-11-02", range(12))
    _hours(tmp_path, "2026-11-02", range(12), cluster="cl-b")
    with History(tmp_path) as h:
        listings.clear()
        report = judge_policy(parse_policy(POLICY), h)
        assert len(report.judgements) == 8  # four thresholds, two clusters
        assert len(listings) == 1
        listings.clear()
        h.spend()
        assert len(listings) == 1
        listings.clear()
        h.pods("6h")  # the window resolved and its rows read: one listing too
        assert len(listings) == 1
        listings.clear()
        h.spend()
        h.idle_cost()
        assert len(listings) == 2  # two questions: each sees the store as it is now


def test_a_snapshot_written_during_a_question_waits_for_the_next(tmp_path: Path) -> None:
    _hours(tmp_path, "2026-11-02", range(3))
    with History(tmp_path) as h:
        with h._one_listing():
            before = len(h.pods())
            _hours(tmp_path, "2026-11-02", range(3, 4))
            assert len(h.pods()) == before
        assert len(h.pods()) == before + 1


def test_a_compaction_during_a_question_is_listed_again_and_counts_each_row_once(
    tmp_path: Path, listings: list[int]
) -> None:
    _hours(tmp_path, "2026-11-02", range(6))
    _hours(tmp_path, "2026-11-03", range(2))
    with History(tmp_path) as h:
        whole = h.idle_cost(by="pod")
        listings.clear()
        with h._one_listing():
            assert len(h.pods()) == 8
            compact(tmp_path, "2026-11-02")  # the six files listed are gone now
            assert len(h.pods()) == 8
            after = h.idle_cost(by="pod")
        assert len(listings) == 2  # the question's listing, then one for the vanished files
    assert after["idle_cost"].sum() == pytest.approx(whole["idle_cost"].sum())
    # 1 USD/h: Nov 2 00:00-05:00 is 5 h, the 05:00 snapshot stands for 2 h more (twice the
    # median spacing caps the night's gap), Nov 3 00:00-01:00 is 1 h: 8 h.
    assert after["idle_cost"].sum() == pytest.approx(8.0)


def test_a_check_lists_the_store_once_to_open_it_and_judge(
    tmp_path: Path, listings: list[int]
) -> None:
    _hours(tmp_path, "2026-11-02", range(12))
    report = check_policy(tmp_path, parse_policy(POLICY))
    assert len(report.judgements) == 4
    assert len(listings) == 1


def test_a_file_gone_while_the_views_are_defined_is_listed_again_inside_a_question(
    tmp_path: Path, listings: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On S3 the views read a footer per schema when they are defined: an object removed
    since the listing raises FileNotFoundError there, not in DuckDB. Injected once here."""
    _hours(tmp_path, "2026-11-02", range(4))
    with History(tmp_path) as h:
        real = History._define
        failed: list[str] = []

        def gone_once(self: History, name: str, *args: Any) -> None:
            if not failed:
                failed.append(name)
                raise FileNotFoundError(2, "No such file", name)
            real(self, name, *args)

        _hours(tmp_path, "2026-11-02", range(4, 5))  # new files: the views are defined again
        monkeypatch.setattr(History, "_define", gone_once)
        listings.clear()
        with h._one_listing():
            assert len(h.pods()) == 5
            assert len(h.pods()) == 5
        assert failed and len(listings) == 2  # the listing that failed, and one more

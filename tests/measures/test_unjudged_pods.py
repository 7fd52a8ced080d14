"""Pods the rules cannot judge are registry measures: running without metrics, not running.

Their live figures are the summary's columns and the report's cards, read off the
registry: label, value, and the mark of a blind spot (a running pod without metrics).
"""

from __future__ import annotations

from history_helpers import pod_row, pods_table

from ccanalytics import analysis
from ccanalytics.measures import by_name
from ccanalytics.report._findings import _findings
from ccanalytics.report._sections import _Report, live_cards

AT = "2026-11-20 10:00"


def _pods():  # type: ignore[no-untyped-def]
    return pods_table(
        [
            pod_row("c", AT, "busy"),  # a running GPU pod reporting: judged
            pod_row("c", AT, "gpu-silent", gpu_util_mean=None, gpu_util_max=None),
            pod_row(
                "c",
                AT,
                "cpu-silent",
                gpu_type=None,
                gpu_count=0,
                gpu_util_mean=None,
                gpu_util_max=None,
            ),
            pod_row(
                "c",
                AT,
                "cpu-ok",
                gpu_type=None,
                gpu_count=0,
                gpu_util_mean=None,
                gpu_util_max=None,
                cpu_util=40.0,
            ),
            pod_row("c", AT, "exited", status="EXITED", gpu_util_mean=None, cost=0.0),
            pod_row("d", AT, "no-status", status=None, gpu_util_mean=None),
        ]
    )


def test_the_summary_counts_them_by_the_registry_s_rule() -> None:
    summary = analysis.cluster_summary(_pods()).set_index("cluster_id")
    assert summary["running_without_metrics"].to_dict() == {"c": 2, "d": 0}
    assert summary["pods_not_running"].to_dict() == {"c": 1, "d": 1}


def test_their_cards_are_the_registry_s() -> None:
    pods = _pods()
    page = _Report(pods, pods.iloc[:0], _findings(pods, 10.0), "t", None, None, 0)
    cards = {label: (value, note, marked) for label, value, note, marked in live_cards(page)}
    silent, stopped = by_name("no_metrics_pod_hours"), by_name("not_running_pod_hours")
    # Two silent pods at 1 USD/h each; one exited, one without a status.
    assert cards[silent.label] == ("2", "2.00 USD/h", True)
    assert cards[stopped.label] == ("2", "1 exited, 1 unknown state", False)

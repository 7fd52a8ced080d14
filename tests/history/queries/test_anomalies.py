"""Spend anomalies (History.spend_anomalies): an hour against the same hour of past weeks.

A store written by hand, one snapshot every 30 minutes from Sunday Nov 1 2026 00:00 to
Tuesday Nov 24 15:00 (the Tuesdays are Nov 3, 10, 17 and 24):

- ``cl-x``: one pod at 10 USD/h, except on the Tuesdays from 14:00 to 15:00: 10, 12, 11
  USD/h on Nov 3, 10, 17, and 34 USD/h on Nov 24 (a jump). Judged at Nov 24 15:00 the
  hour is 14:00-15:00; its baseline the Tuesdays 14:00 before: 10, 12, 11 (Oct 27 is
  before the store). Median 11, deviations 1, 1, 0: MAD 1. z = 0.6745 x (34 - 11) / 1
  = 15.5135, ratio 34 / 11 = 3.09: unusual.
- ``cl-steady``: 10 USD/h always, 25 USD/h on Nov 24 14:00-15:00: MAD 0, so z = +inf,
  and 2.5x its usual: unusual. ``cl-noise``: 10 USD/h always, 10.5 on Nov 24 14:00: z =
  +inf too, but 1.05x its usual: not unusual (the ratio floor).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from history_helpers import pod_row, ts, write_empty_listing, write_store
from prometheus_client.parser import text_string_to_metric_families

from ccanalytics import History
from ccanalytics.history.alerts._judge import judge_policy
from ccanalytics.history.alerts._policy import parse_policy
from ccanalytics.history.alerts._textfile import render_textfile

TUESDAY_COST = {"2026-11-03": 10.0, "2026-11-10": 12.0, "2026-11-17": 11.0, "2026-11-24": 34.0}


def _cost(cluster: str, t: pd.Timestamp) -> float:
    if t.hour != 14:
        return 10.0
    day = f"{t:%Y-%m-%d}"
    if cluster == "cl-x":
        return TUESDAY_COST.get(day, 10.0)
    jump = {"cl-steady": 25.0, "cl-noise": 10.5}[cluster]
    return jump if day == "2026-11-24" else 10.0


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("anomalies")
    times = pd.date_range(ts("2026-11-01"), ts("2026-11-24T15:00"), freq="30min")
    rows = [
        pod_row(cluster, t.isoformat(), f"{cluster}-0", cost=_cost(cluster, t))
        for t in times
        for cluster in ("cl-x", "cl-steady", "cl-noise")
    ]
    write_store(folder, rows)
    return folder


def test_an_hour_is_judged_against_the_same_hour_of_past_weeks(store: Path) -> None:
    with History(store) as h:
        frame = h.spend_anomalies().set_index("cluster_id")
    x = frame.loc["cl-x"]
    assert x["hour"] == ts("2026-11-24T14:00")
    assert round(x["spend"], 2) == 34.00
    assert round(x["usual"], 2) == 11.00
    assert round(x["mad"], 2) == 1.00
    assert x["weeks"] == 3
    assert round(x["robust_z"], 4) == 15.5135  # 0.6745 x 23 / 1
    assert round(x["ratio"], 4) == round(34 / 11, 4)
    assert bool(x["unusual"])


def test_mad_zero_lets_the_ratio_alone_decide(store: Path) -> None:
    with History(store) as h:
        frame = h.spend_anomalies().set_index("cluster_id")
    steady, noise = frame.loc["cl-steady"], frame.loc["cl-noise"]
    assert steady["mad"] == 0 and math.isinf(steady["robust_z"]) and steady["robust_z"] > 0
    assert round(steady["ratio"], 2) == 2.50 and bool(steady["unusual"])
    assert math.isinf(noise["robust_z"]) and round(noise["ratio"], 2) == 1.05
    assert not bool(noise["unusual"])


def test_too_few_weeks_of_baseline_is_no_judgement(store: Path) -> None:
    with History(store) as h:
        # Nov 17 15:00: the baseline is Nov 10 and Nov 3 only (2 weeks < 3).
        frame = h.spend_anomalies("2026-11-17T15:00").set_index("cluster_id")
        # A higher z threshold: cl-x's 15.5 is no longer unusual.
        strict = h.spend_anomalies(z=20).set_index("cluster_id")
        # Two weeks back only: still too few.
        short = h.spend_anomalies(weeks=2).set_index("cluster_id")
    assert frame.loc["cl-x", "weeks"] == 2
    assert pd.isna(frame.loc["cl-x", "robust_z"]) and not frame["unusual"].any()
    assert not bool(strict.loc["cl-x", "unusual"]) and bool(strict.loc["cl-steady", "unusual"])
    assert short.loc["cl-x", "weeks"] == 2 and not short["unusual"].any()


def test_an_ordinary_hour_is_not_unusual(store: Path) -> None:
    with History(store) as h:
        # Nov 24 14:00 judges 13:00-14:00: 10 USD/h every week, MAD 0, ratio 1.
        frame = h.spend_anomalies("2026-11-24T14:00").set_index("cluster_id")
    assert frame.loc["cl-x", "hour"] == ts("2026-11-24T13:00")
    assert frame.loc["cl-x", "robust_z"] == 0 and not frame["unusual"].any()


def test_an_empty_store_has_no_anomaly(tmp_path: Path) -> None:
    with History(write_empty_listing(tmp_path)) as h:
        frame = h.spend_anomalies()
    assert frame.empty and "robust_z" in frame.columns


def test_a_policy_judges_the_anomaly_in_one_sentence_and_the_textfile(store: Path) -> None:
    policy = parse_policy('[[rule]]\nname = "spikes"\nmax_spend_anomaly_z = 3.5\n')
    with History(store) as h:
        report = judge_policy(policy, h)
        young = judge_policy(policy, h, at=ts("2026-11-17T15:00"))
    by_key = {j.key: j for j in report.judgements}
    x = by_key["spikes/max_spend_anomaly_z@cl-x"]
    assert x.breached and round(x.value, 4) == 15.5135
    assert x.sentence == (
        "cl-x spent 3.1x its usual Tuesday 14:00 UTC (34.00 USD/h in the hour from "
        "2026-11-24 14:00; usually 11.00, the median of 3 weeks; robust z 15.5), over the "
        "limit of z 3.5 (rule 'spikes')."
    )
    assert by_key["spikes/max_spend_anomaly_z@cl-steady"].breached
    assert not by_key["spikes/max_spend_anomaly_z@cl-noise"].breached  # 1.05x: noise
    (too_young,) = [j for j in young.judgements if j.cluster_id == "cl-x"]
    assert not too_young.breached and math.isnan(too_young.value)
    assert too_young.sentence == (
        "cl-x: no spend anomaly judged for Tuesday 14:00 UTC: 2 week(s) of baseline, "
        "3 needed (rule 'spikes')."
    )
    families = {f.name: f for f in text_string_to_metric_families(render_textfile(report).decode())}
    z = {s.labels["cluster"]: s.value for s in families["ccanalytics_spend_anomaly_z"].samples}
    assert round(z["cl-x"], 4) == 15.5135 and math.isinf(z["cl-steady"])
    assert {s.labels["window"] for s in families["ccanalytics_spend_anomaly_z"].samples} == {"1h"}
    young_text = render_textfile(young).decode()
    assert "ccanalytics_spend_anomaly_z{" not in young_text  # not judged: no sample

"""Failed clusters are exception objects under one name, ``errors``, end to end.

A fleet load, ``collect`` and the report each keep the clusters that failed as the
client's own exceptions (a missing cluster stays a :class:`NotFoundError`), never as
strings rebuilt into plain :class:`CCAnalyticsError`; counts in messages are of the
clusters asked for.
"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pandas as pd
import pytest

import ccanalytics
from ccanalytics import FleetLoadError, NotFoundError, collect
from ccanalytics.cli import main
from ccanalytics.frames import load_fleet
from ccanalytics.report import write_report


def test_a_fleet_load_keeps_each_failure_as_its_exception(client) -> None:
    pods, gpus, errors = load_fleet(["cl-etl-cpu", "cl-nope"], client=client)
    err = errors["cl-nope"]
    assert isinstance(err, NotFoundError) and err.status == 404
    assert set(pods["cluster_id"]) == {"cl-etl-cpu"} and set(gpus["cluster_id"]) <= {"cl-etl-cpu"}
    # Workers pickle it, pandas deep-copies what it holds: both keep it whole.
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is NotFoundError and again.path == err.path
    assert copy.deepcopy(err).status == 404
    # The frames say the same in words, under the same name.
    assert pods.attrs["errors"] == {"cl-nope": str(err)}


def test_a_collected_frame_stays_writable_to_parquet(client, tmp_path: Path) -> None:
    # pandas writes attrs into the Parquet metadata with json.dumps: exception objects
    # there would make to_parquet raise TypeError.
    frame = ccanalytics.load_cluster_pods(
        ["cl-etl-cpu", "cl-nope"], client=client, errors="collect"
    )
    frame.to_parquet(tmp_path / "p.parquet")
    back = pd.read_parquet(tmp_path / "p.parquet")
    assert len(back) == len(frame) and set(back.attrs["errors"]) == {"cl-nope"}


def test_the_headline_counts_the_clusters_asked(client) -> None:
    # Three asked: one loads with no pods... none here is empty, so: one loads, two fail.
    with pytest.raises(FleetLoadError) as caught:
        ccanalytics.load_cluster_pods(["cl-etl-cpu", "cl-nope", "cl-gone"], client=client)
    assert str(caught.value).startswith("2 of 3 clusters failed")


def test_the_headline_counts_a_cluster_that_loaded_empty(make_sandbox) -> None:
    sb = make_sandbox()
    sb.app.data.clusters["cl-empty"] = []
    with sb.client() as c, pytest.raises(FleetLoadError) as caught:
        ccanalytics.load_cluster_pods(["cl-empty", "cl-nope", "cl-etl-cpu"], client=c)
    # Before: "1 of 2 clusters failed" (clusters counted from the frame's rows).
    assert str(caught.value).startswith("1 of 3 clusters failed")


def test_collect_keeps_the_not_found_error(client, tmp_path: Path) -> None:
    result = collect(["cl-infer-prod", "cl-nope"], tmp_path, client=client, errors="collect")
    assert list(result.errors) == ["cl-nope"]
    assert isinstance(result.errors["cl-nope"], NotFoundError)
    with pytest.raises(FleetLoadError) as caught:
        collect(["cl-infer-prod", "cl-nope"], tmp_path, client=client)
    assert isinstance(caught.value.errors["cl-nope"], NotFoundError)
    assert str(caught.value).startswith("1 of 2 clusters failed")


def test_the_old_name_failures_warns_and_still_answers(client, tmp_path: Path) -> None:
    result = collect(["cl-infer-prod", "cl-nope"], tmp_path, client=client, errors="collect")
    with pytest.deprecated_call(match="errors"):
        old = result.failures
    assert list(old) == ["cl-nope"] and "404" in old["cl-nope"]


def test_collect_where_every_cluster_fails_raises_fleet_load_error(client, tmp_path: Path) -> None:
    with pytest.raises(FleetLoadError) as caught:
        collect(["cl-nope", "cl-gone"], tmp_path, client=client)
    assert str(caught.value).startswith("2 of 2 clusters failed")
    assert all(isinstance(e, NotFoundError) for e in caught.value.errors.values())


def test_the_cli_collect_where_every_cluster_fails_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["collect", "cl-nope", "--store", str(tmp_path / "s"), "--sandbox"])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err and "KeyError" not in err
    assert "cl-nope" in err and "404" in err


@pytest.mark.slow
def test_the_report_keeps_the_exceptions_under_errors(client, tmp_path: Path) -> None:
    summary = write_report(
        ["cl-infer-prod", "cl-nope"], tmp_path / "r.html", client=client, errors="collect"
    )
    assert isinstance(summary.errors["cl-nope"], NotFoundError)
    with pytest.deprecated_call(match="errors"):
        assert list(summary.failed) == ["cl-nope"]

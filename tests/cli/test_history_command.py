"""``ccanalytics history QUERY``: one subcommand per History query, as sqlite-utils does.

The subcommands and their options are checked against ``History``'s signatures, so a
new query (or a new parameter) without its command fails here; the figures are
History's, checked against a hand computation.
"""

from __future__ import annotations

import inspect
import io
import json
import shutil
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pandas as pd
import pytest
from history_helpers import pod_row, ts, write_store

from ccanalytics import History
from ccanalytics.cli import _history as history_cli, build_parser, main


def _query_methods() -> set[str]:
    """History's public methods that answer with a frame."""
    return {
        name
        for name, member in inspect.getmembers(History, inspect.isfunction)
        if not name.startswith("_")
        and inspect.signature(member).return_annotation in ("pd.DataFrame", pd.DataFrame)
    }


def test_every_query_method_has_a_subcommand_and_every_subcommand_a_method() -> None:
    assert set(history_cli.QUERIES) == _query_methods()
    parser = build_parser()
    words = {name.replace("_", "-") for name in history_cli.QUERIES}
    assert set(_choices(parser, "history")) == words


def _choices(parser: Any, command: str) -> dict[str, Any]:
    sub = parser._subparsers._group_actions[0].choices[command]
    return dict(sub._subparsers._group_actions[0].choices)


@pytest.mark.parametrize("method", sorted(history_cli.QUERIES))
def test_each_subcommand_gives_exactly_the_methods_parameters(method: str) -> None:
    signature = inspect.signature(getattr(History, method))
    parameters = [p for p in signature.parameters if p != "self"]
    assert list(history_cli.QUERIES[method].given) == parameters


@pytest.mark.parametrize("method", sorted(history_cli.QUERIES))
def test_the_by_choices_are_the_methods(method: str) -> None:
    parameter = inspect.signature(getattr(History, method)).parameters.get("by")
    sub = _choices(build_parser(), "history")[method.replace("_", "-")]
    by = [a for a in sub._actions if a.dest == "by"]
    if parameter is None:
        assert by == []
        return
    annotation = eval(parameter.annotation, {"Literal": Literal})
    members = [annotation] if get_origin(annotation) is Literal else get_args(annotation)
    allowed: set[object] = set()
    for member in members:
        allowed |= set(get_args(member)) if get_origin(member) is Literal else {None}
    assert {history_cli.BY_WORDS.get(c, c) for c in by[0].choices} == allowed


# -- the figures, by hand ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One hour (13 snapshots 5 minutes apart) of one idle pod at 2 USD/h and one busy pod at
    3 USD/h, on 2026-04-01 from 10:00: 2.00 USD idle of 5.00 USD spent.

    Written once per module and never read: each test reads a copy (``store``), as the
    readers write their caches into the store."""
    rows = []
    for i in range(13):
        when = str(ts("2026-04-01 10:00") + pd.Timedelta(minutes=5 * i))
        rows.append(pod_row("cl-a", when, "idle", cost=2.0, gpu_util_mean=1.0, gpu_util_max=2.0))
        rows.append(pod_row("cl-a", when, "busy", cost=3.0))
    folder = tmp_path_factory.mktemp("history-command") / "store"
    write_store(folder, rows)
    return folder


@pytest.fixture
def store(written: Path, tmp_path: Path) -> Path:
    """A copy of the module's store (3 ms, against 40 ms to write it again)."""
    return Path(shutil.copytree(written, tmp_path / "store"))


def _run(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    code = main(["history", *words])
    out, err = capsys.readouterr()
    return code, out, err


def test_idle_cost_as_json_is_the_hand_computed_figure(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(
        capsys,
        "idle-cost",
        "--store",
        str(store),
        "--window",
        "7d",
        "--by",
        "none",
        "--format",
        "json",
    )
    assert (code, err) == (0, "")
    (row,) = json.loads(out)
    assert row["idle_cost"] == pytest.approx(2.0)  # 2 USD/h x 1 h
    assert row["total_cost"] == pytest.approx(5.0)  # (2 + 3) USD/h x 1 h


def test_the_rule_thresholds_are_passed_through(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # At 1.5 %, the idle pod's GPUs (up to 2 %) are no longer all below the line.
    code, out, _ = _run(
        capsys, "idle-cost", "--store", str(store), "--by", "none", "--format", "json",
        "--idle-threshold", "1.5",
    )  # fmt: skip
    assert code == 0 and json.loads(out)[0]["idle_cost"] == pytest.approx(0.0)


def test_by_day_and_csv_match_the_library(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys,
        "idle-cost",
        "--store",
        str(store),
        "--window",
        "7d",
        "--by",
        "day",
        "--format",
        "csv",
    )
    with History(store) as h:
        expected = h.idle_cost("7d", by="day")
    assert code == 0 and out == expected.to_csv(index=False)
    # Seven days back from the newest snapshot: the first six unobserved, the last one
    # holds the hour of snapshots.
    days = pd.read_csv(io.StringIO(out))
    assert list(days["idle_cost"].round(6)) == [0.0] * (len(days) - 1) + [2.0]
    assert days["day"].iloc[-1].startswith("2026-04-01")


def test_pods_of_one_cluster_and_pod_lifetimes(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "pods", "cl-a", "--store", str(store), "--format", "json")
    assert code == 0 and len(json.loads(out)) == 26
    code, out, _ = _run(capsys, "pods", "cl-b", "--store", str(store), "--format", "json")
    assert code == 0 and json.loads(out) == []
    code, out, _ = _run(capsys, "pod-lifetimes", "--store", str(store), "--format", "csv")
    lifetimes = pd.read_csv(io.StringIO(out))
    assert code == 0 and list(lifetimes["pod_id"]) == ["idle", "busy"]  # costliest idle first


def test_spend_and_sql(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "spend", "--store", str(store), "--by", "none", "--format", "json")
    assert code == 0 and {row["period"] for row in json.loads(out)} == {"day", "week", "month"}
    code, out, _ = _run(
        capsys, "sql", "SELECT count(*) AS n FROM pods", "--store", str(store), "--format", "json"
    )
    assert code == 0 and json.loads(out) == [{"n": 26}]


# -- files: never replaced without --force ------------------------------------------------


def test_parquet_needs_a_file_and_an_existing_one_needs_force(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "coverage", "--store", str(store), "--format", "parquet")
    assert code == 2 and out == "" and "needs --output FILE" in err
    target = tmp_path / "cov.parquet"
    target.write_bytes(b"keep me")
    code, _, err = _run(capsys, "coverage", "--store", str(store), "-o", str(target))
    assert code == 2 and "--force" in err and target.read_bytes() == b"keep me"
    code, _, err = _run(capsys, "coverage", "--store", str(store), "-o", str(target), "--force")
    assert (code, err) == (0, "")
    with History(store) as h:
        expected = h.coverage()
    pd.testing.assert_frame_equal(pd.read_parquet(target), expected, check_dtype=False)
    text = tmp_path / "cov.csv"
    text.write_text("keep\n")
    assert _run(capsys, "coverage", "--store", str(store), "-o", str(text))[0] == 2
    assert text.read_text() == "keep\n"


# -- failures ------------------------------------------------------------------------------


def test_a_corrupt_store_is_exit_1_in_one_line(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    next((store / "pods").rglob("*.parquet")).write_bytes(b"not parquet")
    code, out, err = _run(capsys, "stragglers", "--store", str(store))
    assert code == 1 and out == "" and err.startswith("ccanalytics history: ")
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("query", ["idle-cost", "spend", "stragglers", "coverage"])
@pytest.mark.parametrize("where", ["a typo", "another folder"])
def test_a_path_that_holds_no_store_is_exit_1_naming_it(
    store: Path, tmp_path: Path, query: str, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "stor"  # the store is tmp_path / "store"
    if where == "another folder":  # as /etc is: files and folders, none of a store
        (path / "ssl").mkdir(parents=True)
        (path / "hosts").write_text("127.0.0.1 localhost\n")
    code, out, err = _run(capsys, query, "--store", str(path))
    assert (code, out) == (1, "")
    assert (
        err
        == f"ccanalytics history: the store {path} holds no snapshot: "
        + (
            "it does not exist"
            if where == "a typo"
            else "no file in its pods/, gpus/ or snapshots/"
        )
        + " (is the path right? collect creates a store)\n"
    )
    assert not path.exists() or sorted(p.name for p in path.iterdir()) == ["hosts", "ssl"]


@pytest.mark.parametrize(
    "failure",
    [
        ValueError("seconds=12930948082758621184, milliseconds=0"),
        OSError(28, "No space left on device"),
        RuntimeError("a slip inside the library"),
    ],
    ids=["ValueError", "OSError", "RuntimeError"],
)
def test_an_unexpected_failure_is_exit_1_with_its_cause_in_one_line(
    store: Path,
    failure: Exception,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Nothing the user typed is wrong: a failure inside is not "bad usage" (2).
    def fail(*args: object, **kwargs: object) -> None:
        raise failure

    monkeypatch.setattr(History, "idle_cost", fail)
    code, out, err = _run(capsys, "idle-cost", "--store", str(store))
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("ccanalytics history: ") and str(failure) in err


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["idle-cost", "--store", "s", "--windw", "1h"], "did you mean --window?"),
        (["idle-cost", "--store", "s", "--by", "rank"], "invalid choice: 'rank'"),
        (["spend", "--store", "s", "--window", "1h"], "unknown option --window"),
        (["idle-cost", "--store", "s", "--window", "1h", "--since", "2026-04-01"], "not allowed"),
        (["stragglers"], "--store"),
    ],
)
def test_bad_usage_is_exit_2_in_one_line(
    words: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["history", *words])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1


def test_an_s3_store_is_read(s3_store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["collect", "cl-infer-prod", "--store", s3_store, "--sandbox"]) == 0
    capsys.readouterr()
    code, out, err = _run(capsys, "pods", "--store", s3_store, "--format", "json")
    assert (code, err) == (0, "") and len(json.loads(out)) == 12


def test_the_cli_reference_lists_every_subcommand() -> None:
    page = (Path(__file__).parents[2] / "docs/reference/cli.md").read_text(encoding="utf-8")
    for name in history_cli.QUERIES:
        assert f"## `ccanalytics history {name.replace('_', '-')}`" in page


def test_waste_splits_the_idle_hour_by_the_memory_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The store's hour again, the idle pod's fullest GPU memory 30 % full.
    rows = []
    for i in range(13):
        when = str(ts("2026-04-01 10:00") + pd.Timedelta(minutes=5 * i))
        rows.append(
            pod_row(
                "cl-a", when, "idle", cost=2.0, gpu_util_mean=1.0, gpu_util_max=2.0,
                gpu_mem_util_max=30.0,
            )
        )  # fmt: skip
        rows.append(pod_row("cl-a", when, "busy", cost=3.0))
    write_store(tmp_path / "store", rows)

    def waste(*extra: str) -> dict[str, Any]:
        code, out, err = _run(
            capsys, "waste", "--store", str(tmp_path / "store"), "--by", "none",
            "--format", "json", *extra,
        )  # fmt: skip
        assert (code, err) == (0, "")
        (row,) = json.loads(out)
        return dict(row)

    # 30 % is above the default line (a model loaded); at a line of 50 % the same hour
    # is idle and empty: the CLI passes the line on. 2 USD/h for an hour either way.
    for line, loaded, empty in ((None, 2.0, 0.0), ("50", 0.0, 2.0)):
        row = waste(*(["--idle-memory-threshold", line] if line else []))
        assert (row["idle_loaded_cost"], row["idle_empty_cost"]) == (
            pytest.approx(loaded),
            pytest.approx(empty),
        )
        assert row["total_cost"] == pytest.approx(5.0)


def test_rightsizing_refuses_a_bad_gpu_types_file_and_headroom(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "rightsizing", "--store", str(store), "--format", "json")
    assert (code, err) == (0, "") and isinstance(json.loads(out), list)
    bad = tmp_path / "types.toml"
    bad.write_text("[types]\n'NVIDIA H100' = { memory_gb = -1 }\n")
    code, out, err = _run(capsys, "rightsizing", "--store", str(store), "--gpu-types", str(bad))
    assert code == 2 and out == "" and str(bad) in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as exited:
        _run(capsys, "rightsizing", "--store", str(store), "--headroom", "-1")
    assert exited.value.code == 2 and "--headroom" in capsys.readouterr().err


def test_spend_limit_gives_the_breach_instant_by_hand(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # At the newest snapshot (11:00) the day has spent 5 USD at 5 USD/h: a limit of
    # 10 USD for the day is reached an hour later; the week and month have no limit.
    code, out, err = _run(
        capsys, "spend", "--store", str(store), "--by", "none", "--format", "json",
        "--limit", "day=10",
    )  # fmt: skip
    assert (code, err) == (0, "")
    rows = {row["period"]: row for row in json.loads(out)}
    assert rows["day"]["spent"] == pytest.approx(5.0)
    assert pd.Timestamp(rows["day"]["breach_at"]) == ts("2026-04-01 12:00")
    assert rows["week"]["breach_at"] is None and rows["month"]["breach_at"] is None
    # One figure for every period: the week and month reach 10 USD at the same instant.
    code, out, _ = _run(
        capsys, "spend", "--store", str(store), "--by", "none", "--format", "json",
        "--limit", "10",
    )  # fmt: skip
    assert code == 0
    assert {pd.Timestamp(r["breach_at"]) for r in json.loads(out)} == {ts("2026-04-01 12:00")}
    code, out, err = _run(
        capsys, "spend", "--store", str(store), "--limit", "10", "--limit", "day=3"
    )
    assert code == 2 and out == "" and "not both" in err
    with pytest.raises(SystemExit):
        _run(capsys, "spend", "--store", str(store), "--limit", "year=3")
    assert "PERIOD=USD" in capsys.readouterr().err


def test_spend_anomalies_without_a_baseline_judge_nothing(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(
        capsys, "spend-anomalies", "--store", str(store), "--weeks", "2", "--z", "1",
        "--format", "json",
    )  # fmt: skip
    assert (code, err) == (0, "")
    (row,) = json.loads(out)  # one cluster, an hour with no past weeks: never unusual
    assert row["cluster_id"] == "cl-a" and row["unusual"] is False and row["robust_z"] is None
    assert row["weeks"] == 0


def test_showback_per_day_with_a_team_file(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    teams = tmp_path / "teams.toml"
    teams.write_text('[[team]]\nname = "search"\nclusters = "cl-a"\npods = "idle"\n')
    code, out, err = _run(
        capsys, "showback", "--store", str(store), "--by", "day", "--teams", str(teams),
        "--format", "json",
    )  # fmt: skip
    assert (code, err) == (0, "")
    rows = {row["pod_id"]: row for row in json.loads(out)}
    # The hour by hand: the idle pod 2 USD/h, the busy one 3 USD/h, one day's row each.
    assert (rows["idle"]["team"], rows["idle"]["cost"]) == ("search", pytest.approx(2.0))
    assert (rows["busy"]["team"], rows["busy"]["cost"]) == ("unallocated", pytest.approx(3.0))
    teams.write_text("[[team]]\nclusters = 5\n")
    code, out, err = _run(capsys, "showback", "--store", str(store), "--teams", str(teams))
    assert code == 2 and out == "" and str(teams) in err and err.count("\n") == 1

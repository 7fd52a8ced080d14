"""What a new user types wrong gets named, with the way out, in one line and exit 2 (or 1)."""

from __future__ import annotations

import pytest

from ccanalytics.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "wrong", "meant"),
    [
        (["report", "--sandbox", "--outptu", "r.html"], "--outptu", "--output"),
        (["pods", "cl-a", "--sandbx"], "--sandbx", "--sandbox"),
        (["check", "--store", "S", "--max-idle-cots", "3"], "--max-idle-cots", "--max-idle-cost"),
    ],
)
def test_a_misspelled_option_is_named_with_a_suggestion(
    capsys: pytest.CaptureFixture[str], argv: list[str], wrong: str, meant: str
) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert f"unknown option {wrong}; did you mean {meant}?" in err
    assert err.count("\n") == 1


def test_an_option_with_no_near_name_is_named_without_a_guess(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _run(capsys, "pods", "cl-a", "--zzzzzz")
    assert code == 2 and "unknown option --zzzzzz" in err and "did you mean" not in err


@pytest.mark.parametrize(
    "command", [["pods"], ["report", "-o", "r.html"], ["collect", "--store", "S"]]
)
def test_comma_separated_ids_are_told_to_use_spaces(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    code, _, err = _run(capsys, *command, "cl-infer-prod,cl-etl-cpu", "--sandbox")
    assert code == 2
    assert "cluster ids are separated by spaces, not commas" in err
    assert "cl-infer-prod cl-etl-cpu" in err


def test_a_404_on_the_sandbox_lists_the_sandboxs_clusters(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _run(capsys, "pods", "cl-nope", "--sandbox")
    assert code == 1
    assert "cl-nope" in err and "the sandbox's clusters are" in err
    assert "cl-infer-prod" in err and "cl-llama70b-train" in err
    assert err.count("\n") == 1

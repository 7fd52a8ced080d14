"""The FOCUS export passes the FinOps Foundation's validator (``focus-validator`` 2.x, FOCUS 1.2).

The validator pins old libraries and needs Python 3.12, so it lives in an environment of
its own that ``.ci/focus-validator`` builds; ``CCANALYTICS_FOCUS_VALIDATOR`` is the path
of its executable (the test skips without it: tests/README.md). It exits 0 whatever it
finds, so the test reads its report: every rule must pass or be skipped, except
``InvoiceId-C-005-C`` ("InvoiceId MUST NOT be null when the charge is associated with an
invoice"): with ``InvoiceId-C-004-C`` ("MUST be null when it is not") it is a pair that no
row can both pass, and an estimate from snapshots has no invoice, so its InvoiceId is null.

It reads its currency table from a path relative to the working folder, so it runs from
the folder that holds its package. The export is a day of the simulated fleet (running,
starting, erroring and exited pods, CPU pods, idle and busy GPUs), hourly as CSV and
daily as Parquet, with a team mapping; and a small store whose pods carry names a
spreadsheet would run, exported as CSV with their cells made inert.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path

import pytest
from csv_cells import HOSTILE
from history_helpers import pod_row, write_store
from simulated_day import SimulatedDay

from ccanalytics.history import export_showback
from ccanalytics.history.export._focus import APPLICABILITY_CRITERIA

VALIDATOR = os.environ.get("CCANALYTICS_FOCUS_VALIDATOR", "")
#: The one rule an export without invoices fails by construction (see the docstring).
EXPECTED_FAILURES = {"InvoiceId-C-005-C"}
RESULT = re.compile(
    r"^\S+\s+(?P<rule>[A-Za-z]+-[A-Z]-\d{3}-[A-Z]): (?P<status>PASS|FAIL|SKIPPED)\b"
)
TOTAL = re.compile(r"^Total: (\d+) \| Pass: (\d+) \| Fail: (\d+) \| Skipped: (\d+)")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        not VALIDATOR,
        reason="no focus-validator: set CCANALYTICS_FOCUS_VALIDATOR (.ci/focus-validator "
        "builds it)",
    ),
]


@functools.cache
def _site() -> str:
    """The validator's site folder (it is run from there), asked of its interpreter once:
    importing focus_validator there costs a second or two of a fresh process."""
    python = Path(VALIDATOR).parent / "python"
    return subprocess.run(
        [str(python), "-c", "import focus_validator, pathlib; "
         "print(pathlib.Path(focus_validator.__file__).parent.parent)"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def _validate(data: Path) -> tuple[dict[str, str], tuple[int, ...]]:
    exe = Path(VALIDATOR)
    site = _site()
    done = subprocess.run(
        [str(exe), "--data-file", str(data), "--validate-version", "1.2", "--block-download",
         "--applicability-criteria", ",".join(APPLICABILITY_CRITERIA)],
        cwd=site, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    results: dict[str, str] = {}
    totals: tuple[int, ...] = ()
    for line in done.stdout.splitlines():
        if match := RESULT.match(line):
            results[match["rule"]] = match["status"]
        elif match := TOTAL.match(line):
            totals = tuple(int(n) for n in match.groups())
    assert totals, f"no summary line in the validator's output:\n{done.stdout[-2000:]}"
    return results, totals


@pytest.mark.parametrize(("name", "by"), [("focus.csv", "hour"), ("focus.parquet", "day")])
def test_the_focus_export_passes_the_validator(
    simulated_day: SimulatedDay, tmp_path: Path, name: str, by: str
) -> None:
    teams = tmp_path / "teams.toml"
    teams.write_text(
        '[[team]]\nname = "inference"\nclusters = "cl-infer-*"\n\n'
        '[[team]]\nname = "training"\nclusters = ["cl-llama*", "cl-bringup"]\n',
        encoding="utf-8",
    )
    result = export_showback(
        simulated_day.store,
        tmp_path / name,
        since="24h",
        by=by,
        teams=teams,  # type: ignore[arg-type]
    )
    assert result.rows > 50  # 58 pods a day
    results, (total, passed, failed, _skipped) = _validate(tmp_path / name)
    failures = {rule for rule, status in results.items() if status == "FAIL"}
    assert failures - EXPECTED_FAILURES == set(), failures
    assert failed == len(failures)
    assert passed >= 150 and total > 500  # the rules ran: 162 of 578 pass, the rest skip
    # The mandatory columns' own rules ran and passed.
    for rule in ("BilledCost-C-000-M", "ChargePeriodStart-C-000-M", "EffectiveCost-C-004-M",
                 "ServiceSubcategory-C-004-M", "PricingQuantity-C-000-M", "ResourceId-C-000-C",
                 "SubAccountId-C-000-C"):  # fmt: skip
        assert results.get(rule) == "PASS", rule


def test_the_focus_csv_with_inert_hostile_names_passes_the_validator(tmp_path: Path) -> None:
    # FOCUS wants ASCII names (ResourceName-C-002-M): the full-width forms are left out.
    names = [name for name in HOSTILE if name.isascii()]
    rows = [
        pod_row("cl-a", t, f"p{i}", name=name, cost=2.0)
        for t in ("2026-11-02T00:00", "2026-11-02T01:00")
        for i, name in enumerate(names)
    ]
    write_store(tmp_path / "store", rows)
    export_showback(tmp_path / "store", tmp_path / "focus.csv", since="7d")
    assert "'=HYPERLINK(" in (tmp_path / "focus.csv").read_text(encoding="utf-8")
    results, (_total, passed, failed, _skipped) = _validate(tmp_path / "focus.csv")
    failures = {rule for rule, status in results.items() if status == "FAIL"}
    assert failures - EXPECTED_FAILURES == set(), failures
    assert failed == len(failures)
    assert results.get("ResourceId-C-000-C") == "PASS" and passed >= 150

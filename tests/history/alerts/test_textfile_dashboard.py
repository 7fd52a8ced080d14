"""``check --textfile`` for node_exporter and the Grafana dashboard that reads it.

A textfile is written by the command over the hand-made budget store (tests/budget_store.py)
with a policy judging every figure that has a metric; then:

- its names follow Prometheus' conventions: ``promtool check metrics`` prints nothing,
  one unit per name (the limits are one metric per unit), an instant is
  ``*_timestamp_seconds``, and spend so far in a period (it resets) is a gauge;
- every sample carries the label naming its source (``store``, the store's name unless
  ``--textfile-label`` says otherwise), so two files in one node_exporter folder never
  hold the same series;
- every expression of ``dashboards/grafana.json`` names metrics the textfile has and
  parses: they are written as recording rules to a file ``promtool check rules`` accepts.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ccanalytics.cli import main
from ccanalytics.measures import MEASURES, by_policy_key

ROOT = Path(__file__).resolve().parents[3]
DASHBOARD = ROOT / "dashboards" / "grafana.json"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="no promtool (apt-get install prometheus) to check the names"
)

#: Every figure with a metric, and warn_at for the budget tiers.
POLICY = """
[defaults]
window = "2h"

[[rule]]
name = "fleet"
clusters = "cl-*"
max_spend = { day = 50, month = 600 }
max_projected_spend = { month = 2000 }
warn_at = [0.5, 0.8]
max_idle_cost = 1
max_idle_cost_share = 0.5
max_stragglers = 0
max_memory_risk_pod_hours = 10
max_idle_empty_cost = 5
max_idle_loaded_cost = 5
max_straggler_cost = 5
max_idle_gpus_cost = 5
max_low_compute_cost = 5
max_spend_anomaly_z = 3.5
"""


def _write(tmp_path: Path, store: Path, name: str, *extra: str) -> str:
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    target = tmp_path / name
    main(
        ["check", "--store", str(store), "--policy", str(policy), "--textfile", str(target), *extra]
    )
    return target.read_text()


@pytest.fixture
def store(budget_store: Path, tmp_path: Path) -> Path:
    """A copy of the budget store in a folder named ``budgets`` (check writes its state)."""
    return Path(shutil.copytree(budget_store, tmp_path / "budgets"))


@pytest.fixture
def textfile(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    text = _write(tmp_path, store, "ccanalytics.prom")
    capsys.readouterr()
    return text


def _families(text: str) -> dict[str, object]:
    return {f.name: f for f in text_string_to_metric_families(text)}


@needs_promtool
def test_promtool_finds_nothing_to_say_about_the_names(textfile: str, tmp_path: Path) -> None:
    assert PROMTOOL is not None
    done = subprocess.run(
        [PROMTOOL, "check", "metrics"], input=textfile, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (done.stdout + done.stderr).strip() == ""


def test_every_sample_names_its_store_and_two_files_never_collide(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _write(tmp_path, store, "a.prom")
    second = _write(tmp_path, store, "b.prom", "--textfile-label", "store=prod")
    capsys.readouterr()
    series: list[set[tuple[str, tuple[tuple[str, str], ...]]]] = []
    for text, name in ((first, "budgets"), (second, "prod")):
        samples = [s for f in text_string_to_metric_families(text) for s in f.samples]
        assert samples and all(s.labels.get("store") == name for s in samples)
        series.append({(s.name, tuple(sorted(s.labels.items()))) for s in samples})
    assert not series[0] & series[1]


def test_a_label_that_is_not_a_label_is_refused(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    argv = ["check", "--store", str(store), "--policy", str(policy)]
    for bad in ("store", "1x=a", "cluster=x", "__name__=x"):
        try:
            code = main([*argv, "--textfile", str(tmp_path / "c.prom"), "--textfile-label", bad])
        except SystemExit as exited:  # argparse's own refusal
            code = int(str(exited.code))
        assert code == 2, bad
        assert not (tmp_path / "c.prom").exists()
        err = capsys.readouterr().err
        assert "--textfile-label" in err and "Traceback" not in err


def test_one_unit_per_name_and_the_conventions(textfile: str) -> None:
    families = _families(textfile)
    assert "ccanalytics_threshold" not in families
    # Each limit in the unit of its figure: 600 USD a month, 0.5 of the spend, 0 ranks.
    limits = {
        (name, s.labels["figure"], s.labels["period"]): s.value
        for name, f in families.items()
        if name.startswith("ccanalytics_threshold_")
        for s in f.samples  # type: ignore[attr-defined]
        if s.labels["cluster"] == "cl-a"
    }
    assert limits[("ccanalytics_threshold_usd", "max_spend", "month")] == 600
    assert limits[("ccanalytics_threshold_ratio", "max_idle_cost_share", "")] == 0.5
    assert limits[("ccanalytics_threshold_ranks", "max_stragglers", "")] == 0
    for (name, figure, _), _value in limits.items():
        unit = by_policy_key(figure).unit
        assert name == {
            "USD": "ccanalytics_threshold_usd",
            "0-1": "ccanalytics_threshold_ratio",
        }.get(unit, name)
    spend = families["ccanalytics_spend_usd"]
    assert spend.type == "gauge"  # type: ignore[attr-defined]
    # cl-a: 2.50 USD/h from Nov 1 00:00 to Nov 10 12:00 less a 23 h gap: 512.50 USD.
    month = {
        s.labels["cluster"]: s.value
        for s in spend.samples  # type: ignore[attr-defined]
        if s.labels["period"] == "month"
    }
    assert month["cl-a"] == pytest.approx(512.50)
    newest = families["ccanalytics_newest_snapshot_timestamp_seconds"]
    assert newest.samples[0].value == pytest.approx(1_794_312_000.0)  # type: ignore[attr-defined]
    for name, family in families.items():
        if "timestamp" in name or name.endswith("_at"):
            assert name.endswith("_timestamp_seconds")
        assert family.type != "counter" or name.endswith("_total") is False  # type: ignore[attr-defined]


def _expressions() -> list[tuple[str, str]]:
    board = json.loads(DASHBOARD.read_text())
    found = []
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            found.append((panel["title"], target["expr"]))
    return found


def test_the_dashboard_covers_what_the_issue_asks(textfile: str) -> None:
    board = json.loads(DASHBOARD.read_text())
    assert board["title"] and board["schemaVersion"] >= 36
    text = " ".join(e for _, e in _expressions())
    for metric in (
        "ccanalytics_spend_usd",
        "ccanalytics_projected_spend_usd",
        "ccanalytics_budget_tier_ratio",
        "ccanalytics_projected_breach_timestamp_seconds",
        "ccanalytics_idle_cost_usd",
        "ccanalytics_stragglers",
        "ccanalytics_spend_anomaly_z",
        "ccanalytics_newest_snapshot_timestamp_seconds",
    ):
        assert metric in text, metric
    waste = [m.metric.name for m in MEASURES if m.kind == "waste" and m.metric]
    assert all(f"ccanalytics_{name}" in text for name in waste)
    # The store label is a variable, so one board shows each store and never two mixed.
    assert any(v["name"] == "store" for v in board["templating"]["list"])
    assert all('store=~"$store"' in e for _, e in _expressions())


def test_every_expression_names_metrics_the_textfile_has(textfile: str) -> None:
    families = _families(textfile)
    for title, expr in _expressions():
        names = set(re.findall(r"\bccanalytics_[a-z_]+", expr))
        assert names, title
        assert names <= set(families), (title, names - set(families))


@needs_promtool
def test_every_expression_parses_as_a_rule(tmp_path: Path) -> None:
    assert PROMTOOL is not None
    rules = ["groups:", "  - name: ccanalytics_dashboard", "    rules:"]
    for number, (_, expr) in enumerate(_expressions()):
        # Grafana's variables become what they stand for at query time.
        query = expr.replace("$store", ".*").replace("$cluster", ".*").replace("$__range", "1h")
        rules += [
            f"      - record: ccanalytics_dashboard:panel{number}",
            f"        expr: {json.dumps(query)}",
        ]
    path = tmp_path / "rules.yml"
    path.write_text("\n".join(rules) + "\n")
    done = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(_expressions())} rules found" in done.stdout

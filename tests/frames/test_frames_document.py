"""The frames against the provider's published document (spec/provider-openapi-v2.json).

``tests/data/listing_document_examples.json`` holds the document's own pod examples,
copied verbatim into a listing; ``listing_document_full.json`` is a listing that
follows the document's schema with every field set, from the document's example
values where it gives them (both validate against the document: see below).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ccanalytics.frames._build import GPU_COLUMNS, POD_COLUMNS, gpus_frame, pods_frame

DATA = Path(__file__).parents[1] / "data"
SPEC = DATA / "provider-openapi-v2.json"  # the published document, as recorded
EXAMPLES = DATA / "listing_document_examples.json"
FULL = DATA / "listing_document_full.json"

#: Columns the live service never fills (documented as legacy).
LEGACY = {"desired_status"}
#: Columns of blocks a pod has only as a CPU pod, only as a GPU pod, or only with
#: one kind of mount: each is filled in the pod of its kind.
CPU_ONLY = {"cpu_type", "vcpu_count", "cpu_memory"}
GPU_ONLY = {
    "gpu_type",
    "gpu_count",
    "gpu_util_mean",
    "gpu_util_max",
    "gpu_util_min",
    "gpu_mem_util_mean",
    "gpu_mem_util_max",
    "gpus_reporting",
    "cuda_version",
}
PERSISTENT_ONLY = {"persistent_size", "persistent_path"}
NETWORK_ONLY = {"network_volumes", "network_volume_paths"}


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_bytes())
    return data


@pytest.mark.parametrize("path", [EXAMPLES, FULL], ids=["examples", "full"])
def test_fixtures_follow_the_published_document(path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    referencing = pytest.importorskip("referencing")
    if not SPEC.exists():
        pytest.skip("the published document is not beside this checkout")
    document = json.loads(SPEC.read_text())
    resource = referencing.Resource.from_contents(
        document, default_specification=referencing.jsonschema.DRAFT202012
    )
    registry = referencing.Registry().with_resource("urn:doc", resource)
    schema = {"$ref": "urn:doc#/components/schemas/ListPodsResponse"}
    validator = jsonschema.Draft202012Validator(schema, registry=registry)
    assert [e.message for e in validator.iter_errors(load(path))] == []


def test_document_examples_read_as_the_document_says() -> None:
    df = pods_frame(EXAMPLES.read_bytes())
    running, provisioning, renamed = (df.iloc[i] for i in range(3))
    assert running["status"] == "RUNNING"
    assert running["cost"] == 0.44  # USD per hour
    assert running["uptime_s"] == 3600.0
    assert running["gpu_type"] == "NVIDIA GeForce RTX 4090"
    assert running["gpu_count"] == 1
    assert running["disk"] == 50 and running["persistent_size"] == 20
    assert running["cloud"] == "SECURE"
    assert running["ports"] == "8888/http,22/tcp"
    assert running["runtime_ports"] == 1
    assert running["env_vars"] == "MODEL_NAME"
    assert running["ssh_direct_port"] == 34446
    assert not running["global_networking"] and not pd.isna(running["global_networking"])
    assert pd.isna(running["global_ip"])  # present only when enabled
    # The example's runtime has no gpus list: its one paid GPU reports nothing.
    assert pd.isna(running["gpus_reporting"]) and pd.isna(running["gpu_util_mean"])
    assert provisioning["status"] == "PROVISIONING"
    assert pd.isna(provisioning["started_at"]) and pd.isna(provisioning["ssh_direct_host"])
    assert renamed["name"] == "renamed-training-pod"
    assert df["cluster_id"].isna().all()  # standalone pods: no cluster block
    assert df["desired_status"].isna().all()  # v2 never sends it


def test_document_examples_give_one_gpu_row_per_paid_gpu() -> None:
    gpus = gpus_frame(EXAMPLES.read_bytes())
    assert gpus["pod_id"].tolist() == ["7h9k2m4n6p"] * 3
    assert gpus["gpu_index"].tolist() == [0, 0, 0]
    assert gpus["util"].isna().all() and gpus["memory_util"].isna().all()
    assert gpus["status"].tolist() == ["RUNNING", "PROVISIONING", "RUNNING"]


def test_a_listing_following_the_document_fills_every_documented_column() -> None:
    df = pods_frame(FULL.read_bytes()).set_index("pod_id", drop=False)
    gpu_pod, cpu_pod = df.loc["pod_abc123"], df.loc["pod_def456"]
    for column in POD_COLUMNS:
        if column in LEGACY:
            continue
        pod = cpu_pod if column in CPU_ONLY | NETWORK_ONLY else gpu_pod
        assert not pd.isna(pod[column]), column
    for column in set(POD_COLUMNS) - LEGACY - GPU_ONLY - PERSISTENT_ONLY - NETWORK_ONLY:
        assert not pd.isna(cpu_pod[column]), column
    gpus = gpus_frame(FULL.read_bytes())
    running = gpus[gpus["pod_id"] == "pod_abc123"]
    assert len(running) == 2
    for column in GPU_COLUMNS:
        assert running[column].notna().all(), column


def test_full_listing_values_and_units() -> None:
    df = pods_frame(FULL.read_bytes()).set_index("pod_id")
    gpu_pod = df.loc["pod_abc123"]
    assert gpu_pod["gpu_util_mean"] == 94.0  # integer percent, read as float
    assert gpu_pod["cpu_util"] == 45.0 and gpu_pod["memory_util"] == 45.0
    assert gpu_pod["cluster_role"] == "SLURM_CONTROLLER" and gpu_pod["rank"] == 0
    assert gpu_pod["created_at"] == pd.Timestamp("2026-03-13T20:00:00Z")
    assert df.loc["pod_def456", "cpu_memory"] == 16  # GB
    assert df.loc["pod_def456", "network_volumes"] == "vol_xyz"
    assert pd.isna(df.loc["pod_ghi789", "rank"])  # null until assigned
    assert df.loc["pod_jkl012", "cost"] == 0.0


def test_gpu_rows_for_pods_that_do_not_report() -> None:
    """PROVISIONING (runtime null, paying): rows with <NA>; EXITED (cost 0.0): none."""
    gpus = gpus_frame(FULL.read_bytes())
    provisioning = gpus[gpus["pod_id"] == "pod_ghi789"]
    assert provisioning["gpu_index"].tolist() == [0, 1]
    assert provisioning["util"].isna().all() and provisioning["memory_util"].isna().all()
    assert provisioning["status"].tolist() == ["PROVISIONING"] * 2
    assert "pod_jkl012" not in set(gpus["pod_id"])  # exited: pays for nothing
    assert "pod_def456" not in set(gpus["pod_id"])  # a CPU pod


def pod_with(gpus: Any, count: Any, cost: Any = 3.19) -> dict[str, Any]:
    pod = copy.deepcopy(load(FULL)["pods"][0])
    pod["gpu"]["count"] = count
    pod["cost"] = cost
    pod["runtime"]["gpus"] = gpus
    return pod


@pytest.mark.parametrize(
    ("gpus", "count", "cost", "utils"),
    [
        ([{"util": 90}, {"util": 80}], 4, 3.19, [90.0, 80.0, None, None]),  # shorter
        (None, 2, 3.19, [None, None]),  # no list at all
        ([], 2, 3.19, [None, None]),  # an empty list
        ([{"util": 90}, {"util": 80}, {"util": 70}], 2, 3.19, [90.0, 80.0, 70.0]),  # longer: kept
        ([{"util": 90}], 2, None, [90.0, None]),  # cost unknown: counted as paying
        ([{"util": 90}], 2, 0.0, [90.0]),  # free: only what it reports
        ([{"util": 90}], "2", 3.19, [90.0]),  # count unknown: only what it reports
        ([{"util": 90}], 2.0, 3.19, [90.0, None]),  # an integral float is a count
        ([{"util": 90}], 10**9, 3.19, [90.0]),  # not a machine: only what it reports
        ([{"util": 90}], -3, 3.19, [90.0]),
    ],
)
def test_paid_gpus_that_do_not_report_are_na_rows(
    gpus: Any, count: Any, cost: Any, utils: list[float | None]
) -> None:
    for source in (
        [pod_with(gpus, count, cost)],
        json.dumps({"pods": [pod_with(gpus, count, cost)]}),
    ):
        frame = gpus_frame(source)
        assert frame["gpu_index"].tolist() == list(range(len(utils)))
        assert [None if pd.isna(u) else u for u in frame["util"]] == utils


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("runtime", "gpus", 0, "util"), 94.0),  # a float where an integer belongs
        (("runtime", "uptime"), 3600.5),
        (("runtime", "cpu"), None),  # a null block
        (("runtime",), None),
        (("ssh",), None),
        (("mounts",), None),
        (("globalNetworking",), None),
        (("status",), "HIBERNATING"),  # an unknown status: kept as sent
        (("cloud",), "ORBITAL"),
        (("cluster", "role"), "SPARK_DRIVER"),
        (("brandNewField",), {"nested": [1, 2]}),  # an extra field: ignored
        (("gpu", "extra"), True),
    ],
)
def test_payloads_that_break_the_document_still_load(path: tuple[Any, ...], value: Any) -> None:
    pod = copy.deepcopy(load(FULL)["pods"][0])
    node = pod
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    for source in ([pod], json.dumps({"pods": [pod]}).encode()):
        row = pods_frame(source).iloc[0]
        assert row["pod_id"] == "pod_abc123"
        if path == ("status",) or path == ("cloud",):
            assert row[path[0]] == value
        if path == ("cluster", "role"):
            assert row["cluster_role"] == value
        if path == ("runtime", "gpus", 0, "util"):
            assert row["gpu_util_max"] == 94.0
        if path == ("runtime", "uptime"):
            assert row["uptime_s"] == 3600.5
        if path == ("runtime",):
            assert pd.isna(row["cpu_util"]) and pd.isna(row["gpus_reporting"])
        assert len(gpus_frame(source)) >= 2

"""Pods and GPU frames, offline, on the recorded listings under ``tests/data/``.

Expected values are derived in the test from the listing itself (read with the
standard library's ``json``, not orjson) by a deliberately plain restatement of the
documented reading rules, plus a few spot checks written out by hand.
"""

from __future__ import annotations

import copy
import gc
import json
import math
import statistics
from collections import OrderedDict
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pandas.api.types import pandas_dtype

from ccanalytics.api.models import Pod
from ccanalytics.frames._build import GPU_COLUMNS, POD_COLUMNS, ColumnSpec, gpus_frame, pods_frame
from ccanalytics.frames._columns import LOAD_COLUMNS

DATA = Path(__file__).parents[1] / "data"
CLUSTER = "cl-llama70b"

#: The columns fixed by the public API (API.md), in order.
API_POD_COLUMNS = [
    "cluster_id",
    "pod_id",
    "name",
    "rank",
    "cost",
    "gpu_type",
    "gpu_count",
    "cpu_util",
    "memory_util",
    "gpu_util_mean",
    "gpu_util_max",
    "gpu_mem_util_mean",
    "created_at",
    "started_at",
    "uptime_s",
]
API_GPU_COLUMNS = ["cluster_id", "pod_id", "rank", "gpu_index", "util", "memory_util"]

#: Pods of the recorded listing with deliberately mistyped fields, which a Pod model
#: coerces (pydantic lax mode) or truncates (nanoseconds), so model frames differ there.
MISTYPED = {"pod-7d2e31", "pod-7d2e32", "pod-7d2e33"}


# -- fixtures and a plain reference reader --------------------------------------------


@pytest.fixture(scope="module")
def raw() -> bytes:
    return (DATA / "listing_realworld.json").read_bytes()


@pytest.fixture(scope="module")
def listing(raw: bytes) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(raw)
    return data


@pytest.fixture(scope="module")
def pods(listing: dict[str, Any]) -> list[dict[str, Any]]:
    """The pods of the recorded listing that are JSON objects (the others are dropped)."""
    return [p for p in listing["pods"] if isinstance(p, dict)]


@pytest.fixture(scope="module")
def frame(raw: bytes) -> pd.DataFrame:
    return pods_frame(raw, cluster_id=CLUSTER)


@pytest.fixture(scope="module")
def gpus(raw: bytes) -> pd.DataFrame:
    return gpus_frame(raw, cluster_id=CLUSTER)


def dig(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def as_string(value: Any) -> Any:
    return value if isinstance(value, str) else pd.NA


def as_int(value: Any) -> Any:
    if is_number(value) and float(value).is_integer() and abs(value) < 2**63:
        return int(value)
    return pd.NA


def as_float(value: Any) -> Any:
    return float(value) if is_number(value) else pd.NA


def as_bool(value: Any) -> Any:
    return value if isinstance(value, bool) else pd.NA


#: Columns that copy one field: column -> (reader, path into the pod).
DIRECT: dict[str, tuple[Any, tuple[str, ...]]] = {
    "pod_id": (as_string, ("id",)),
    "name": (as_string, ("name",)),
    "rank": (as_int, ("cluster", "rank")),
    "cost": (as_float, ("cost",)),
    "gpu_type": (as_string, ("gpu", "id")),
    "gpu_count": (as_int, ("gpu", "count")),
    "cpu_util": (as_float, ("runtime", "cpu", "util")),
    "memory_util": (as_float, ("runtime", "memory", "util")),
    "uptime_s": (as_float, ("runtime", "uptime")),
    "cluster_ip": (as_string, ("cluster", "ip")),
    "data_center_id": (as_string, ("dataCenterId",)),
    "desired_status": (as_string, ("desiredStatus",)),
    "cpu_type": (as_string, ("cpu", "id")),
    "vcpu_count": (as_int, ("cpu", "vcpuCount")),
    "cpu_memory": (as_int, ("cpu", "memory")),
    "disk": (as_int, ("disk",)),
    "image": (as_string, ("image",)),
    "template": (as_string, ("template",)),
    "registry": (as_string, ("registry",)),
    "cuda_version": (as_string, ("cudaVersion",)),
    "locked": (as_bool, ("locked",)),
    "persistent_size": (as_int, ("mounts", "persistent", "size")),
    "persistent_path": (as_string, ("mounts", "persistent", "path")),
    "global_networking": (as_bool, ("globalNetworking", "enabled")),
    "global_ip": (as_string, ("globalNetworking", "ip")),
    "internal_dns": (as_string, ("globalNetworking", "internalDns")),
    "ssh_proxy_host": (as_string, ("ssh", "proxy", "host")),
    "ssh_proxy_port": (as_int, ("ssh", "proxy", "port")),
    "ssh_direct_host": (as_string, ("ssh", "direct", "host")),
    "ssh_direct_port": (as_int, ("ssh", "direct", "port")),
}


def gpu_objects(pod: dict[str, Any]) -> list[dict[str, Any]] | None:
    listed = dig(pod, "runtime", "gpus")
    if not isinstance(listed, list):
        return None
    return [g for g in listed if isinstance(g, dict)]


def numbers(gpus: list[dict[str, Any]], key: str) -> list[float]:
    return [float(g[key]) for g in gpus if is_number(g.get(key))]


def same(actual: Any, expected: Any) -> bool:
    if expected is pd.NA or actual is pd.NA:
        return actual is expected
    if isinstance(expected, float):
        return actual == pytest.approx(expected, rel=1e-12)
    return bool(actual == expected)


def assert_documented_dtypes(df: pd.DataFrame, columns: Any) -> None:
    assert list(df.columns) == list(columns)
    for name, spec in columns.items():
        dtype = df.dtypes[name]
        assert str(dtype) == spec.dtype, name
        assert dtype == pandas_dtype(spec.dtype), name
        if spec.dtype == "string":
            # pandas 3's default "str" dtype compares equal to "string" but uses NaN.
            assert dtype.na_value is pd.NA, name


def secrets_in(listing: dict[str, Any]) -> set[str]:
    """Every string under any ``env`` (values, and list entries), plus ``args``."""
    found: set[str] = set()

    def strings(value: Any) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for v in value.values():
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)

    for pod in listing["pods"]:
        if isinstance(pod, dict):
            found.update(strings(pod.get("env")))
            found.update(strings(pod.get("args")))
    return {s for s in found if len(s) >= 8}


def renderings(df: pd.DataFrame) -> list[str]:
    return [
        df.to_csv(),
        df.to_json(date_format="iso"),
        df.to_html(),
        df.to_string(),
        repr(df),
        *(str(v) for v in df.astype(object).to_numpy().ravel()),
    ]


# -- shape: columns, dtypes, rows -------------------------------------------------------


def test_api_columns_come_first_in_the_documented_order() -> None:
    assert list(POD_COLUMNS)[: len(API_POD_COLUMNS)] == API_POD_COLUMNS
    assert list(GPU_COLUMNS)[: len(API_GPU_COLUMNS)] == API_GPU_COLUMNS


def test_column_tables_use_only_nullable_dtypes() -> None:
    nullable = {"string", "Int64", "Float64", "boolean", "datetime64[ns, UTC]"}
    for spec in [*POD_COLUMNS.values(), *GPU_COLUMNS.values()]:
        assert isinstance(spec, ColumnSpec)
        assert spec.dtype in nullable
        assert spec.meaning


def test_pods_frame_has_documented_columns_and_dtypes(frame: pd.DataFrame) -> None:
    assert_documented_dtypes(frame, POD_COLUMNS)


def test_gpus_frame_has_documented_columns_and_dtypes(gpus: pd.DataFrame) -> None:
    assert_documented_dtypes(gpus, GPU_COLUMNS)


@pytest.mark.parametrize("index", range(16))
def test_every_pod_state_alone_gives_documented_dtypes(
    pods: list[dict[str, Any]], index: int
) -> None:
    """Running, pending, CPU, junk: a frame of one pod of each kind has every dtype right."""
    pod = pods[index]
    assert_documented_dtypes(pods_frame([pod]), POD_COLUMNS)
    assert_documented_dtypes(gpus_frame([pod]), GPU_COLUMNS)
    assert_documented_dtypes(pods_frame([Pod.model_validate(pod)]), POD_COLUMNS)


def test_fixture_covers_sixteen_object_pods(pods: list[dict[str, Any]]) -> None:
    assert len(pods) == 16


def test_one_row_per_object_pod_in_listing_order(
    frame: pd.DataFrame, pods: list[dict[str, Any]]
) -> None:
    assert len(frame) == len(pods)
    assert frame.index.equals(pd.RangeIndex(len(pods)))
    expected = [as_string(p.get("id")) for p in pods]
    assert [same(a, e) for a, e in zip(frame["pod_id"], expected, strict=True)] == [True] * 16


def test_pods_that_are_not_objects_refuse_the_listing_naming_the_first() -> None:
    # Dropped, they would leave a pod out of every sum in silence.
    with pytest.raises(ValueError, match="pod 1 is null, not a pod object"):
        pods_frame([{"id": "pod-real"}, None, "pod-ghost", 3, []])  # type: ignore[list-item]


@pytest.mark.parametrize(
    "empty",
    [
        (DATA / "listing_empty.json").read_bytes(),
        b"[]",
        "[]",
        {"pods": []},
        {"pods": None},
        [],
        (),
    ],
    ids=["file", "bytes-array", "str-array", "dict", "pods-null", "list", "tuple"],
)
def test_empty_listing_gives_empty_frames_with_all_columns(empty: Any) -> None:
    pods_df, gpus_df = pods_frame(empty), gpus_frame(empty)
    assert len(pods_df) == 0
    assert len(gpus_df) == 0
    assert_documented_dtypes(pods_df, POD_COLUMNS)
    assert_documented_dtypes(gpus_df, GPU_COLUMNS)


# -- values -------------------------------------------------------------------------------


@pytest.mark.parametrize("column", sorted(DIRECT))
def test_direct_columns_copy_their_field_or_na(
    frame: pd.DataFrame, pods: list[dict[str, Any]], column: str
) -> None:
    read, path = DIRECT[column]
    for row, pod in enumerate(pods):
        expected = read(dig(pod, *path))
        actual = frame[column].iloc[row]
        assert same(actual, expected), (column, pod.get("id"), actual, expected)


def test_gpu_aggregates_are_computed_over_gpus_reporting_a_number(
    frame: pd.DataFrame, pods: list[dict[str, Any]]
) -> None:
    for row, pod in enumerate(pods):
        gpus = gpu_objects(pod)
        utils = numbers(gpus or [], "util")
        mems = numbers(gpus or [], "memoryUtil")
        expected = {
            "gpu_util_mean": statistics.fmean(utils) if utils else pd.NA,
            "gpu_util_max": max(utils) if utils else pd.NA,
            "gpu_util_min": min(utils) if utils else pd.NA,
            "gpu_mem_util_mean": statistics.fmean(mems) if mems else pd.NA,
            "gpu_mem_util_max": max(mems) if mems else pd.NA,
            "gpus_reporting": pd.NA if gpus is None else len(utils),
        }
        for column, value in expected.items():
            actual = frame[column].iloc[row]
            assert same(actual, value), (column, pod.get("id"), actual, value)


def test_junk_gpu_entries_are_skipped_spot_check(frame: pd.DataFrame) -> None:
    """pod-7d2e31 lists 9 entries: 2 numeric utils (90.5, 88), 2 numeric memoryUtils."""
    row = frame.set_index("pod_id").loc["pod-7d2e31"]
    assert row["gpu_util_mean"] == 89.25
    assert row["gpu_util_max"] == 90.5
    assert row["gpu_util_min"] == 88.0
    assert row["gpu_mem_util_mean"] == 75.0
    assert row["gpus_reporting"] == 2


def test_pending_pod_has_no_rank_start_or_metrics(frame: pd.DataFrame) -> None:
    pending = frame.set_index("pod_id").loc[["pod-51b002", "pod-51b003"]]
    for column in ["rank", "cpu_util", "memory_util", "gpu_util_mean", "uptime_s"]:
        assert pending[column].isna().all(), column
    assert pending["started_at"].isna().all()
    assert pending["gpus_reporting"].isna().all()
    assert pending["gpu_count"].tolist() == [8, 8]


def test_cpu_pods_without_gpu_block_or_with_null_or_zero(frame: pd.DataFrame) -> None:
    cpu = frame.set_index("pod_id").loc[["pod-c9e100", "pod-c9e101", "pod-c9e102"]]
    assert cpu["gpu_count"].tolist() == [pd.NA, pd.NA, 0]
    assert cpu["gpu_type"].isna().all()
    assert cpu["gpu_util_mean"].isna().all()
    # An empty runtime.gpus list is "no GPU reported" (0); an absent one is unknown.
    assert cpu["gpus_reporting"].tolist() == [0, pd.NA, 0]
    assert cpu["cpu_util"].tolist() == [88.0, 72.25, 12.5]


def test_wrong_types_are_na_and_numeric_strings_are_not_coerced(frame: pd.DataFrame) -> None:
    row = frame.set_index("pod_id").loc["pod-7d2e32"]
    # "abc", "18", "200", "false", 12345 (name), 1731921164 (createdAt), "not a date",
    # "183512", "61", "8", true (vcpuCount), 1024.5 (cpu.memory), 12.4 (cudaVersion) ...
    for column in [
        "cost",
        "rank",
        "disk",
        "locked",
        "name",
        "created_at",
        "started_at",
        "uptime_s",
        "memory_util",
        "gpu_count",
        "vcpu_count",
        "cpu_memory",
        "cuda_version",
        "cpu_type",
        "data_center_id",
        "registry",
        "global_networking",
        "global_ip",
        "internal_dns",
        "ports",
        "env_vars",
        "runtime_ports",
        "network_volumes",
        "persistent_size",
        "cpu_util",
        "gpu_util_mean",
        "gpus_reporting",
    ]:
        assert pd.isna(row[column]), column
    assert row["gpu_type"] == "NVIDIA H100 80GB HBM3"


def test_wrong_block_types_are_na(frame: pd.DataFrame) -> None:
    """runtime a string, gpu a list, cpu a string."""
    row = frame.set_index("pod_id").loc["pod-7d2e33"]
    for column in ["uptime_s", "cpu_util", "gpu_util_mean", "gpus_reporting", "gpu_type"]:
        assert pd.isna(row[column]), column
    assert pd.isna(row["gpu_count"])
    assert pd.isna(row["cpu_type"])


def test_integral_floats_fill_integer_columns_but_fractions_do_not(frame: pd.DataFrame) -> None:
    row = frame.set_index("pod_id").loc["pod-7d2e33"]
    assert row["rank"] == 19  # 19.0
    assert row["disk"] == 200  # 200.0
    assert row["ssh_proxy_port"] == 22  # 22.0
    assert pd.isna(row["ssh_direct_port"])  # 40128.5
    assert row["cost"] == 24.0  # an integer is a number


def test_timestamps_are_utc_nanoseconds(frame: pd.DataFrame) -> None:
    by_id = frame.set_index("pod_id")
    assert by_id.loc["pod-3f9a1c", "created_at"] == pd.Timestamp("2026-11-18T09:12:44Z")
    assert by_id.loc["pod-3f9a1c", "started_at"] == pd.Timestamp("2026-11-18T09:15:02.123Z")
    # Offsets are converted to UTC; nanoseconds are kept.
    assert by_id.loc["pod-51b003", "created_at"] == pd.Timestamp("2026-11-21T07:58:11.5Z")
    assert by_id.loc["pod-7d2e33", "started_at"] == pd.Timestamp("2026-11-18T09:15:12Z")
    created = by_id.loc["pod-7d2e33", "created_at"]
    assert created == pd.Timestamp("2026-11-18T09:12:48.123456789Z")
    assert created.nanosecond == 789
    # A date alone is midnight UTC; Go's zero time does not fit in ns and is NaT.
    assert by_id.loc["pod-7d2e34", "started_at"] == pd.Timestamp("2026-11-18T00:00:00Z")
    assert pd.isna(by_id.loc["pod-7d2e34", "created_at"])


def test_out_of_range_timestamps_alone_are_nat_not_an_error() -> None:
    """pandas 3 would keep these at second resolution; the ns cast must not overflow."""
    df = pods_frame(
        [
            {"createdAt": "0001-01-01T00:00:00Z", "startedAt": "9999-12-31T23:59:59Z"},
            {"createdAt": "1677-09-21T00:12:43Z", "startedAt": "2262-04-11T23:47:16Z"},
        ]
    )
    assert df["created_at"].isna().tolist() == [True, True]
    assert df["started_at"].isna().tolist() == [True, False]
    assert str(df["created_at"].dtype) == "datetime64[ns, UTC]"


def test_cluster_id_argument_fills_only_pods_without_one(
    frame: pd.DataFrame, pods: list[dict[str, Any]], raw: bytes
) -> None:
    own = [dig(p, "cluster", "id") for p in pods]
    assert frame["cluster_id"].tolist() == [v if isinstance(v, str) else CLUSTER for v in own]
    unfilled = pods_frame(raw)
    assert [pd.isna(v) for v in unfilled["cluster_id"]] == [not isinstance(v, str) for v in own]
    other = pods_frame([{"cluster": {"id": "cl-own"}}, {}], cluster_id="cl-asked")
    assert other["cluster_id"].tolist() == ["cl-own", "cl-asked"]


def test_list_fields_are_joined_and_counted(frame: pd.DataFrame) -> None:
    by_id = frame.set_index("pod_id")
    assert by_id.loc["pod-3f9a1d", "ports"] == "22/tcp,8888/http,6006/http"
    assert by_id.loc["pod-7d2e31", "ports"] == "22/tcp,8888/http"  # 8888 and null skipped
    assert by_id.loc["pod-51b003", "ports"] == ""  # an empty list
    assert pd.isna(by_id.loc["pod-c9e102", "ports"])  # absent
    assert by_id.loc["pod-3f9a1d", "network_volumes"] == "vol-7a1,vol-ck2"
    assert by_id.loc["pod-7d2e31", "network_volumes"] == "vol-7a1,vol-ck2"  # junk skipped
    assert by_id.loc["pod-51b002", "network_volumes"] == ""
    assert by_id.loc["pod-3f9a1d", "runtime_ports"] == 2
    assert by_id.loc["pod-7d2e31", "runtime_ports"] == 2  # "22:40126" and null skipped
    assert by_id.loc["pod-c9e100", "runtime_ports"] == 0
    assert by_id.loc["pod-3f9a1d", "env_vars"] == "HF_TOKEN,NCCL_DEBUG,WANDB_API_KEY"
    assert by_id.loc["pod-7d2e31", "env_vars"] == "DEBUG,HF_TOKEN,RETRIES"
    assert by_id.loc["pod-51b003", "env_vars"] == ""


def test_env_names_are_sorted_names_of_each_env(
    frame: pd.DataFrame, pods: list[dict[str, Any]]
) -> None:
    for row, pod in enumerate(pods):
        env = pod.get("env")
        expected = ",".join(sorted(env)) if isinstance(env, dict) else pd.NA
        assert same(frame["env_vars"].iloc[row], expected)


# -- secrets ------------------------------------------------------------------------------


def test_fixture_has_secrets_to_look_for(listing: dict[str, Any]) -> None:
    assert len(secrets_in(listing)) >= 8


@pytest.mark.parametrize("form", ["bytes", "dicts", "models"])
def test_env_values_and_args_never_reach_a_frame(
    raw: bytes, listing: dict[str, Any], pods: list[dict[str, Any]], form: str
) -> None:
    source: Any = {
        "bytes": raw,
        "dicts": pods,
        "models": [Pod.model_validate(p) for p in pods],
    }[form]
    secrets = secrets_in(listing)
    for df in (pods_frame(source, cluster_id=CLUSTER), gpus_frame(source, cluster_id=CLUSTER)):
        for text in renderings(df):
            leaked = [s for s in secrets if s in text]
            assert not leaked


def test_invalid_json_error_does_not_carry_the_document() -> None:
    broken = b'{"pods": [{"env": {"HF_TOKEN": "hf_s3cr3tInBrokenJson"}}, '
    with pytest.raises(ValueError, match="not valid JSON") as caught:
        pods_frame(broken)
    assert "hf_s3cr3tInBrokenJson" not in str(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None  # not merely hidden: not there at all


# -- input forms --------------------------------------------------------------------------


def test_every_input_form_gives_the_same_frame(
    raw: bytes, listing: dict[str, Any], pods: list[dict[str, Any]]
) -> None:
    expected = pods_frame(raw, cluster_id=CLUSTER)
    expected_gpus = gpus_frame(raw, cluster_id=CLUSTER)
    # Factories, so that each call gets a fresh input (a generator is read once).
    forms: dict[str, Callable[[], Any]] = {
        "str": lambda: raw.decode(),
        "bytearray": lambda: bytearray(raw),
        "memoryview": lambda: memoryview(raw),
        "listing dict": lambda: listing,
        "list with junk": lambda: listing["pods"],
        "list of dicts": lambda: pods,
        "tuple": lambda: tuple(pods),
        "generator": lambda: (p for p in pods),
        "bare array bytes": lambda: json.dumps(listing["pods"]).encode(),
        "mappings": lambda: [MappingProxyType(p) for p in pods],
        "ordered dicts": lambda: [OrderedDict(p) for p in pods],
    }
    for name, form in forms.items():
        pd.testing.assert_frame_equal(pods_frame(form(), cluster_id=CLUSTER), expected, obj=name)
        pd.testing.assert_frame_equal(
            gpus_frame(form(), cluster_id=CLUSTER), expected_gpus, obj=name
        )


def test_pod_models_give_the_same_frame_for_well_typed_pods(pods: list[dict[str, Any]]) -> None:
    typed = [p for p in pods if p.get("id") not in MISTYPED]
    models = [Pod.model_validate(p) for p in typed]
    pd.testing.assert_frame_equal(
        pods_frame(models, cluster_id=CLUSTER), pods_frame(typed, cluster_id=CLUSTER)
    )
    pd.testing.assert_frame_equal(pods_frame(models), pods_frame(typed))
    pd.testing.assert_frame_equal(gpus_frame(models), gpus_frame(typed))
    mixed = [m if i % 2 else p for i, (m, p) in enumerate(zip(models, typed, strict=True))]
    pd.testing.assert_frame_equal(pods_frame(mixed), pods_frame(typed))


def test_pod_models_differ_only_where_pydantic_coerced(pods: list[dict[str, Any]]) -> None:
    """Documented: a model has already turned "18" into 18; the raw frame says <NA>."""
    from_models = pods_frame([Pod.model_validate(p) for p in pods])
    from_json = pods_frame(pods)
    differs = from_models.compare(from_json)
    assert set(from_json.loc[differs.index, "pod_id"]) == MISTYPED
    assert from_models.loc[8, "rank"] == 18
    assert pd.isna(from_json.loc[8, "rank"])


def test_input_that_is_not_a_listing_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="listing"):
        pods_frame({"id": "pod-1"})
    with pytest.raises(ValueError, match="list of pods"):
        pods_frame({"pods": "pod-1"})
    with pytest.raises(ValueError, match="list of pods"):
        pods_frame(b"42")
    with pytest.raises(ValueError, match="list of pods"):
        gpus_frame(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not valid JSON"):
        gpus_frame("")


def test_python_only_values_do_not_break_it() -> None:
    """Dicts built in Python can hold what JSON cannot: huge ints, NaN, inf, odd keys."""
    pods = [
        {
            "id": "pod-x",
            "cost": float("nan"),
            "disk": 10**30,
            "cluster": {"rank": 2**63, "id": "cl"},
            "runtime": {
                "uptime": float("inf"),
                "gpus": [{"util": 10**400}, {"util": float("nan")}, {"util": 50}],
                "cpu": {"util": -0.0},
            },
            "env": {1: "x", "A": "y"},
            "gpu": {"count": float("inf")},
            "name": "bad \ud800 surrogate",
            "image": b"bytes",
        },
        {"id": "pod-y", "cluster": {"rank": -(2**63)}, "env": {"B": 1}, "name": "ok"},
    ]
    df = pods_frame(pods)
    assert_documented_dtypes(df, POD_COLUMNS)
    row = df.iloc[0]
    assert pd.isna(row["cost"])
    assert pd.isna(row["disk"])
    assert pd.isna(row["rank"])
    assert row["uptime_s"] == math.inf
    assert row["gpu_util_mean"] == 50.0
    assert row["gpus_reporting"] == 1
    assert row["env_vars"] == "A"
    assert pd.isna(row["gpu_count"])
    assert pd.isna(row["image"])
    assert df.loc[1, "rank"] == -(2**63)
    assert df.loc[1, "name"] == "ok"
    assert_documented_dtypes(gpus_frame(pods), GPU_COLUMNS)


def test_garbage_collection_state_is_restored(raw: bytes) -> None:
    assert gc.isenabled()
    pods_frame(raw)
    assert gc.isenabled()
    gc.disable()
    try:
        gpus_frame(raw)
        assert not gc.isenabled()
    finally:
        gc.enable()


# -- the GPU frame ------------------------------------------------------------------------


def paid_gpus(pod: dict[str, Any]) -> int:
    """GPUs a pod pays for, restated plainly: gpu.count unless cost is 0.0."""
    count = as_int(dig(pod, "gpu", "count"))
    if count is pd.NA or not 1 <= count <= 1024 or as_float(pod.get("cost")) == 0.0:
        return 0
    return int(count)


def test_gpus_frame_has_one_row_per_paid_or_listed_gpu_in_pod_order(
    gpus: pd.DataFrame, pods: list[dict[str, Any]]
) -> None:
    expected_rows = []
    for pod in pods:
        listed = gpu_objects(pod) or []
        for index in range(max(len(listed), paid_gpus(pod))):
            g = listed[index] if index < len(listed) else {}
            expected_rows.append((pod.get("id"), index, g))
    assert len(gpus) == len(expected_rows)
    for row, (pod_id, index, g) in enumerate(expected_rows):
        actual = gpus.iloc[row]
        assert actual["pod_id"] == pod_id
        assert actual["gpu_index"] == index
        assert same(actual["util"], as_float(g.get("util")))
        assert same(actual["memory_util"], as_float(g.get("memoryUtil")))


def test_gpus_frame_indexes_restart_per_pod(gpus: pd.DataFrame) -> None:
    per_pod = gpus.groupby("pod_id", sort=False)["gpu_index"].apply(list)
    assert per_pod.to_dict() == {
        "pod-3f9a1c": list(range(8)),
        "pod-3f9a1d": list(range(8)),
        "pod-51b002": list(range(8)),  # pending: 8 paid GPUs, none reporting
        "pod-51b003": list(range(8)),
        "pod-7d2e31": list(range(8)),  # 9 entries, of which 6 are objects; 8 paid
        "pod-7d2e34": list(range(8)),  # 4 listed of 8 paid
        "pod-a00e01": [0],
        "pod-a00e02": [0],
        "pod-f00d01": list(range(8)),  # 4 listed of 8 paid
    }


def test_gpus_that_do_not_report_are_na_rows_never_zero(gpus: pd.DataFrame) -> None:
    rows = gpus[gpus["pod_id"] == "pod-f00d01"]
    assert rows["util"].iloc[:4].notna().all()
    assert rows["util"].iloc[4:].isna().all()
    assert rows["memory_util"].iloc[4:].isna().all()
    pending = gpus[gpus["pod_id"] == "pod-51b002"]
    assert pending["util"].isna().all() and len(pending) == 8
    # pod-7d2e32's gpu.count is the string "8": unknown, so only what it lists (nothing).
    assert "pod-7d2e32" not in set(gpus["pod_id"])


def test_gpus_frame_repeats_the_pod_fields(gpus: pd.DataFrame, frame: pd.DataFrame) -> None:
    pods_by_id = frame.set_index("pod_id")
    for column in ["cluster_id", "rank", "gpu_type"]:
        expected = pods_by_id.loc[gpus["pod_id"], column].astype(object).tolist()
        assert [same(a, e) for a, e in zip(gpus[column], expected, strict=True)] == [True] * len(
            gpus
        ), column


def test_gpus_frame_agrees_with_the_pod_aggregates(gpus: pd.DataFrame, frame: pd.DataFrame) -> None:
    by_pod = gpus.groupby("pod_id")["util"].agg(["mean", "max", "min", "count"])
    pods_by_id = frame.set_index("pod_id").loc[by_pod.index]
    pd.testing.assert_series_equal(
        by_pod["mean"], pods_by_id["gpu_util_mean"], check_names=False, check_dtype=False
    )
    pd.testing.assert_series_equal(
        by_pod["max"], pods_by_id["gpu_util_max"], check_names=False, check_dtype=False
    )
    assert (by_pod["count"] == pods_by_id["gpus_reporting"]).all()


# -- documentation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("function", "columns"), [(pods_frame, POD_COLUMNS), (gpus_frame, GPU_COLUMNS)]
)
def test_help_shows_the_column_table(function: Any, columns: Any) -> None:
    doc = function.__doc__
    assert "{columns}" not in doc
    for name, spec in columns.items():
        line = next(line for line in doc.splitlines() if line.split()[:1] == [name])
        assert spec.dtype in line


def test_units_are_the_documents() -> None:
    """The published document states every unit: the column docs say them, no guessing."""
    for column in ["cpu_util", "memory_util", "gpu_util_mean", "gpu_util_max", "gpu_util_min"]:
        assert "integer percent 0-100" in POD_COLUMNS[column].meaning, column
    for column in ["util", "memory_util"]:
        assert "integer percent 0-100" in GPU_COLUMNS[column].meaning, column
    assert "USD per hour" in POD_COLUMNS["cost"].meaning
    assert "seconds" in POD_COLUMNS["uptime_s"].meaning
    for column in ["cpu_memory", "disk", "persistent_size"]:
        assert "GB" in POD_COLUMNS[column].meaning, column
    every = [*POD_COLUMNS.values(), *GPU_COLUMNS.values(), *LOAD_COLUMNS.values()]
    assert not any("assumed" in spec.meaning for spec in every)
    assert "load only" in LOAD_COLUMNS["observed_at"].meaning
    assert "legacy" in POD_COLUMNS["desired_status"].meaning


# -- robustness under random mutation ---------------------------------------------------

EXAMPLE_POD: dict[str, Any] = json.loads((DATA / "listing_realworld.json").read_text())["pods"][1]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["3", "12.5", "2026-11-18T09:12:44Z", "true", "", "NaN"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from paths(inner, (*prefix, index))


def mutate(pod: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    if not path:
        return value
    parent = pod
    for key in path[:-1]:
        parent = parent[key]
    if action == "delete" and isinstance(parent, dict):
        del parent[path[-1]]
    elif action == "add" and isinstance(parent, dict):
        parent[f"extra{len(parent)}"] = value
    else:
        parent[path[-1]] = value
    return pod


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # examples: the profile's
@given(data=st.data())
def test_mutated_pods_never_raise_and_keep_dtypes(data: st.DataObject) -> None:
    pod: Any = copy.deepcopy(EXAMPLE_POD)
    for _ in range(data.draw(st.integers(1, 5), label="mutations")):
        candidates = list(paths(pod))
        path = data.draw(st.sampled_from(candidates), label="path")
        action = data.draw(st.sampled_from(["replace", "delete", "add"]), label="action")
        pod = mutate(pod, path, action, data.draw(json_values, label="value"))

    listing = {"pods": [pod, EXAMPLE_POD]}
    if not isinstance(pod, dict):  # no pod at all: refused by name
        with pytest.raises(ValueError, match=r"pod 0 is .*, not a pod object"):
            pods_frame(listing, cluster_id=CLUSTER)
        return
    df = pods_frame(listing, cluster_id=CLUSTER)
    assert_documented_dtypes(df, POD_COLUMNS)
    assert len(df) == 2
    assert_documented_dtypes(gpus_frame(listing), GPU_COLUMNS)

    # The raw-JSON path reads the same, whenever the mutated pod survives JSON intact.
    try:
        encoded = orjson.dumps(listing)
    except (TypeError, orjson.JSONEncodeError):
        encoded = None
    if encoded is not None and orjson.loads(encoded) == listing:
        pd.testing.assert_frame_equal(pods_frame(encoded, cluster_id=CLUSTER), df)

    # Models of the mutated pod: never a crash either, and env values stay out.
    if isinstance(pod, dict):
        model = Pod.model_validate(pod)
        from_model = pods_frame([model])
        assert_documented_dtypes(from_model, POD_COLUMNS)
        assert_documented_dtypes(gpus_frame([model]), GPU_COLUMNS)
        env = model.env or {}
        text = from_model.to_csv()
        for secret in env.values():
            value = secret.get_secret_value()
            if len(value) >= 8:
                assert value not in text


def test_example_pod_from_the_brief_reads_as_documented() -> None:
    pod = {
        "id": "pod-3f9a1c",
        "name": "llama70b-r013",
        "cost": 23.92,
        "createdAt": "2026-11-18T09:12:44Z",
        "startedAt": "2026-11-18T09:15:02.123Z",
        "runtime": {
            "uptime": 183512.0,
            "gpus": [{"util": 93.1, "memoryUtil": 71.2}, {"util": 80.0, "memoryUtil": 60.0}],
            "cpu": {"util": 34.0},
            "memory": {"util": 61.0},
        },
        "gpu": {"id": "NVIDIA H100 80GB HBM3", "count": 8},
        "cluster": {"id": "cl-llama70b", "rank": 13, "ip": "10.65.0.13"},
    }
    row = pods_frame([pod]).iloc[0]
    assert row["gpu_util_mean"] == pytest.approx((93.1 + 80.0) / 2)
    assert row["gpu_util_max"] == 93.1
    assert row["gpu_mem_util_mean"] == pytest.approx((71.2 + 60.0) / 2)
    assert row["started_at"] == pd.Timestamp(
        datetime.fromisoformat("2026-11-18T09:15:02.123+00:00")
    )
    assert row["rank"] == 13


# -- misuse: input that is plainly not pods -------------------------------------------


@pytest.mark.parametrize(
    "wrong",
    [
        pytest.param(lambda frame: frame, id="dataframe"),
        pytest.param(lambda frame: frame["pod_id"], id="series"),
        pytest.param(lambda frame: ["cl-a", "cl-b"], id="cluster ids"),
        pytest.param(lambda frame: ("cl-a",), id="tuple of ids"),
        pytest.param(lambda frame: [1, 2, 3], id="numbers"),
        pytest.param(lambda frame: [1.5, None], id="floats and None"),
    ],
)
@pytest.mark.parametrize("function", [pods_frame, gpus_frame])
def test_input_that_is_plainly_not_pods_is_a_type_error_saying_what_to_pass(
    frame: pd.DataFrame, wrong: Callable[[pd.DataFrame], Any], function: Any
) -> None:
    with pytest.raises(TypeError, match="load_cluster_frames") as caught:
        function(wrong(frame))
    assert function.__name__ in str(caught.value)


def test_listings_with_junk_elements_are_refused_naming_the_element() -> None:
    """A listing element that is not a pod object is named, never dropped."""
    for listing in ({"pods": ["x", 3]}, b'{"pods": ["x", 3]}'):
        with pytest.raises(ValueError, match="pod 0 is a string, not a pod object"):
            pods_frame(listing)
    with pytest.raises(ValueError, match="pod 0 is null, not a pod object"):
        pods_frame([None, None])


def test_pods_frame_does_not_import_pydantic() -> None:
    import subprocess
    import sys

    code = (
        "import sys, ccanalytics\n"
        'ccanalytics.pods_frame(b\'{"pods": [{"id": "p"}]}\')\n'
        "ccanalytics.gpus_frame([{'id': 'p'}])\n"
        "print('pydantic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"

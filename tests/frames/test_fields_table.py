"""The pod field table (``POD_FIELDS``) against everything derived from it or kept beside it.

The readers are generated from the table, so these tests check what the generation
must guarantee (each row slot holds the value at its path, on both reading paths),
and that the table agrees with the two things not derived from it: the provider's
published document and the sandbox's pods.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import msgspec
import orjson
import pytest
from openapi_document import documented_pod_paths

from ccanalytics.frames import POD_COLUMNS, pods_frame
from ccanalytics.frames._columns import POD_FIELDS, READS
from ccanalytics.frames._decode import decoded_rows, split_listing
from ccanalytics.frames._fields import (
    NAMES_ONLY,
    SOURCES,
    VALUE_TYPES,
    PodFields,
    dict_row,
    element_key,
    source,
)
from ccanalytics.sandbox import make_data

#: Paths of the document's Pod that are deliberately not columns, and why.
NOT_COLUMNS = {
    "args": "command lines often carry tokens",
    "ssh.proxy.username": "an opaque routing token",
    "ssh.proxy.command": "ssh.proxy.host and port, as a command",
    "ssh.direct.username": "a user name: ssh.direct.host and port say where",
    "ssh.direct.command": "ssh.direct.host and port, as a command",
    "runtime.ports[].private": "counted (runtime_ports), not listed",
    "runtime.ports[].public": "counted (runtime_ports), not listed",
    "runtime.ports[].type": "counted (runtime_ports), not listed",
    "runtime.ports[].ip": "counted (runtime_ports), not listed",
}
#: Table paths the v2 document does not have: read from older payloads.
LEGACY = {"desiredStatus"}


def _read(path: str) -> bool:
    """Whether a column reads ``path``, or something inside it."""
    return any(f.path == path or f.path.startswith((f"{path}.", f"{path}[]")) for f in POD_FIELDS)


def test_every_table_path_is_in_the_document() -> None:
    documented = documented_pod_paths()
    assert {"cost", "runtime.gpus[].util", "ports[]", "env", "mounts.persistent.size"} <= documented
    unknown = {f.path for f in POD_FIELDS} - documented - LEGACY
    assert not unknown, f"POD_FIELDS reads paths the document does not have: {sorted(unknown)}"


def test_every_documented_field_is_a_column_or_left_out_on_purpose() -> None:
    missing = {p for p in documented_pod_paths() if not _read(p)} - set(NOT_COLUMNS)
    assert not missing, f"documented pod fields no column reads: {sorted(missing)}"
    assert not set(NOT_COLUMNS) & {f.path for f in POD_FIELDS}, "NOT_COLUMNS is out of date"


def test_the_table_is_the_pods_frame_columns_in_order() -> None:
    assert list(POD_COLUMNS) == [f.column for f in POD_FIELDS]
    assert list(pods_frame([])) == [f.column for f in POD_FIELDS]
    for field in POD_FIELDS:
        assert POD_COLUMNS[field.column].dtype == field.dtype
        assert field.path in POD_COLUMNS[field.column].meaning
        assert field.read in READS


def _value_at(pod: Any, path: str) -> Any:
    for key in path.split("."):
        pod = pod.get(key) if isinstance(pod, dict) else None
    return pod


def _own_value(index: int, path: str) -> Any:
    """A value of the type the typed decoder reads at ``path``, unique to ``index``."""
    kind = VALUE_TYPES.get(path, str)
    if kind is bool:
        return index % 2 == 0
    return f"value-{index}" if kind is str else kind(index) + (0.5 if kind is float else 0)


def _pod_with_a_value_at_every_path() -> dict[str, Any]:
    """A pod whose every source path holds a value of its own (a list for lists), each
    of the type its column reads, so that the typed decoder takes the whole pod."""
    pod: dict[str, Any] = {}
    for index, path in enumerate(SOURCES):
        *blocks, key = path.split(".")
        block = pod
        for name in blocks:
            block = block.setdefault(name, {})
        if path in NAMES_ONLY:
            block[key] = {f"NAME_{index}": "sbx-secret-value"}
        elif keys := [
            k for f in POD_FIELDS if source(f.path) == path and (k := element_key(f.path))
        ]:
            # The keys read, no others.
            block[key] = [{k: _own_value(index, f"{path}.{k}") for k in keys}]
        elif any(f.path == f"{path}[]" for f in POD_FIELDS):
            block[key] = [f"value-{index}"] if path in _JOINED else [{}]  # counted
        else:
            block[key] = _own_value(index, path)
    return pod


#: The lists whose items are joined as strings (the others' objects are counted).
_JOINED = {source(f.path) for f in POD_FIELDS if f.read == "join" and not element_key(f.path)}


@pytest.mark.parametrize("reader", ["dicts", "structs"])
def test_each_row_slot_holds_the_value_at_its_path(reader: str) -> None:
    """No positional tuple is kept in order by hand: slot i is SOURCES[i], on both paths."""
    pod = _pod_with_a_value_at_every_path()
    if reader == "dicts":
        row = dict_row(pod)
    else:
        raws = split_listing(orjson.dumps({"pods": [pod]}), bare_array=False, null_pods=False)
        assert isinstance(raws, list)
        (row,), checked = decoded_rows(raws)  # type: ignore[call-arg]
        assert checked, "the pod was read as dicts, not by the typed structs"
    assert len(row) == len(SOURCES)
    for path, value in zip(SOURCES, row, strict=True):
        sent = _value_at(pod, path)
        if path in NAMES_ONLY:
            # The names only, already as the cell (sorted, comma-joined); never the values.
            assert value == ",".join(sorted(sent)), path
        elif isinstance(sent, list):
            assert [msgspec.to_builtins(v) for v in value] == sent, path
        else:
            assert value == sent, path


def test_fields_are_named_by_path() -> None:
    fields = PodFields.of([dict_row({"id": "a", "cluster": {"rank": 3}}), dict_row({})])
    assert list(fields) == list(SOURCES)
    assert list(fields["id"]) == ["a", None]
    assert list(fields["cluster.rank"]) == [3, None]
    assert list(PodFields.of([])["cost"]) == []


def _sandbox_pods() -> list[dict[str, Any]]:
    return [pod for pods in make_data().clusters.values() for pod in pods]


@pytest.mark.parametrize("path", sorted({f.path for f in POD_FIELDS} - LEGACY))
def test_the_sandbox_serves_every_table_path(path: str) -> None:
    """Every path the frames read is filled in some pod the sandbox serves, so the
    sandbox exercises every column (sandbox/_pod.py is not derived from the table)."""
    list_path, _, key = path.partition("[]")
    values = [_value_at(pod, list_path) for pod in _sandbox_pods()]
    if key:  # x[].k: some object of some list has k
        values = [item.get(key[1:]) for v in values if isinstance(v, list) for item in v]
    elif path.endswith("[]"):
        values = [v for v in values if v]  # a non-empty list
    assert any(v is not None for v in values), f"no sandbox pod has {path}"


_ONE_MORE_LINE = """
import importlib.util, json, pathlib, sys

# The pod field table as it would read with a line added after its last column,
# imported in place of the real one before anything derives from it.
spec = importlib.util.find_spec("ccanalytics.api.podfields")
text = pathlib.Path(spec.origin).read_text(encoding="utf-8")
end = "\\n    # The document's fields that no column reads"
assert text.count(end) == 1
text = text.replace(end, "\\n" + sys.argv[1] + end)
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
exec(compile(text, spec.origin, "exec"), module.__dict__)

from ccanalytics.frames import POD_COLUMNS, pods_frame

pod = {"id": "p", "ssh": {"proxy": {"username": "u1"}}, "mounts": {"network": [{"path": "/d"}]}}
for listing in (json.dumps({"pods": [pod]}).encode(), [pod]):  # structs, then dicts
    frame = pods_frame(listing)
    print(list(frame.columns) == list(POD_COLUMNS), frame.iloc[:, -1].tolist(), frame.dtypes.iloc[-1])
"""


@pytest.mark.parametrize(
    ("line", "cells"),
    [
        ('    PodField("proxy_user", "ssh.proxy.username", _S, "", ""),', "['u1']"),
        (
            '    PodField("volume_paths", "mounts.network[].path", _S, "", "", read="join"),',
            "['/d']",
        ),
    ],
)
def test_a_new_field_is_one_line_of_the_table(line: str, cells: str) -> None:
    """One line added to the pod field table (api/podfields.py), and nothing else, is
    a column on both reading paths (the struct decoder and the dict reader), in the
    table's place."""
    run = subprocess.run(
        [sys.executable, "-c", _ONE_MORE_LINE, line], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == [f"True {cells} string"] * 2

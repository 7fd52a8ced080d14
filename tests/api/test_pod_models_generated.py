"""The pod models are generated from the pod field table, and the committed code is current.

``ccanalytics/api/models.py`` holds the models of ``Pod`` and its blocks as code written
by ``python -m ccanalytics.api._podgen`` from ``ccanalytics/api/podfields.py``: these
tests fail when the two differ (as ``docs/generate.py --check`` does for the docs),
check the table against the provider's document, and show that a new field is one
line of the table, for the model and the frames alike.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from openapi_document import SPEC, documented_pod_paths

from ccanalytics.api import _podgen
from ccanalytics.api.podfields import MODELS, POD_TABLE, PodField

#: Table paths the v2 document does not have: read from older payloads.
LEGACY = {"desiredStatus"}


def test_the_committed_models_are_what_the_table_generates() -> None:
    text = _podgen.MODELS_PY.read_text(encoding="utf-8")
    assert _podgen.generated(text) == text, "run: python -m ccanalytics.api._podgen"
    run = subprocess.run(
        [sys.executable, "-m", "ccanalytics.api._podgen", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr


def test_a_hand_edit_is_undone_by_the_generator() -> None:
    text = _podgen.MODELS_PY.read_text(encoding="utf-8")
    edited = text.replace("    cost: Lenient[float] = None\n", "    cost: Lenient[str] = None\n")
    assert edited != text
    assert _podgen.generated(edited) == text  # the table's type is back


@pytest.mark.skipif(not SPEC.exists(), reason="the provider's document is not beside the repo")
def test_the_table_has_every_documented_path_and_no_other() -> None:
    documented = documented_pod_paths()
    lines = {f.path for f in POD_TABLE}
    assert not (lines - LEGACY) - documented, "POD_TABLE has paths the document lacks"
    # A block (an object, or a list of objects) is declared by the lines inside it.
    assert not documented - lines - set(MODELS), "the document has paths POD_TABLE lacks"


_ONE_MORE_LINE = """
import importlib.util, json, pathlib, sys

# The table with one line more, imported in place of the real one; then models.py as
# the generator rewrites it from that table, imported in place of the committed one.
spec = importlib.util.find_spec("ccanalytics.api.podfields")
text = pathlib.Path(spec.origin).read_text(encoding="utf-8")
end = "\\n    # The document's fields that no column reads"
assert text.count(end) == 1
table = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = table
exec(compile(text.replace(end, "\\n" + sys.argv[1] + end), spec.origin, "exec"), table.__dict__)

from ccanalytics.api import _podgen

spec = importlib.util.find_spec("ccanalytics.api.models")
models = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = models
code = _podgen.generated(_podgen.MODELS_PY.read_text(encoding="utf-8"))
exec(compile(code, spec.origin, "exec"), models.__dict__)

from ccanalytics.frames import pods_frame

pod = models.Pod.model_validate({"id": "p", "zone": "z1", "cluster": {"slot": "4"}})
frames = [pods_frame(pods) for pods in ([pod], [pod.model_dump(by_alias=True)])]
print(json.dumps(default=int, obj={
    "pod": list(models.Pod.model_fields)[-1],
    "cluster": list(models.ClusterMembership.model_fields)[-1],
    # What stays an untyped extra, then the values (an extra's read as sent).
    "values": [pod.model_extra, pod.cluster.model_extra, pod.zone, pod.cluster.slot],
    "columns": [[f.columns[-1], f.iloc[0, -1], str(f.dtypes.iloc[-1])] for f in frames],
}))
"""


@pytest.mark.parametrize(
    ("line", "declared", "column"),
    [
        # A field of the pod itself, read as a column.
        (
            '    PodField("zone", "zone", _S, "", "where the pod runs"),',
            {"pod": "zone", "values": [{}, {"slot": "4"}, "z1", "4"]},
            ["zone", "z1", "string"],
        ),
        # A field of a block, declared on its model (typed: "4" is read as 4).
        (
            '    PodField("slot", "cluster.slot", _I, "", ""),',
            {"cluster": "slot", "values": [{"zone": "z1"}, {}, "z1", 4]},
            ["slot", 4, "Int64"],
        ),
    ],
)
def test_a_new_field_is_one_line_of_the_table(
    line: str, declared: dict[str, object], column: list[object]
) -> None:
    """One line added to the table, then the generator: the model declares the field
    (typed, no longer an extra), after its other fields, and the frames read it as a
    column, from models and from dicts alike."""
    run = subprocess.run(
        [sys.executable, "-c", _ONE_MORE_LINE, line], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout)
    assert {k: seen[k] for k in declared} == declared
    assert seen["columns"] == [column, column]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (PodField("", "zone", "", "", "", value="text"), "unknown value type"),
        (PodField("", "cost", "", "", "", value="int"), "two lines give it two types"),
        (PodField("", "zone", "", "", ""), "needs either a value type or a model"),
        (PodField("", "gpu.id.x", "", "", "", value="str"), "gpu.id has no model"),
        (PodField("", "placement.zone", "", "", "", value="str"), "placement has no model"),
        (PodField("", "GPUType", "", "", "", value="str"), "not a camelCase key"),
        (PodField("", "class", "", "", "", value="str"), "not a camelCase key"),
    ],
)
def test_a_table_the_models_cannot_come_from_is_refused(
    monkeypatch: pytest.MonkeyPatch, line: PodField, message: str
) -> None:
    monkeypatch.setattr(_podgen, "POD_TABLE", (*POD_TABLE, line))
    with pytest.raises(RuntimeError, match=message):
        _podgen.render()

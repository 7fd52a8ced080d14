"""The Pod model declares every field of the published document that the frames read."""

from __future__ import annotations

from typing import get_args, get_origin

import pytest
from openapi_document import SPEC, documented_pod_paths
from pydantic import BaseModel

from ccanalytics import Pod
from ccanalytics.frames import pods_frame
from ccanalytics.frames._columns import POD_FIELDS

#: The provider's published document, as recorded beside the tests.


@pytest.mark.parametrize(
    ("field", "value"),
    [("status", "RUNNING"), ("cloud", "SECURE"), ("desired_status", "RUNNING")],
)
def test_status_and_cloud_are_declared_typed_fields(field: str, value: str) -> None:
    alias = {"desired_status": "desiredStatus"}.get(field, field)
    pod = Pod.model_validate({"id": "p", alias: value})
    assert field in Pod.model_fields
    assert getattr(pod, field) == value
    assert field not in (pod.model_extra or {}) and alias not in (pod.model_extra or {})


def test_a_wrongly_typed_status_is_none_not_a_crash() -> None:
    # Lenient like every response field: the frames say <NA>, the model None.
    assert Pod.model_validate({"id": "p", "status": 3, "cloud": ["x"]}).status is None


def test_models_and_raw_dicts_give_the_same_status_and_cloud_columns() -> None:
    raw = [{"id": "a", "status": "EXITED", "cloud": "COMMUNITY"}, {"id": "b"}]
    from_models = pods_frame([Pod.model_validate(p) for p in raw])
    from_dicts = pods_frame(raw)
    for column in ("status", "cloud"):
        assert from_models[column].tolist() == from_dicts[column].tolist()


def _declared_paths(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Every path the model declares, in the field table's notation (``runtime.gpus[].util``)."""
    paths: set[str] = set()
    for name, field in model.model_fields.items():
        path = prefix + (field.alias or name)
        kinds = [a for a in get_args(field.annotation) if a is not type(None)] or [field.annotation]
        for kind in kinds:
            paths.add(path)
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                paths |= _declared_paths(kind, f"{path}.")
            elif get_origin(kind) is list:
                paths.add(f"{path}[]")
                (item,) = get_args(kind)
                if isinstance(item, type) and issubclass(item, BaseModel):
                    paths |= _declared_paths(item, f"{path}[].")
    return paths


def test_every_path_the_frames_read_is_a_field_of_pod() -> None:
    """The pods frame's columns and the Pod model agree (both come from POD_TABLE)."""
    declared = _declared_paths(Pod)
    assert {"cost", "runtime.gpus[].util", "mounts.network[].volumeId", "env"} <= declared
    undeclared = {f.path for f in POD_FIELDS} - declared
    assert not undeclared, f"Pod lacks fields the frames read: {sorted(undeclared)}"


@pytest.mark.skipif(not SPEC.exists(), reason="the provider's document is not beside the repo")
def test_every_documented_pod_path_is_declared_at_every_depth() -> None:
    documented = documented_pod_paths()
    assert {"status", "runtime.gpus[].util", "mounts.persistent.size", "env"} <= documented
    undeclared = documented - _declared_paths(Pod)
    assert not undeclared, f"Pod lacks documented fields: {sorted(undeclared)}"

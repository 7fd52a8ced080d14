"""The Pod model declares every field of the published document that the frames read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccanalytics import Pod
from ccanalytics.frames import pods_frame

SPEC = Path(__file__).parents[3] / "shared" / "spec" / "provider-openapi-v2.json"


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


@pytest.mark.skipif(not SPEC.exists(), reason="the provider's document is not beside the repo")
def test_every_top_level_pod_property_of_the_document_is_declared() -> None:
    schemas = json.loads(SPEC.read_text(encoding="utf-8"))["components"]["schemas"]

    def properties(name: str) -> set[str]:  # through allOf, as the document composes Pod
        schema = schemas[name]
        found = set(schema.get("properties", {}))
        for part in schema.get("allOf", []):
            ref = part.get("$ref")
            found |= properties(ref.rsplit("/", 1)[1]) if ref else set(part.get("properties", {}))
        return found

    documented = properties("Pod")
    assert {"status", "cloud", "cost", "runtime"} <= documented  # the walk found the fields
    declared = {f.alias or name for name, f in Pod.model_fields.items()} | set(Pod.model_fields)
    assert not documented - declared, f"Pod lacks {sorted(documented - declared)}"

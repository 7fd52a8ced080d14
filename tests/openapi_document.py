"""The provider's published OpenAPI document (the copy in ``tests/data``), walked once.

``documented_pod_paths()`` is every path of the document's ``Pod`` at every depth,
through ``allOf``, ``$ref`` and nullable ``anyOf``, in the field table's notation
(``runtime``, ``runtime.gpus[]``, ``runtime.gpus[].util``): what the frames' table and
the pydantic model are both checked against.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["SPEC", "documented_pod_paths"]

SPEC = Path(__file__).parent / "data" / "provider-openapi-v2.json"


def documented_pod_paths() -> set[str]:
    """Every path of the document's Pod (see the module docstring)."""
    schemas = json.loads(SPEC.read_text(encoding="utf-8"))["components"]["schemas"]

    def resolve(schema: dict[str, Any]) -> dict[str, Any]:
        ref = schema.get("$ref")
        return resolve(schemas[ref.rsplit("/", 1)[1]]) if ref else schema

    def properties(schema: dict[str, Any]) -> dict[str, Any]:
        schema = resolve(schema)
        found = dict(schema.get("properties", {}))
        for part in [*schema.get("allOf", []), *schema.get("anyOf", [])]:
            found |= properties(part)
        return found

    def paths(schema: dict[str, Any], path: str) -> set[str]:
        schema = resolve(schema)
        if schema.get("type") == "array":
            inner = properties(schema.get("items", {}))
            return {f"{path}[]"} | {p for k, v in inner.items() for p in paths(v, f"{path}[].{k}")}
        return {path} | {p for k, v in properties(schema).items() for p in paths(v, f"{path}.{k}")}

    return {p for k, v in properties(schemas["Pod"]).items() for p in paths(v, k)}

"""The three operations' shapes: their paths, the PUT body, and what a 2xx must hold.

The shape checks *return* a :class:`MalformedResponseError` instead of raising it:
the request loop raises it, from a frame that holds no part of the body.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ccanalytics._json import not_a_pod
from ccanalytics.api._response import shape_error
from ccanalytics.api._url import path_segment
from ccanalytics.api.models import Pod, Registry, SshKeys, UpdateSshKeysRequest
from ccanalytics.errors import InvalidSshKeysError, MalformedResponseError
from ccanalytics.keys.api_rule import api_key_error

__all__ = [
    "SSH_KEYS_PATH",
    "pod_dicts_or_error",
    "pods_or_error",
    "pods_path",
    "registry_or_error",
    "registry_path",
    "ssh_keys_body",
    "ssh_keys_or_error",
]

SSH_KEYS_PATH = "/v2/account/ssh-keys"


def pods_path(cluster_id: str) -> str:
    return f"/v2/clusters/{path_segment(cluster_id, 'cluster_id')}/pods"


def registry_path(registry_id: str) -> str:
    return f"/v2/registries/{path_segment(registry_id, 'registry_id')}"


# -- the PUT body, checked locally first ---------------------------------------------------


def _utf8_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _keys_argument(keys: object) -> list[str]:
    """The replacement set, refusing anything that could remove keys by accident."""
    if isinstance(keys, str | bytes):
        raise TypeError("keys must be a list of key lines, not a single string")
    if keys is None or not isinstance(keys, Iterable):
        raise TypeError(f"keys must be a list of key lines, not {type(keys).__name__}")
    if isinstance(keys, Mapping):
        raise TypeError("keys must be a list of key lines, not a mapping")
    materialised = list(keys)
    if not materialised and not isinstance(keys, list):
        raise ValueError(
            "refusing to remove every SSH key: got an empty "
            f"{type(keys).__name__}; pass [] explicitly to remove all keys"
        )
    return materialised


def _key_problem(index: int, key: str) -> str | None:
    error = api_key_error(index, key)
    if error is None and not _utf8_encodable(key):
        # The pattern lets a lone surrogate through (text decoded with
        # surrogateescape), but no UTF-8 request body can carry it.
        error = f"$.keys[{index}]: is not valid Unicode text (contains a lone surrogate)"
    return error


def ssh_keys_body(keys: object) -> dict[str, list[str]]:
    """The PUT body, or :class:`InvalidSshKeysError` listing every key the server would refuse."""
    materialised = _keys_argument(keys)
    problems = [p for i, key in enumerate(materialised) if (p := _key_problem(i, key))]
    if problems:
        raise InvalidSshKeysError(problems)
    return UpdateSshKeysRequest(keys=materialised).model_dump()


# -- what a 2xx must hold -----------------------------------------------------------------


def pod_dicts_or_error(data: Any) -> list[dict[str, Any]] | MalformedResponseError:
    """The listing's pods as dicts; an element that is not an object refuses the listing
    (dropped, its pod would be left out of every count and sum without a word)."""
    pods = data.get("pods") if isinstance(data, dict) else None
    if not isinstance(pods, list):
        return shape_error("an object with a 'pods' list", data if pods is None else pods)
    for index, pod in enumerate(pods):
        if not isinstance(pod, dict):
            why = f"expected a list of pod objects: {not_a_pod(index, pod)}"
            return MalformedResponseError(
                why, status=200, title="Malformed response", detail="expected a list of pod objects"
            )
    return pods


def pods_or_error(data: Any) -> list[Pod] | MalformedResponseError:
    pods = pod_dicts_or_error(data)
    if isinstance(pods, MalformedResponseError):
        return pods
    return [Pod.model_validate(p) for p in pods]


#: What the published document's ``Registry`` requires, each a string.
REGISTRY_REQUIRED = ("id", "name")


def registry_or_error(data: Any) -> Registry | MalformedResponseError:
    # A 200 that is not a registry (the service routes /v2/registries/delegations to its
    # delegations list) must not read as Registry(id=None, name=None).
    want = "a registry object with string 'id' and 'name'"
    if not isinstance(data, dict):
        return shape_error("an object", data)
    lacking = [key for key in REGISTRY_REQUIRED if not isinstance(data.get(key), str)]
    if lacking:
        return MalformedResponseError(
            f"expected {want}; {' and '.join(repr(k) for k in lacking)} missing or not a string",
            status=200,
            title="Malformed response",
            detail=f"expected {want}",
        )
    return Registry.model_validate(data)


def ssh_keys_or_error(data: Any) -> SshKeys | MalformedResponseError:
    # After a replacement the caller must learn the key set, never get None for it.
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, list):
        return shape_error("an object with a 'keys' list", data if keys is None else keys)
    return SshKeys.model_validate(data)

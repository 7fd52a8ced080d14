"""A registry 200 without its required ``id`` and ``name`` is malformed.

The published document's ``Registry`` requires ``id`` and ``name`` (strings). The real
service routes ``GET /v2/registries/delegations`` to its delegations list, so
``get_registry("delegations")`` answers 200 with ``{"delegations": [...]}``: that is not a
registry, and must be a :class:`MalformedResponseError`, never ``Registry(id=None)``.
Over real loopback HTTP, on the sync and the async client.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from loopback import json_body, raw_server

from ccanalytics import AsyncClient, Client, MalformedResponseError

KEY = "sk-test-registry"
REQUIRED = ("id", "name")
NOT_STRINGS = st.one_of(
    st.none(), st.integers(), st.booleans(), st.lists(st.text(max_size=3), max_size=2)
)


@st.composite
def bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A registry object with at least one required field missing or not a string."""
    body: dict[str, Any] = {"id": "reg_abc", "name": "my-private-registry"}
    broken = draw(st.sets(st.sampled_from(REQUIRED), min_size=1))
    for field in broken:
        if draw(st.booleans()):
            del body[field]
        else:
            body[field] = draw(NOT_STRINGS)
    extra = draw(st.dictionaries(st.sampled_from(["delegations", "url", "kind"]), st.integers()))
    return {**extra, **body}


@pytest.fixture(scope="module")
def one_server() -> Iterator[tuple[str, list[bytes]]]:
    served = [b""]
    with raw_server(json_body(lambda: served[0])) as url:
        yield url, served


def _sync(url: str, registry_id: str) -> Any:
    with Client(KEY, url, max_retries=0) as client:
        return client.get_registry(registry_id)


def _async(url: str, registry_id: str) -> Any:
    async def main() -> Any:
        async with AsyncClient(KEY, url, max_retries=0) as client:
            return await client.get_registry(registry_id)

    return asyncio.run(main())


CALLS = {"sync": _sync, "async": _async}


@pytest.mark.parametrize("call", list(CALLS))
def test_the_delegations_list_is_not_a_registry(
    one_server: tuple[str, list[bytes]], call: str
) -> None:
    url, served = one_server
    served[0] = json.dumps({"delegations": [{"id": "del_1", "name": "ci"}]}).encode()
    with pytest.raises(MalformedResponseError) as caught:
        CALLS[call](url, "delegations")
    message = str(caught.value)
    assert "'id'" in message and "'name'" in message
    assert f"GET {url}/v2/registries/delegations" in message


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(body=bodies())
@pytest.mark.parametrize("call", list(CALLS))
def test_a_registry_without_a_string_id_and_name_is_malformed(
    one_server: tuple[str, list[bytes]], call: str, body: dict[str, Any]
) -> None:
    url, served = one_server
    served[0] = json.dumps(body).encode()
    with pytest.raises(MalformedResponseError, match="registry"):
        CALLS[call](url, "reg_abc")


@pytest.mark.parametrize("call", list(CALLS))
def test_a_registry_with_its_required_fields_still_reads(
    one_server: tuple[str, list[bytes]], call: str
) -> None:
    url, served = one_server
    served[0] = json.dumps({"id": "reg_abc", "name": "my-private-registry"}).encode()
    registry = CALLS[call](url, "reg_abc")
    assert (registry.id, registry.name) == ("reg_abc", "my-private-registry")

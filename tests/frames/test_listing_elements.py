"""A listing element that is not a pod object is never dropped in silence.

``{"pods": [<pod>, 5]}`` (or ``null``, a string, an array, ``NaN``, ``Infinity``) is not
the documented listing, an array of ``Pod`` objects: dropping the element would leave a
cost out of every sum with no word said. On every path a user has (the sync and async
clients' models, the frames loader over HTTP, ``pods_frame`` of bytes or of Python
objects) the listing is one typed error naming the element by its place; ``NaN`` and
``Infinity`` are named as what they are: not JSON.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from loopback import json_body, raw_server

import ccanalytics
from ccanalytics import AsyncClient, Client, MalformedResponseError

DATA = Path(__file__).resolve().parents[1] / "data"
POD = json.loads((DATA / "listing_document_full.json").read_text())["pods"][0]
KEY = "sk-test-elements"

#: JSON text of elements that are not objects -> the words naming their kind.
NOT_OBJECTS = {
    "5": "a number",
    "-2.5": "a number",
    "null": "null",
    '"pod-x"': "a string",
    "true": "a boolean",
    "[]": "an array",
    '[{"id": "pod-in-a-list"}]': "an array",
}
#: Constants JSON does not have (the standard library reads them; the service must not send them).
NOT_JSON = ["NaN", "Infinity", "-Infinity"]


def _listing(elements: list[str]) -> bytes:
    return ('{"pods": [' + ", ".join(elements) + "]}").encode()


def _good(i: int) -> str:
    return json.dumps(dict(POD, id=f"pod-{i}", name=f"pod-{i}"))


@st.composite
def listings(draw: st.DrawFn) -> tuple[bytes, int, str]:
    """(a listing of good pods with one bad element, the bad one's place, its JSON text)."""
    good = draw(st.integers(min_value=0, max_value=4))
    place = draw(st.integers(min_value=0, max_value=good))
    bad = draw(st.sampled_from([*NOT_OBJECTS, *NOT_JSON]))
    elements = [_good(i) for i in range(good)]
    elements.insert(place, bad)
    return _listing(elements), place, bad


def _expected(place: int, bad: str) -> str:
    if bad in NOT_JSON:
        return f"{bad} is not JSON"
    return f"pod {place} is {NOT_OBJECTS[bad]}, not a pod object"


@pytest.fixture(scope="module")
def one_server() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback server whose body the test sets (``bodies[0]``) before each request."""
    bodies = [b""]
    with raw_server(json_body(lambda: bodies[0])) as url:
        yield url, bodies


def _models_sync(url: str) -> Any:
    with Client(KEY, url, max_retries=0) as client:
        return client.list_cluster_pods("cl-x")


def _models_async(url: str) -> Any:
    async def main() -> Any:
        async with AsyncClient(KEY, url, max_retries=0) as client:
            return await client.list_cluster_pods("cl-x")

    return asyncio.run(main())


def _loader(url: str) -> Any:
    async def main() -> Any:
        async with AsyncClient(KEY, url, max_retries=0) as client:
            return await ccanalytics.aload_cluster_pods("cl-x", client=client, progress=False)

    return asyncio.run(main())


def _loader_collect(url: str) -> Any:
    with Client(KEY, url, max_retries=0) as client:
        frame = ccanalytics.load_cluster_pods(
            "cl-x", client=client, progress=False, errors="collect"
        )
    assert len(frame) == 0  # the listing is refused whole: none of its pods is framed
    raise MalformedResponseError(frame.attrs["errors"]["cl-x"], status=200)


HTTP_PATHS: dict[str, Callable[[str], Any]] = {
    "models-sync": _models_sync,
    "models-async": _models_async,
    "loader-async": _loader,
    "loader-collect": _loader_collect,
}


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=listings())
@pytest.mark.parametrize("path", list(HTTP_PATHS))
def test_a_non_pod_element_over_http_is_a_malformed_response_naming_it(
    one_server: tuple[str, list[bytes]], path: str, case: tuple[bytes, int, str]
) -> None:
    url, bodies = one_server
    body, place, bad = case
    bodies[0] = body
    with pytest.raises(MalformedResponseError) as caught:
        HTTP_PATHS[path](url)
    assert _expected(place, bad) in str(caught.value)


@settings(max_examples=60, deadline=None)
@given(case=listings())
def test_pods_frame_of_bytes_with_a_non_pod_element_raises_naming_it(
    case: tuple[bytes, int, str],
) -> None:
    body, place, bad = case
    with pytest.raises(ValueError, match=r"^pods_frame\(\): pods is ") as caught:
        ccanalytics.pods_frame(body)
    assert _expected(place, bad) in str(caught.value)


@pytest.mark.parametrize(
    ("element", "kind"),
    [
        (5, "a number"),
        (None, "null"),
        ("pod-x", "a string"),
        ([POD], "an array"),
        (float("nan"), "a number"),
        (object(), "object"),
    ],
)
def test_pods_frame_of_python_objects_with_a_non_pod_element_raises_naming_it(
    element: object, kind: str
) -> None:
    with pytest.raises(ValueError) as caught:
        ccanalytics.pods_frame([POD, element])
    assert f"pod 1 is {kind}, not a pod object" in str(caught.value)

"""Hostile listing bodies over real loopback HTTP: the good pods come back, or one typed error.

Every body is served by a tiny raw server on 127.0.0.1 and read through each path a user
has: ``Client`` and ``AsyncClient.list_cluster_pods`` (models), ``load_cluster_pods``
(frames), ``pods_frame(bytes)`` and ``collect``. A value the library cannot use is
``None``/``<NA>`` in its cell and costs only that cell; a body that is not a listing is
one :class:`~ccanalytics.CCAnalyticsError` naming the request, never a raw
``RecursionError``, ``UnicodeDecodeError`` or ``msgspec`` error.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from loopback import json_body, raw_server

import ccanalytics
from ccanalytics import AsyncClient, CCAnalyticsError, Client
from ccanalytics.errors import ResponseTooLargeError

DATA = Path(__file__).resolve().parents[1] / "data"
PODS = json.loads((DATA / "listing_document_full.json").read_text())["pods"]
GOOD = [dict(PODS[0], id=f"pod-good-{i}", name=f"good-{i}") for i in range(3)]
KEY = "sk-test-hostile"


def serving(body: bytes, *, length: int | None = None) -> Any:
    """A loopback server answering every request with ``body`` (as application/json)."""
    return raw_server(json_body(body, length=length, hold=2.0 if length is not None else 0.0))


def _listing(*pods: dict[str, Any] | str) -> bytes:
    """A listing; a ``str`` pod is spliced in as raw JSON text."""
    parts = [p if isinstance(p, str) else json.dumps(p) for p in pods]
    return ('{"pods": [' + ", ".join(parts) + "]}").encode()


def _bad_cost(number: str) -> str:
    return json.dumps(dict(PODS[0], id="pod-bad", name="bad")).replace(
        '"cost": ', f'"cost": {number}, "was": ', 1
    )


def _deep_pod(depth: int = 100_000) -> str:
    pod = json.dumps(dict(PODS[0], id="pod-deep", name="deep"))
    return pod[:-1] + ', "runtime_extra": ' + "[" * depth + "]" * depth + "}"


# -- each path a user has, as a function of the base URL -------------------------------


def _models_sync(url: str) -> list[Any]:
    with Client(KEY, url, max_retries=0) as client:
        return [(p.id, p.cost) for p in client.list_cluster_pods("cl-x")]


def _models_async(url: str) -> list[Any]:
    async def main() -> list[Any]:
        async with AsyncClient(KEY, url, max_retries=0) as client:
            return [(p.id, p.cost) for p in await client.list_cluster_pods("cl-x")]

    return asyncio.run(main())


def _frames(url: str) -> list[Any]:
    with Client(KEY, url, max_retries=0) as client:
        frame = ccanalytics.load_cluster_pods("cl-x", client=client, progress=False)
    return [
        (i, None if pd.isna(c) else c) for i, c in zip(frame["pod_id"], frame["cost"], strict=True)
    ]


def _collect(url: str, tmp: Path) -> list[Any]:
    with Client(KEY, url, max_retries=0) as client:
        ccanalytics.collect("cl-x", tmp, client=client)
    with ccanalytics.History(tmp) as h:
        rows = h.pods().sort_values("pod_id")
    return [
        (i, None if pd.isna(c) else c) for i, c in zip(rows["pod_id"], rows["cost"], strict=True)
    ]


PATHS: dict[str, Callable[..., list[Any]]] = {
    "models-sync": _models_sync,
    "models-async": _models_async,
    "frames": _frames,
}


@pytest.mark.parametrize("number", ["1e400", "-1e400", "123456789e999"])
@pytest.mark.parametrize("path", list(PATHS))
def test_an_out_of_range_number_is_none_in_its_cell_and_the_listing_survives(
    path: str, number: str
) -> None:
    body = _listing(GOOD[0], _bad_cost(number), GOOD[1])
    with serving(body) as url:
        got = PATHS[path](url)
    assert sorted(got, key=lambda x: x[0]) == [
        ("pod-bad", None),
        ("pod-good-0", PODS[0]["cost"]),
        ("pod-good-1", PODS[0]["cost"]),
    ]


def test_an_out_of_range_number_in_collect_costs_only_its_cell(tmp_path: Path) -> None:
    with serving(_listing(GOOD[0], _bad_cost("1e400"))) as url:
        assert _collect(url, tmp_path) == [("pod-bad", None), ("pod-good-0", PODS[0]["cost"])]


def test_pods_frame_of_raw_bytes_keeps_the_good_pods() -> None:
    frame = ccanalytics.pods_frame(_listing(GOOD[0], _bad_cost("1e400"), GOOD[2]))
    assert list(frame["pod_id"]) == ["pod-good-0", "pod-bad", "pod-good-2"]
    assert frame["cost"].isna().tolist() == [False, True, False]


HOSTILE = {
    "deep nesting in one pod": _listing(GOOD[0], _deep_pod()),
    "deep nesting at the top": b'{"pods": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "not UTF-8": _listing(GOOD[0]).replace(b"good-0", b"good-\xff\xfe"),
    "truncated JSON": _listing(GOOD[0], GOOD[1])[:-40],
    "an array where the listing belongs": b'{"pods": {"id": "x"}}',
    "a bare string": b'"pods"',
}


#: The good pods a hostile body holds (the others hold none that could be read).
GOOD_IN = {"deep nesting in one pod": {"pod-good-0"}}


def _outcome(call: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    """What ``call`` returned, or the exception it raised (any, so the test can name it)."""
    try:
        return call(), None
    except BaseException as err:
        return None, err


RAW = (RecursionError, UnicodeDecodeError, RuntimeError)


def _assert_typed(err: BaseException, url: str | None) -> None:
    assert isinstance(err, CCAnalyticsError), f"{type(err).__name__}: {err}"
    if url is not None:
        assert f"GET {url}/v2/clusters/cl-x/pods" in str(err)
    chain = err.__cause__ or err.__context__
    assert not isinstance(chain, RAW), repr(chain)


@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.parametrize("path", list(PATHS))
def test_a_hostile_body_gives_the_good_pods_or_one_typed_error(path: str, name: str) -> None:
    with serving(HOSTILE[name]) as url:
        got, err = _outcome(lambda: PATHS[path](url))
    if err is not None:
        _assert_typed(err, url)
    else:  # read after all: then its good pods, and no pod it does not hold
        ids = {pod_id for pod_id, _ in got}
        good = GOOD_IN.get(name, set())
        assert good <= ids <= good | {"pod-deep"}  # a reader deep enough reads pod-deep too


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_body_in_collect_is_typed(name: str, tmp_path: Path) -> None:
    with serving(HOSTILE[name]) as url:
        got, err = _outcome(lambda: _collect(url, tmp_path))
    if err is not None:
        _assert_typed(err, None)
    else:
        assert ("pod-good-0", PODS[0]["cost"]) in got


@pytest.mark.parametrize("name", list(HOSTILE))
def test_pods_frame_of_hostile_bytes_raises_its_documented_error(name: str) -> None:
    # pods_frame is a pure function of its argument: bytes that are not a listing are
    # a ValueError naming the function (its documented contract), never a raw one.
    frame, err = _outcome(lambda: ccanalytics.pods_frame(HOSTILE[name]))
    if err is not None:
        assert type(err) is ValueError, f"{type(err).__name__}: {err}"
        assert str(err).startswith("pods_frame(): pods is ")
        assert err.__cause__ is None and not isinstance(err.__context__, RAW)
    else:
        assert "pod-good-0" in set(frame["pod_id"])


@pytest.mark.parametrize("path", list(PATHS))
def test_a_2gb_content_length_that_never_comes_is_refused_at_once(path: str) -> None:
    with (
        serving(b'{"pods": [', length=2 * 1024**3) as url,
        pytest.raises(ResponseTooLargeError) as caught,
    ):
        PATHS[path](url)
    assert f"GET {url}/v2/clusters/cl-x/pods" in str(caught.value)


# -- property: good pods come back unchanged, whatever their neighbours hold -------------

from hypothesis import (  # noqa: E402
    HealthCheck,
    given,
    settings,
    strategies as st,
)

#: Valid JSON that no pod field should hold: beyond float range, huge, mistyped, odd text.
HOSTILE_VALUES = st.sampled_from(
    [
        "1e400",
        "-1e400",
        "123456789e999",
        "1" + "0" * 5000,
        '"lots"',
        "true",
        "[1, [2, [3]]]",
        '{"a": {"b": {"c": {}}}}',
        '"\\ud800 lone surrogate"',
        '"\\u0000 nul"',
        "[" * 50 + "]" * 50,
        "null",
    ]
)
FIELDS = st.sampled_from(["cost", "name", "gpu", "runtime", "cluster", "status", "createdAt"])


@st.composite
def mixed_listings(draw: st.DrawFn) -> tuple[bytes, bytes, list[str]]:
    """(a listing mixing good and hostile pods, the same listing's good pods alone, good ids)."""
    kinds = draw(st.lists(st.booleans(), min_size=1, max_size=8))
    everything, good_only, good_ids = [], [], []
    for i, good in enumerate(kinds):
        pod = json.dumps(dict(PODS[0], id=f"pod-{i}", name=f"pod-{i}"))
        if good:
            everything.append(pod)
            good_only.append(pod)
            good_ids.append(f"pod-{i}")
        else:
            field, value = draw(FIELDS), draw(HOSTILE_VALUES)
            everything.append(pod[:-1] + f', "{field}": {value}}}')  # the last key wins
    return _listing(*everything), _listing(*good_only), good_ids


def _rows(frame: pd.DataFrame, ids: list[str]) -> list[dict[str, Any]]:
    kept = frame[frame["pod_id"].isin(ids)].sort_values("pod_id")
    return kept.astype(object).where(kept.notna(), None).to_dict("records")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_listings())
def test_every_good_pod_comes_back_unchanged_in_the_frames(
    case: tuple[bytes, bytes, list[str]],
) -> None:
    body, good_body, ids = case
    mixed = ccanalytics.pods_frame(body)
    alone = ccanalytics.pods_frame(good_body)
    assert _rows(mixed, ids) == _rows(alone, ids)


@pytest.fixture(scope="module")
def one_server() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback server whose body the test sets (``bodies[0]``) before each request."""
    bodies = [b""]
    with raw_server(json_body(lambda: bodies[0])) as url:
        yield url, bodies


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=mixed_listings())
def test_every_good_pod_comes_back_unchanged_in_the_models(
    one_server: tuple[str, list[bytes]], case: tuple[bytes, bytes, list[str]]
) -> None:
    url, bodies = one_server
    body, good_body, ids = case
    with Client(KEY, url, max_retries=0) as client:
        bodies[0] = body
        mixed = {p.id: p.model_dump() for p in client.list_cluster_pods("cl-x") if p.id in ids}
        bodies[0] = good_body
        alone = {p.id: p.model_dump() for p in client.list_cluster_pods("cl-x")}
    assert mixed == alone

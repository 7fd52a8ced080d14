"""The raw-JSON path (what the loader runs): typed decoding, its per-pod fallback,
numbers beyond range, and bodies that are not listings.

Both ways a pod can be read from bytes (typed structs; the standard library's
``json`` for a pod the structs refuse) must give exactly the frame the parsed dicts
give: every equality test here runs on both (``path`` fixture).
"""

from __future__ import annotations

import copy
import json
import traceback
import weakref
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, cast

import pandas as pd
import pytest
from typed_decoder import typed_decoder_refused

from ccanalytics.errors import MalformedResponseError
from ccanalytics.frames import _build, _decode
from ccanalytics.frames._build import CHUNK_PODS, FleetFrames, gpus_frame, pods_frame
from ccanalytics.frames._decode import decoded_rows, split_listing

DATA = Path(__file__).parents[1] / "data"
FIXTURES = sorted(DATA.glob("listing_*.json"))
SECRET = "hf_s3cr3tValueThatMustNotLeak"


@pytest.fixture(params=["typed", "fallback"])
def path(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "typed":
        yield "typed"
        return
    with typed_decoder_refused() as refusing:
        yield "fallback"
    if "listing_empty" not in request.node.name:  # the one listing without a pod
        assert refusing.refused, "the test ran, but no pod took the fallback"


NOW = datetime(2026, 11, 25, tzinfo=UTC)


def past_three_chunks(pods: list[Any]) -> list[Any]:
    """``pods`` repeated into more than three chunks' worth (:data:`CHUNK_PODS`), so a
    multi-chunk test stays one whatever the chunk size is tuned to."""
    return pods * (3 * CHUNK_PODS // len(pods) + 1)


def loaded_frames(*listings: tuple[str, bytes], order: list[str] | None = None) -> Any:
    """The loader's path (``FleetFrames``) over listings added in the order given, asked
    for in ``order``: both frames without ``observed_at``, or the first refusal."""
    fleet = FleetFrames(order or [cid for cid, _ in listings], with_gpus=True)
    for cid, body in listings:
        refused = fleet.add(body, cid, NOW)
        if refused is not None:
            return refused
    pods, gpus = fleet.frames()
    assert gpus is not None
    return pods.drop(columns="observed_at"), gpus.drop(columns="observed_at")


def dict_frames(raw: bytes, cluster_id: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The frames of the same listing parsed into dicts (by the standard library)."""
    listing = json.loads(raw)
    return pods_frame(listing, cluster_id=cluster_id), gpus_frame(listing, cluster_id=cluster_id)


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_bytes_give_the_frames_of_the_parsed_dicts(path: str, fixture: Path) -> None:
    raw = fixture.read_bytes()
    pods, gpus = dict_frames(raw, "cl-x")
    pd.testing.assert_frame_equal(pods_frame(raw, cluster_id="cl-x"), pods)
    pd.testing.assert_frame_equal(gpus_frame(raw, cluster_id="cl-x"), gpus)
    loaded = loaded_frames(("cl-x", raw))
    assert isinstance(loaded, tuple)
    pd.testing.assert_frame_equal(loaded[0], pods)
    pd.testing.assert_frame_equal(loaded[1], gpus)


class ManyChunks(NamedTuple):
    """The real-world listing, the same pods past three chunks, and what they should give."""

    small: bytes
    big: bytes
    #: Each cluster's frames from the parsed dicts: cl-a and cl-c hold ``small``, cl-big ``big``.
    expected: dict[str, tuple[pd.DataFrame, pd.DataFrame]]


@pytest.fixture(scope="module")
def many_chunks() -> ManyChunks:
    """Built once: the dicts' frames of ``big`` take most of a second, and they are the
    same on both paths (the dicts never meet the typed decoder), which only read them."""
    small = (DATA / "listing_realworld.json").read_bytes()
    big = json.dumps({"pods": past_three_chunks(json.loads(small)["pods"])}).encode()
    bodies = {"cl-a": small, "cl-big": big, "cl-c": small}
    return ManyChunks(small, big, {cid: dict_frames(body, cid) for cid, body in bodies.items()})


def test_a_fleet_with_a_listing_of_many_chunks_in_any_order_gives_the_concatenated_frames(
    path: str, many_chunks: ManyChunks
) -> None:
    # A listing past one chunk that arrives in its turn is converted as it is decoded;
    # one that arrives early waits as rows. Either way: the frames in the order asked.
    small, big = many_chunks.small, many_chunks.big
    order = ["cl-a", "cl-big", "cl-c"]
    expected = [many_chunks.expected[cid] for cid in order]
    for arrival in (["cl-a", "cl-big", "cl-c"], ["cl-big", "cl-c", "cl-a"]):
        bodies = {"cl-a": small, "cl-big": big, "cl-c": small}
        pods, gpus = loaded_frames(*[(cid, bodies[cid]) for cid in arrival], order=order)
        for got, index in ((pods, 0), (gpus, 1)):
            want = pd.concat([e[index] for e in expected], ignore_index=True)
            pd.testing.assert_frame_equal(got, want)


#: Values of another type than their column's: each makes its pod fail the typed
#: decoding, so the pod is read as dicts and the value is <NA> in its cell.
MISTYPED = [
    ("cost", "3"),
    ("disk", 13.5),
    ("locked", 1),
    ("image", 7),
    ("createdAt", 20261118),
    ("status", 3),
]


def well_typed_pods() -> list[Any]:
    """The real-world listing's pods that hold every value as its column's type (the
    pods after them are odd on purpose)."""
    pods = json.loads((DATA / "listing_realworld.json").read_bytes())["pods"][:7]
    raws = split_listing(json.dumps({"pods": pods}).encode(), bare_array=False, null_pods=False)
    assert isinstance(raws, list)
    assert decoded_rows(raws)[1], "a pod of the base listing is itself mistyped"
    return cast(list[Any], pods)


@pytest.mark.parametrize(("field", "value"), MISTYPED)
def test_a_pod_with_a_value_of_another_type_is_read_as_dicts_and_checked(
    field: str, value: Any
) -> None:
    """The typed decoder vouches for a chunk's types only when every pod of it decoded:
    one mistyped pod makes the chunk take every check (else "3" would read as 3.0)."""
    pods = well_typed_pods()
    odd = {**pods[1], field: value}
    raw = json.dumps({"pods": [pods[0], odd, *pods[2:]]}).encode()
    raws = split_listing(raw, bare_array=False, null_pods=False)
    assert isinstance(raws, list)
    assert not decoded_rows(raws)[1]
    assert decoded_rows(raws[:1] + raws[2:])[1]
    for got, want in zip(loaded_frames(("cl-x", raw)), dict_frames(raw, "cl-x"), strict=True):
        pd.testing.assert_frame_equal(got, want)


def test_a_fleet_chunk_mixing_checked_and_unchecked_listings_takes_every_check() -> None:
    """A fleet converts rows of several listings in one chunk: one listing with a
    mistyped pod makes the whole chunk checked, whichever listing comes first."""
    pods = well_typed_pods()
    good = json.dumps({"pods": pods}).encode()
    odd = json.dumps({"pods": [{**pods[1], "cost": "3", "cluster": {"rank": "2"}}]}).encode()
    for order in (["cl-good", "cl-odd"], ["cl-odd", "cl-good"]):
        bodies = {"cl-good": good, "cl-odd": odd}
        got = loaded_frames(*[(cid, bodies[cid]) for cid in order])
        expected = [dict_frames(bodies[cid], cid) for cid in order]
        for frame, index in zip(got, (0, 1), strict=True):
            want = pd.concat([e[index] for e in expected], ignore_index=True)
            pd.testing.assert_frame_equal(frame, want)


def test_a_listing_of_many_chunks_with_an_unreadable_pod_is_refused_whole() -> None:
    # Refused after some of its chunks were converted: none of it reaches the frames,
    # the cluster before it is whole, and the refusal names the pod by its place.
    small = (DATA / "listing_realworld.json").read_bytes()
    pods = past_three_chunks(json.loads(small)["pods"])
    texts = [json.dumps(pod).encode() for pod in pods]
    # A pod past two chunks whose own name (a field read) is not UTF-8.
    at = next(i for i in range(2 * CHUNK_PODS, len(pods)) if isinstance(pods[i], dict) and pods[i])
    texts[at] = b'{"name": "\xff\xfe", ' + texts[at][1:]
    bad = b'{"pods": [' + b", ".join(texts) + b"]}"
    fleet = FleetFrames(["cl-a", "cl-bad"], with_gpus=False)
    assert fleet.add(small, "cl-a", NOW) is None
    refused = fleet.add(bad, "cl-bad", NOW)
    assert isinstance(refused, _decode.Refusal)
    assert refused.message == f"pod {at} is not valid UTF-8"
    frame, _ = fleet.frames()
    pd.testing.assert_frame_equal(frame.drop(columns="observed_at"), dict_frames(small, "cl-a")[0])


class _Rows(list[Any]):
    """A chunk's rows, in a type a weak reference can follow."""


@pytest.mark.parametrize("by", ["pods_frame", "fleet"])
def test_each_decoded_chunk_is_freed_before_the_next_is_decoded(
    by: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Peak memory holds one decoded chunk, and it is freed while still in cache.
    chunks: list[weakref.ref[_Rows]] = []
    still_held: list[int] = []  # when each chunk is decoded: earlier chunks still alive
    rows_of = _build._rows

    def rows(pods: Any, first: int = 0) -> Any:
        still_held.append(sum(chunk() is not None for chunk in chunks))
        got = _Rows(rows_of(pods, first))
        chunks.append(weakref.ref(got))
        return got

    monkeypatch.setattr(_build, "_rows", rows)
    listing = json.loads((DATA / "listing_realworld.json").read_bytes())
    raw = json.dumps({"pods": past_three_chunks(listing["pods"])}).encode()
    if by == "fleet":
        assert FleetFrames(["cl-x"], with_gpus=True).add(raw, "cl-x", NOW) is None
    else:
        pods_frame(raw)
    assert len(still_held) >= 4 and still_held == [0] * len(still_held)


def test_many_chunks_give_the_frames_of_the_parsed_dicts(
    path: str, many_chunks: ManyChunks
) -> None:
    """Past one chunk (CHUNK_PODS), with odd pods scattered through it."""
    raw = many_chunks.big  # the real-world listing's pods repeated, junk included
    expected_pods, expected_gpus = many_chunks.expected["cl-big"]
    pd.testing.assert_frame_equal(pods_frame(raw, cluster_id="cl-big"), expected_pods)
    pd.testing.assert_frame_equal(gpus_frame(raw, cluster_id="cl-big"), expected_gpus)


# -- numbers JSON allows but float64 and int64 do not hold -------------------------------

OUT_OF_RANGE = ["1e400", "-1e400", "9" * 400, "-" + "9" * 400, "9" * 5000, "1" + "0" * 20]


def listing_with(field_json: dict[str, str]) -> bytes:
    """A listing of three pods; the middle one has raw JSON number text in fields."""
    pod = json.loads((DATA / "listing_document_full.json").read_bytes())["pods"][0]
    parts = []
    for i in range(3):
        one = copy.deepcopy(pod)
        one["id"] = f"pod-{i}"
        text = json.dumps(one)
        if i == 1:
            for key, number in field_json.items():
                text = text.replace(f'"{key}": ', f'"{key}": {number}, "_was_{key}": ', 1)
        parts.append(text)
    return ('{"pods": [' + ", ".join(parts) + "]}").encode()


@pytest.mark.parametrize("number", OUT_OF_RANGE)
@pytest.mark.parametrize("field", ["cost", "disk", "uptime", "util", "rank", "count"])
def test_a_number_beyond_range_is_na_in_its_cell_only(path: str, field: str, number: str) -> None:
    column = {
        "cost": "cost",
        "disk": "disk",
        "uptime": "uptime_s",
        "util": "gpu_util_max",
        "rank": "rank",
        "count": "gpu_count",
    }[field]
    raw = listing_with({field: number})
    df = pods_frame(raw)
    assert df["pod_id"].tolist() == ["pod-0", "pod-1", "pod-2"]
    clean = df.iloc[0]
    odd = df.iloc[1]
    fits = number == "1" + "0" * 20 and column in ("cost", "uptime_s", "gpu_util_max")
    if fits:  # 1e20 is a float64 (though not an int64)
        assert odd[column] == 1e20
    elif field == "util":  # the first of two GPUs: the other still reports
        assert odd["gpus_reporting"] == 1 and odd["gpu_util_max"] == 94.0
    else:
        assert pd.isna(odd[column]), column
    for other in df.columns:
        if other not in (column, "gpu_util_mean", "gpu_util_min", "gpus_reporting"):
            assert pd.isna(odd[other]) == pd.isna(clean[other]) or other == "pod_id", other
    assert df.iloc[2]["cost"] == clean["cost"]


def test_out_of_range_numbers_load_through_the_loader(
    sandbox_free_client: Callable[[Callable[[], bytes]], pd.DataFrame],
) -> None:
    frame = sandbox_free_client(lambda: listing_with({"cost": "1e400", "disk": "9" * 400}))
    assert len(frame) == 3
    assert pd.isna(frame.loc[1, "cost"]) and pd.isna(frame.loc[1, "disk"])
    assert frame.loc[0, "cost"] == 0.35 and frame.loc[1, "name"] == "my-training-pod"


@pytest.fixture
def sandbox_free_client() -> Callable[[Callable[[], bytes]], pd.DataFrame]:
    """Load one cluster whose listing body ``make()`` gives, over a mock transport.

    The body is made inside the handler, so no frame of the test holds it.
    """
    import httpx

    import ccanalytics

    def load(make: Callable[[], bytes]) -> pd.DataFrame:
        def handler(request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, content=make(), headers={"Content-Type": "application/json"})

        transport = httpx.MockTransport(handler)
        with ccanalytics.Client("k", "http://api.test", transport=transport) as client:
            return ccanalytics.load_cluster_pods("cl-odd", client=client)

    return load


# -- bodies that are not listings: typed errors that hold nothing of the body ----------

NOT_LISTINGS = {
    "truncated": b'{"pods": [{"env": {"HF_TOKEN": "%s"}}, ' % SECRET.encode(),
    "not json": b"<html>%s</html>" % SECRET.encode(),
    "array": b'[{"env": {"HF_TOKEN": "%s"}}]' % SECRET.encode(),
    "object without pods": b'{"items": [{"env": {"HF_TOKEN": "%s"}}]}' % SECRET.encode(),
    "pods not a list": b'{"pods": {"env": {"HF_TOKEN": "%s"}}}' % SECRET.encode(),
    "pods null": b'{"pods": null, "x": "%s"}' % SECRET.encode(),
    "a string": b'"%s"' % SECRET.encode(),
    "a number": b"42",
}


def chain_of(err: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException | None] = [err]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [e.__cause__, e.__context__]


def assert_holds_nothing_of_the_body(err: BaseException) -> None:
    for e in chain_of(err):
        rendered = "".join(
            traceback.TracebackException.from_exception(e, capture_locals=True).format()
        )
        assert SECRET not in rendered, type(e).__name__
        assert SECRET not in repr(vars(e)) and SECRET not in str(e)
        for value in vars(e).values():
            assert not isinstance(value, bytes | bytearray | memoryview | dict | list) or (
                SECRET not in repr(value)
            )


def raised_by(call: Callable[[], Any]) -> BaseException:
    """The exception ``call`` raises, caught here so that no test frame holds the body."""
    try:
        call()
    except Exception as err:
        return err
    raise AssertionError("nothing was raised")


@pytest.mark.parametrize("name", sorted(NOT_LISTINGS))
def test_the_loader_refuses_a_body_that_is_not_a_listing(
    name: str, sandbox_free_client: Callable[[Callable[[], bytes]], pd.DataFrame]
) -> None:
    err = raised_by(lambda: sandbox_free_client(lambda: NOT_LISTINGS[name]))
    assert isinstance(err, MalformedResponseError), repr(err)
    assert "/v2/clusters/cl-odd/pods" in str(err)
    assert err.path == "/v2/clusters/cl-odd/pods"
    assert_holds_nothing_of_the_body(err)


@pytest.mark.parametrize("name", ["truncated", "not json", "object without pods", "a string"])
@pytest.mark.parametrize("function", [pods_frame, gpus_frame])
def test_pods_frame_refuses_bytes_that_are_not_a_listing(
    name: str, function: Callable[..., Any]
) -> None:
    err = raised_by(lambda: function(NOT_LISTINGS[name]))
    assert isinstance(err, ValueError)
    assert_holds_nothing_of_the_body(err)


def test_pods_frame_refuses_a_parsed_listing_of_the_wrong_shape() -> None:
    err = raised_by(lambda: pods_frame({"pods": {"env": {"HF_TOKEN": SECRET}}}))
    assert isinstance(err, ValueError) and "list of pods" in str(err)
    assert_holds_nothing_of_the_body(err)


def test_a_bare_array_and_null_pods_are_listings_for_pods_frame_only() -> None:
    assert pods_frame(b'[{"id": "p"}]')["pod_id"].tolist() == ["p"]
    assert len(pods_frame(b'{"pods": null}')) == 0
    for body in (b'[{"id": "p"}]', b'{"pods": null}'):
        refused = loaded_frames(("cl", body))
        assert isinstance(refused, _decode.Refusal)

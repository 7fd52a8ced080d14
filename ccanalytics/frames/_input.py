"""What ``pods_frame``/``gpus_frame`` accept, turned into pods to read.

Every accepted form becomes either the listing's undecoded pod slices (raw JSON:
see :mod:`ccanalytics.frames._decode`) or a list of JSON-shaped dicts (parsed
listings, dicts, :class:`~ccanalytics.api.models.Pod` models). Input that is not
a listing is reported as a :class:`~ccanalytics.frames._decode.Refusal`, for the
public function to raise from a frame that holds nothing of it. Input that is
plainly something else (a DataFrame, a list of cluster ids) is a ``TypeError``
saying what to pass instead.

pydantic is imported only when a Pod model is actually passed: a model cannot
exist unless :mod:`ccanalytics.api.models` was imported first, so that module's
presence in ``sys.modules`` is checked before anything is imported.
"""

from __future__ import annotations

import functools
import gc
import inspect
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from msgspec import Raw

from ccanalytics.frames._decode import Refusal, objects_or_refusal, split_listing
from ccanalytics.frames._fields import JsonObject

if TYPE_CHECKING:
    from ccanalytics.api.models import Pod

__all__ = ["PodsInput", "full_collections_deferred", "gc_paused", "pods_of", "refuse_misuse"]


#: What :func:`pods_frame` and :func:`gpus_frame` accept: raw JSON (``bytes``/``str``)
#: of a listing or of a bare array, a parsed listing ``{"pods": [...]}``, or an
#: iterable of pods as :class:`~ccanalytics.api.models.Pod` models or plain dicts.
PodsInput: TypeAlias = (
    "bytes | bytearray | memoryview | str | Mapping[str, Any] | Iterable[Pod | Mapping[str, Any]]"
)

# A list holds JSON objects only if the set of its element types is within this one.
_DICT_TYPES: Final = frozenset({dict})
_MODELS: Final = "ccanalytics.api.models"
_SCALARS: Final = (str, bytes, int, float)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a listing is decoded and flattened.

    Decoding a 50,000-pod listing allocates millions of objects, so the collector
    would run thousands of times, full collections among them that traverse
    everything decoded so far. None of it can be cyclic garbage (JSON is a tree) and
    reference counting frees it all before we return, so the traversals are pure
    waste. The collector is re-enabled on exit only if it was enabled on entry; the
    pause is process-wide, for the duration of one call.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: The full-collection threshold during a fleet load: in effect, none until it ends.
_NO_FULL_COLLECTIONS: Final = 1_000_000


@contextmanager
def full_collections_deferred() -> Iterator[None]:
    """No full (oldest-generation) collection until the block ends; the young ones run.

    A fleet load allocates steadily (httpx and asyncio per request, the decoded rows)
    and so triggers full collections, each of which traverses every object of the
    process: pandas', pyarrow's and everything else imported, none of which the load
    can free. Raising the oldest generation's threshold for the block defers them;
    the cyclic garbage of the load (~44 objects a request) is collected by the young
    generations' passes or by the first full collection after it. On a 500-cluster
    load the collections took 0.73 s with the full ones and 0.39 s without them
    (gc.callbacks, busy machine). The thresholds found are restored on exit.
    (``gc.freeze`` would skip those objects too, but Python 3.12 keeps the
    interpreter's own objects in the permanent generation, so a freeze of ours could
    not be told apart from a caller's, and undoing ours would undo both.)
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(*thresholds[:2], max(thresholds[2], _NO_FULL_COLLECTIONS))
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def refuse_misuse(pods: Any, function: str) -> None:
    """``TypeError`` for input that is plainly not pods: what to pass instead.

    A DataFrame iterates over its column names and a list of cluster ids over
    strings: read as listings, both would silently give empty frames.
    """
    hint = (
        "pass a listing (its JSON bytes or {'pods': [...]}), Pod models or pod dicts; "
        "to load clusters into both frames use ccanalytics.load_cluster_frames(cluster_ids)"
        " (.pods and .gpus)"
    )
    module = type(pods).__module__ or ""
    if module.split(".")[0] in ("pandas", "numpy", "polars", "pyarrow"):
        raise TypeError(f"{function}() got a {type(pods).__name__}: {hint}")
    if _looks_like_an_id(pods):
        raise TypeError(f"{function}() got one word, not JSON (a cluster id?): {hint}")
    if isinstance(pods, list | tuple) and pods:
        kinds = {type(p) for p in pods}
        if all(issubclass(k, _SCALARS) or k is type(None) for k in kinds) and any(
            issubclass(k, _SCALARS) for k in kinds
        ):
            names = ", ".join(sorted(k.__name__ for k in kinds))
            raise TypeError(f"{function}() got a list of {names}, not pods: {hint}")


def _looks_like_an_id(pods: Any) -> bool:
    """A short ``str``/``bytes`` with no space that cannot start JSON: ``"cl-infer-prod"``.

    Text that starts like JSON (``{``, ``[``, a quote, a digit, ``true``...) is read as
    JSON, and a broken listing is then named as broken JSON, never as an id.
    """
    if isinstance(pods, bytes | bytearray):
        try:
            pods = bytes(pods).decode("ascii")
        except UnicodeDecodeError:
            return False
    if not isinstance(pods, str):
        return False
    word = pods.strip()
    return (
        0 < len(word) <= 256
        and not any(c.isspace() for c in word)
        and _ID_START.match(word) is not None
    )


#: How a cluster id starts and JSON does not (JSON: ``{ [ " - 0-9 t f n``).
_ID_START = re.compile(r"(?!(?:true|false|null)\Z)[A-Za-z_.]")


def pods_of(pods: Any) -> list[Raw] | list[JsonObject] | Refusal:
    """The pods of any accepted input form: undecoded slices, or JSON-shaped dicts."""
    if isinstance(pods, str):
        pods = pods.encode("utf-8", "surrogatepass")
    if isinstance(pods, bytes | bytearray | memoryview):
        return split_listing(pods, bare_array=True, null_pods=True)
    data: Any = pods
    if isinstance(data, Mapping):
        if "pods" not in data:
            return Refusal("a mapping must be a pod listing {'pods': [...]}", not_json=False)
        data = data["pods"]
        if data is None:
            return []
    if isinstance(data, str | bytes | Mapping) or not isinstance(data, Iterable):
        return Refusal(f"expected a list of pods, got {type(data).__name__}", not_json=False)
    items = data if isinstance(data, list) else list(data)
    if _DICT_TYPES.issuperset(map(type, items)):
        return items
    models = sys.modules.get(_MODELS)
    pod_model = getattr(models, "Pod", None)
    objects: list[Any] = [
        _pod_as_json(item)
        if pod_model is not None and isinstance(item, pod_model)
        else dict(item)
        if isinstance(item, Mapping)
        else item
        for item in items
    ]
    return objects_or_refusal(objects)


def _pod_as_json(pod: Pod) -> JsonObject:
    """A model as the JSON object it stands for, with env names but not their values."""
    if _dump_has_fallback():
        data = pod.model_dump(
            mode="json", by_alias=True, exclude={"env"}, warnings=False, fallback=_unserializable
        )
    else:  # pydantic < 2.11: no fallback=, so drop what JSON cannot hold by hand
        data = _json_only(pod.model_dump(by_alias=True, exclude={"env"}, warnings=False))
    if pod.env is not None:
        data["env"] = dict.fromkeys(pod.env)
    return data


def _json_only(value: Any) -> Any:
    """``value`` with what JSON cannot hold (an extra field's Python object) as None."""
    if isinstance(value, dict):
        return {str(k): _json_only(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_only(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return None


@functools.cache
def _dump_has_fallback() -> bool:
    """Whether ``model_dump`` takes ``fallback=`` (pydantic 2.11 and later). Asked only
    when a model is given, so that pods_frame of JSON never imports pydantic."""
    from pydantic import BaseModel

    return "fallback" in inspect.signature(BaseModel.model_dump).parameters


def _unserializable(value: Any) -> None:
    """An extra field holding a non-JSON Python object is dropped, not an error."""
    return None

"""Flatten cluster pod listings into pandas DataFrames: the public functions.

Two pure functions, tested offline on recorded listings under ``tests/data/``:

- :func:`pods_frame`: one row per pod, nested blocks flattened into columns.
- :func:`gpus_frame`: one row per GPU the pod pays for (the long frame).

:data:`POD_COLUMNS` and :data:`GPU_COLUMNS` are the one place where each column's
dtype, source field and unit are written down; the functions' docstrings are
rendered from them, so ``help(pods_frame)`` shows the table. The pods frame's is
derived from :data:`~ccanalytics.frames._columns.POD_FIELDS`, which the readers
and column builders are generated from too: a new column is one line there.

Reading rules (the service breaks its own document often enough to need them):

- Every column is nullable (``string``, ``Int64``, ``Float64``, ``boolean``,
  ``datetime64[ns, UTC]``). Missing, ``null`` and wrongly typed values are all
  ``<NA>``; a listing never makes these functions raise because of a pod's content.
  So is NaN, which JSON cannot carry but a dict built in Python can, and so is a
  number beyond float range in raw JSON (``1e400``).
- No coercion across JSON types: a number field holding ``"3"`` or ``true`` is
  ``<NA>``, and so is a string field holding ``3``. A value of another type is a
  server bug to show, not to guess at (is ``"1,5"`` 1.5 or 15?). The one latitude
  JSON Schema itself allows: an integer field may hold an integral number written as
  ``13.0``. Timestamps are read as ISO 8601 (naive ones as UTC); anything else, and
  dates outside the nanosecond range (such as Go's zero time), is ``<NA>``.
- Unknown statuses, clouds and roles are kept as sent; unknown fields are ignored.
- Pods that are not JSON objects (``null``, a string) are dropped. Likewise in
  ``runtime.gpus``: ``gpu_index`` counts GPU objects only.
- ``env`` values are secrets and never read: only the variable names reach a frame.
  ``args`` is not a column either: command lines often carry tokens.

Pod models go through the same code as dicts: each is dumped to its JSON form
(without ``env`` values) first. A model has already applied pydantic's lax
conversions (``"3"`` becomes ``3``) and holds timestamps to the microsecond, so for
wrongly typed input a frame built from models can hold a value where the frame of
the raw JSON holds ``<NA>``; for well-typed input both are identical (tested).

Speed: raw JSON (what the loader hands over) is decoded by
:mod:`ccanalytics.frames._decode` into typed structs, never into dicts or models;
parsed input is read as dicts by :func:`~ccanalytics.frames._fields.dict_row`.
Either way pods are processed in chunks of :data:`CHUNK_PODS`: a chunk is read pod
by pod, then converted a column at a time while its objects are still in the CPU
cache (on a 50,000-pod listing the column passes otherwise pay a cache miss per
value), and the decoded chunk is freed before the next, so peak memory stays a
small multiple of the JSON. The cyclic garbage collector is paused for the call
(see :func:`~ccanalytics.frames._input.gc_paused`).

Modules: column table ``_columns``, type checks ``_convert``, the raw fields of a
pod ``_fields``, raw JSON ``_decode``, input forms ``_input``, the columns of each
frame ``_pods`` and ``_gpus``; this one puts chunks together.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from itertools import repeat
from typing import Any, Final, TypeAlias, cast

import numpy as np
import pandas as pd
from msgspec import Raw
from pandas.api.extensions import ExtensionArray

from ccanalytics.frames._columns import GPU_COLUMNS, POD_COLUMNS, ColumnSpec, _column_table
from ccanalytics.frames._decode import Refusal, UnreadablePod, decoded_rows, split_listing
from ccanalytics.frames._fields import JsonObject, Origin, PodFields, Row, dict_row
from ccanalytics.frames._gpus import gpu_columns
from ccanalytics.frames._input import PodsInput, gc_paused, pods_of, refuse_misuse
from ccanalytics.frames._pods import pod_columns

__all__ = ["GPU_COLUMNS", "POD_COLUMNS", "ColumnSpec", "PodsInput", "gpus_frame", "pods_frame"]

#: Pods decoded and converted at a time: small enough that a chunk's objects stay in
#: cache (the last level: a few MB) between reading and converting, large enough that
#: per-chunk overhead is noise. That overhead is one pandas/numpy/Arrow call per
#: column (~50 per frame), ~2 ms a chunk on the loader's path with its code and data
#: cold: at 1024 pods a chunk it was ~10% of a 200,000-pod load (benchmarks/loader.py:
#: CPU 4.2 s at 1024, 3.7 s at 4096; 8192 gains nothing more).
CHUNK_PODS: Final = 4096

Columns: TypeAlias = dict[str, ExtensionArray]
#: Both frames of one input; ``None`` for a frame not asked for.
FramePair: TypeAlias = tuple[pd.DataFrame | None, pd.DataFrame | None]


def _rows(pods: list[Raw] | list[JsonObject], first: int = 0) -> tuple[list[Row], bool]:
    """The rows of ``pods``, the slice of a listing that starts at pod ``first`` (which
    a refusal names), and whether the typed decoder checked all their values."""
    if pods and type(pods[0]) is Raw:
        return decoded_rows(pods, first)
    return [dict_row(p) for p in cast(list[JsonObject], pods)], False


def _concat(parts: list[ExtensionArray]) -> ExtensionArray:
    if len(parts) == 1:
        return parts[0]
    # Every part of a column has the same dtype; the array type joins its own kind
    # (Arrow strings become one chunked array: no copy).
    array_type: Any = type(parts[0])
    return cast(ExtensionArray, array_type._concat_same_type(parts))


class _Parts:
    """The converted chunks of the frames asked for, joined into frames at the end."""

    def __init__(self, want_pods: bool, want_gpus: bool) -> None:
        self.pods: list[Columns] | None = [] if want_pods else None
        self.gpus: list[Columns] | None = [] if want_gpus else None

    def add(self, rows: list[Row], origin: Origin, checked: bool) -> None:
        fields = PodFields.of(rows, checked)
        if self.pods is not None:
            self.pods.append(pod_columns(fields, origin))
        if self.gpus is not None:
            self.gpus.append(gpu_columns(fields, origin))

    def extend(self, other: _Parts) -> None:
        for mine, theirs in ((self.pods, other.pods), (self.gpus, other.gpus)):
            if mine is not None and theirs is not None:
                mine += theirs

    def frames(self) -> FramePair:
        return _frame(self.pods, POD_COLUMNS), _frame(self.gpus, GPU_COLUMNS)


def _frame(parts: list[Columns] | None, order: Mapping[str, ColumnSpec]) -> pd.DataFrame | None:
    if parts is None:
        return None
    names = [*order, *(["observed_at"] if "observed_at" in parts[0] else [])]
    return pd.DataFrame({name: _concat([part[name] for part in parts]) for name in names})


def _frames(
    pods: list[Raw] | list[JsonObject], cluster_id: str | None, want_pods: bool, want_gpus: bool
) -> FramePair:
    """The frames asked for, built chunk by chunk from the same decoded fields.

    A chunk is decoded, then converted while its objects are still in cache, and
    freed before the next is decoded.
    """
    parts = _Parts(want_pods, want_gpus)
    origin = Origin(cluster_id)
    for start in range(0, max(len(pods), 1), CHUNK_PODS):
        rows, checked = _rows(pods[start : start + CHUNK_PODS], start)
        parts.add(rows, origin, checked)
    return parts.frames()


def _build(
    pods: Any, cluster_id: str | None, want_pods: bool, want_gpus: bool
) -> FramePair | Refusal:
    source = pods_of(pods)
    if isinstance(source, Refusal):
        return source
    with gc_paused():
        try:
            return _frames(source, cluster_id, want_pods, want_gpus)
        except UnreadablePod as err:
            return err.refusal()


def _listing_pods(content: bytes) -> list[Raw] | list[JsonObject] | Refusal:
    """Only an object with a ``pods`` list is a listing here (the service sends
    nothing else): stricter than :func:`pods_frame` about the document's shape."""
    return split_listing(content, bare_array=False, null_pods=False)


class FleetFrames:
    """Many listings' bodies into one pair of frames: the fleet loader's path.

    Framing each cluster's listing on its own, then concatenating hundreds of small
    frames, cost a fleet load most of its time (several ms of fixed pandas and Arrow
    work per listing, whatever its size: benchmarks/report.py). Here each listing is
    decoded into rows as it arrives (so its body is released at once, and a listing
    that cannot be read is refused whole), and rows are converted a chunk at a time
    across listings: 500 listings of 100 pods are 49 conversions, not 500, and one
    frame is built at the end.

    Rows are converted in the order the clusters were asked for, whatever order the
    answers come in: a listing that arrives early waits, decoded, for those before it.
    A listing of a chunk or more that arrives in its turn is converted as it is decoded,
    a chunk at a time while the chunk is in cache (as :func:`pods_frame` does), into
    parts of its own that join the rest only once all of it has been read.
    """

    def __init__(self, cluster_ids: list[str], with_gpus: bool) -> None:
        self._parts = _Parts(want_pods=True, want_gpus=with_gpus)
        self._order = cluster_ids
        self._next = 0  # the first cluster in order not yet queued for conversion
        self._arrived: dict[str, tuple[list[Row], bool, int] | None] = {}
        self._rows: list[Row] = []  # queued, in order
        self._asked: list[str] = []
        self._stamps: list[int] = []
        self._checked: list[bool] = []  # per queued row: from the typed decoder

    def add(self, content: bytes, cluster_id: str, observed_at: datetime) -> Refusal | None:
        """Decode one cluster's listing; ``None``, or why it is not a listing."""
        with gc_paused():
            pods = _listing_pods(content)
            if isinstance(pods, Refusal):
                self.skip(cluster_id)
                return pods
            stamp = pd.Timestamp(observed_at).value
            in_turn = self._next < len(self._order) and self._order[self._next] == cluster_id
            try:
                if in_turn and len(pods) >= CHUNK_PODS:
                    self._streamed(pods, cluster_id, stamp)
                    return None
                rows, checked = _rows(pods)
            except UnreadablePod as err:
                self.skip(cluster_id)
                return err.refusal()
            del pods  # slices of the body
            self._arrived[cluster_id] = (rows, checked, stamp)
            self._queue()
        return None

    def _streamed(self, pods: list[Raw] | list[JsonObject], cluster_id: str, stamp: int) -> None:
        """Convert a listing in its turn chunk by chunk as it is decoded; its parts join
        the rest after the rows queued before it (:class:`UnreadablePod`: none do)."""
        own = _Parts(want_pods=True, want_gpus=self._parts.gpus is not None)
        for start in range(0, len(pods), CHUNK_PODS):
            rows, checked = _rows(pods[start : start + CHUNK_PODS], start)
            # One cluster for the whole chunk: the str form, not a list of it per pod.
            stamps = np.full(len(rows), stamp, dtype=np.int64)
            own.add(rows, Origin(cluster_id, stamps), checked)
            # Freed now, while in cache: held until the next chunk was decoded, it doubled
            # the decoded peak and its freeing touched memory evicted by that decoding.
            del rows
        if self._rows:
            self._convert(len(self._rows))  # what came before it, first
        self._parts.extend(own)
        self._arrived[cluster_id] = None  # nothing left to queue for it
        self._queue()

    def skip(self, cluster_id: str) -> None:
        """A cluster that failed: nothing of it to frame."""
        self._arrived[cluster_id] = None
        self._queue()

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame | None]:
        """Both frames of every listing added, in the order asked, with ``observed_at``."""
        with gc_paused():
            if self._rows or not (self._parts.pods or self._parts.gpus):
                self._convert(len(self._rows))
            pods, gpus = self._parts.frames()
        return cast(pd.DataFrame, pods), gpus

    def _queue(self) -> None:
        """Queue the listings now next in order, and convert every full chunk."""
        while self._next < len(self._order) and self._order[self._next] in self._arrived:
            cluster_id = self._order[self._next]
            arrived = self._arrived.pop(cluster_id)
            self._next += 1
            if arrived is not None:
                rows, checked, stamp = arrived
                self._rows += rows
                self._asked += repeat(cluster_id, len(rows))
                self._stamps += repeat(stamp, len(rows))
                self._checked += repeat(checked, len(rows))
        while len(self._rows) >= CHUNK_PODS:
            self._convert(CHUNK_PODS)

    def _convert(self, n: int) -> None:
        stamps = np.array(self._stamps[:n], dtype=np.int64)
        checked = all(self._checked[:n])  # one pod read as dicts: the chunk takes every check
        self._parts.add(self._rows[:n], Origin(self._asked[:n], stamps), checked)
        del self._rows[:n], self._asked[:n], self._stamps[:n], self._checked[:n]


def pods_frame(pods: PodsInput, *, cluster_id: str | None = None) -> pd.DataFrame:
    """One row per pod, nested blocks flattened into nullable columns.

    ``pods`` is the raw JSON (``bytes``/``str``) of a listing ``{"pods": [...]}`` or
    of a bare array, a parsed listing, or an iterable of
    :class:`~ccanalytics.api.models.Pod` models or plain dicts; all give the same frame.
    ``cluster_id`` fills the rows of pods that carry no ``cluster.id`` (a loader
    knows which cluster it asked for); a pod's own id always wins.

    Missing, null and wrongly typed values are ``<NA>`` (numeric strings are not
    coerced); an empty listing gives an empty frame with all columns. Raises
    ``ValueError`` only for input that is not a listing at all (invalid JSON, a
    mapping without ``pods``), and ``TypeError`` for input that is plainly not pods
    (a DataFrame, a list of cluster ids: use ``load_cluster_frames`` to load them).
    Loads (``load_cluster_pods``) add ``observed_at`` after these columns.

    Columns (dtype, source field and unit):

    {columns}
    """
    refuse_misuse(pods, "pods_frame")
    built = _build(pods, cluster_id, want_pods=True, want_gpus=False)
    if isinstance(built, Refusal):
        del pods  # the traceback's frames must not hold the body (secrets in env)
        raise ValueError(f"pods_frame(): pods is {_phrased(built)}")
    return cast(pd.DataFrame, built[0])


def gpus_frame(pods: PodsInput, *, cluster_id: str | None = None) -> pd.DataFrame:
    """One row per GPU the pods pay for, in pod order, GPUs in ``runtime.gpus`` order.

    Accepts the same inputs as :func:`pods_frame` and reads them by the same rules.
    A pod has ``max(len(runtime.gpus), gpu.count)`` rows, counting ``gpu.count``
    only if the pod pays for its GPUs (``cost`` is not 0.0): GPUs that do not report
    (``runtime.gpus`` shorter than ``gpu.count``, or no ``runtime`` at all because
    the pod is not RUNNING) are rows with ``util`` ``<NA>``, never missing rows and
    never 0 %. EXITED and TERMINATED pods (cost 0.0) and CPU pods have no rows. A
    GPU object without a numeric ``util`` still has its row, with ``util`` ``<NA>``.

    Columns (dtype, source field and unit):

    {columns}
    """
    refuse_misuse(pods, "gpus_frame")
    built = _build(pods, cluster_id, want_pods=False, want_gpus=True)
    if isinstance(built, Refusal):
        del pods
        raise ValueError(f"gpus_frame(): pods is {_phrased(built)}")
    return cast(pd.DataFrame, built[1])


def _phrased(refusal: Refusal) -> str:
    return refusal.message if refusal.not_json else f"not a listing: {refusal.message}"


# Rendered here so the tables above stay the only place the columns are described.
# (``python -OO`` strips docstrings: then there is nothing to render into.)
if pods_frame.__doc__:
    pods_frame.__doc__ = pods_frame.__doc__.replace("{columns}", _column_table(POD_COLUMNS))
if gpus_frame.__doc__:
    gpus_frame.__doc__ = gpus_frame.__doc__.replace("{columns}", _column_table(GPU_COLUMNS))

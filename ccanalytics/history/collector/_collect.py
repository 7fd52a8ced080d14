"""``collect``: one snapshot of some clusters, appended to a store.

A snapshot is one fleet load (:func:`ccanalytics.load_cluster_frames`, which paces
itself inside the rate limits) whose rows carry ``observed_at``, the time the service
answered. It is taken in two steps, :func:`take_snapshot` then :func:`append_snapshot`,
so that the CLI can look at the first response's rate-limit policy before it writes.

The service's clock times the rows, unless it is far from ours: a ``Date`` further
than :data:`CLOCK_SKEW` (5 minutes) from the local clock while the snapshot was taken
(a broken clock, or one in 2099) would put the snapshot, and from then on every window
relative to the newest snapshot, at that time. Such a listing is timed by the local
clock at the end of the snapshot instead, and :class:`~ccanalytics.errors.ClockSkewWarning`
says so, once per run. ``trust_service_clock=True`` keeps the service's time (a
simulated-clock sandbox's ``Date`` is its simulated time, which is the point of it).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from os import PathLike
from pathlib import PurePath
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

# The bound and the rule live with the client, which judges each response by them too.
from ccanalytics.api import CLOCK_SKEW, trusted_span
from ccanalytics.errors import CCAnalyticsError, ClockSkewWarning, FleetLoadError
from ccanalytics.history.store import Location, append_frame, new_snapshot_id, open_store, take_back

if TYPE_CHECKING:
    import pandas as pd

    from ccanalytics.api import AsyncClient, Client

__all__ = [
    "CLOCK_SKEW",
    "CollectResult",
    "Snapshot",
    "append_snapshot",
    "collect",
    "snapshot_rows",
    "take_snapshot",
]


@dataclass(frozen=True)
class CollectResult:
    """What one :func:`collect` wrote.

    ``observed_at`` maps each cluster that had pods to when the service answered for
    it (UTC); ``clusters`` are the clusters that loaded (a cluster with no pods loads
    but writes no row); ``errors`` maps each cluster that failed to its exception
    (a missing cluster is a :class:`~ccanalytics.NotFoundError`), as a fleet load's
    ``frame.attrs["errors"]`` and :attr:`~ccanalytics.FleetLoadError.errors` do.
    """

    observed_at: Mapping[str, datetime]
    clusters: tuple[str, ...]
    pod_rows: int
    gpu_rows: int
    errors: Mapping[str, CCAnalyticsError] = field(default_factory=lambda: MappingProxyType({}))
    files: tuple[PurePath, ...] = ()

    @property
    def failures(self) -> Mapping[str, str]:
        """The old name of :attr:`errors`, as messages (goes in the next release)."""
        warnings.warn(
            "CollectResult.failures is now CollectResult.errors, which holds the exceptions "
            "(the old name goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return MappingProxyType({cid: str(err) for cid, err in self.errors.items()})

    def __repr__(self) -> str:
        from ccanalytics.history.collector._show import result_repr

        return result_repr(self)

    def _repr_html_(self) -> str:
        from ccanalytics.history.collector._show import result_html

        return result_html(self)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # A result crosses process boundaries (a collect in a ProcessPoolExecutor), but
        # a read-only mapping does not pickle: send plain dicts, wrap them again here.
        return _collect_result, (
            dict(self.observed_at),
            self.clusters,
            self.pod_rows,
            self.gpu_rows,
            dict(self.errors),
            self.files,
        )

    @property
    def snapshot_time(self) -> datetime | None:
        """The earliest ``observed_at`` of the snapshot (``None``: no row written)."""
        return min(self.observed_at.values(), default=None)


def _collect_result(
    observed_at: dict[str, datetime],
    clusters: tuple[str, ...],
    pod_rows: int,
    gpu_rows: int,
    errors: dict[str, CCAnalyticsError],
    files: tuple[PurePath, ...],
) -> CollectResult:
    """A :class:`CollectResult` back from its pickle (its ``__reduce__``)."""
    return CollectResult(
        MappingProxyType(observed_at),
        clusters,
        pod_rows,
        gpu_rows,
        MappingProxyType(errors),
        files,
    )


class Snapshot(NamedTuple):
    """A loaded, not yet written snapshot.

    ``service_clock`` is the service's time when it was further than :data:`CLOCK_SKEW`
    from ours (``None`` otherwise); when the rows were retimed by the local clock,
    ``retimed`` is true.
    """

    cluster_ids: tuple[str, ...]
    pods: pd.DataFrame
    gpus: pd.DataFrame
    errors: Mapping[str, CCAnalyticsError]
    service_clock: datetime | None = None
    retimed: bool = False


def take_snapshot(
    cluster_ids: str | Iterable[str],
    client: Client | AsyncClient | None,
    *,
    trust_service_clock: bool = False,
) -> Snapshot:
    """Load every cluster once; failures are recorded, never raised (see ``errors``).

    Rows whose ``observed_at`` is further than :data:`CLOCK_SKEW` from the local clock
    are timed by the local clock unless ``trust_service_clock`` (see the module).
    """
    from ccanalytics.frames import load_fleet

    ids = (cluster_ids,) if isinstance(cluster_ids, str) else tuple(dict.fromkeys(cluster_ids))
    before = datetime.now(UTC)
    with _keeping_service_time(client) as loader:
        pods, gpus, failed = load_fleet(ids, client=loader, progress=False)
    after = datetime.now(UTC)
    for frame in (pods, gpus):
        frame.attrs.clear()  # the errors are for the result, not for the store
    low, high = trusted_span(before, after)
    service = _far_service_time(pods, low, high)
    retimed = service is not None and not trust_service_clock
    if retimed:
        for frame in (pods, gpus):
            _retime(frame, low, high, after)
    return Snapshot(ids, pods, gpus, MappingProxyType(failed), service, retimed)


@contextmanager
def _keeping_service_time(client: Client | AsyncClient | None) -> Iterator[Client | AsyncClient]:
    """``client`` (or one from the environment) trusting the service's clock, so that
    the snapshot is judged here, as a whole, by ``trust_service_clock``."""
    if client is not None:
        yield client.with_options(trust_service_clock=True)  # same connections and pacer
        return
    from ccanalytics.api import Client

    with Client(trust_service_clock=True) as own:
        yield own


def _outside(frame: pd.DataFrame, low: datetime, high: datetime) -> pd.Series[bool]:
    stamps = frame["observed_at"]
    return (stamps < low) | (stamps > high)


def _far_service_time(pods: pd.DataFrame, low: datetime, high: datetime) -> datetime | None:
    """The service time furthest out of ``[low, high]`` in ``pods``; None when none is."""
    if "observed_at" not in pods or pods.empty:
        return None
    far = pods.loc[_outside(pods, low, high), "observed_at"]
    if far.empty:
        return None
    worst = far.max() if far.max() > high else far.min()
    return worst.to_pydatetime()  # type: ignore[no-any-return]


def _retime(frame: pd.DataFrame, low: datetime, high: datetime, local: datetime) -> None:
    """Time the rows whose ``observed_at`` lies outside ``[low, high]`` by ``local``.

    Every row of one cluster's listing has the same ``observed_at``, so its pod and GPU
    rows stay one instant.
    """
    if "observed_at" in frame and not frame.empty:
        import pandas as pd

        frame.loc[_outside(frame, low, high), "observed_at"] = pd.Timestamp(local)


def clock_warning(snapshot: Snapshot) -> None:
    """Warn that ``snapshot``'s rows were retimed by the local clock (a no-op if not)."""
    if not snapshot.retimed or snapshot.service_clock is None:
        return
    warnings.warn(
        f"the service's clock reads {snapshot.service_clock:%Y-%m-%d %H:%M:%S} UTC, more "
        f"than {CLOCK_SKEW.total_seconds() / 60:.0f} minutes from this machine's: the "
        "snapshot is timed by the local clock instead (pass trust_service_clock=True, or "
        "--trust-service-clock, to keep the service's time, as a simulated-clock sandbox "
        "needs)",
        ClockSkewWarning,
        stacklevel=3,
    )


def snapshot_rows(snapshot: Snapshot, first_seen: Mapping[Any, Any]) -> pd.DataFrame:
    """The snapshots table's rows for ``snapshot``: one per cluster asked.

    A cluster with pods is timed by its rows' ``observed_at``. A cluster whose listing
    was empty or failed has no row to time it by (the fleet load keeps no time for it),
    so it takes the snapshot's time: the earliest ``observed_at`` of the clusters with
    pods, or, when none had any, the local clock now.
    """
    import pandas as pd

    from ccanalytics.history.store import OK, SNAPSHOT_COLUMNS

    when = min(first_seen.values(), default=None)
    if when is None:
        when = pd.Timestamp(datetime.now(UTC))
    counts = (
        snapshot.pods["cluster_id"].value_counts().to_dict()
        if "cluster_id" in snapshot.pods
        else {}
    )
    ids = snapshot.cluster_ids
    failures = [snapshot.errors.get(cid) for cid in ids]
    values: dict[str, list[Any]] = {
        "cluster_id": list(ids),
        "pods": [int(counts.get(cid, 0)) for cid in ids],
        "outcome": [OK if err is None else type(err).__name__ for err in failures],
        "http_status": [getattr(err, "status", None) for err in failures],
        "observed_at": [first_seen.get(cid, when) for cid in ids],
    }
    # Each column made in its dtype at once: a frame of rows cast afterwards costs twice
    # as much, on every collect.
    return pd.DataFrame(
        {name: pd.Series(values[name], dtype=dtype) for name, dtype in SNAPSHOT_COLUMNS.items()}
    )


def append_snapshot(store: str | PathLike[str] | Location, snapshot: Snapshot) -> CollectResult:
    """Write a snapshot's rows to the store and say what was written.

    Every file of the snapshot carries its id, and its snapshots table's rows (its
    record) are written last, once the pod and GPU rows are stored: readers count a
    snapshot only once its record is (:mod:`~ccanalytics.history.store._layout`), so
    a snapshot half written is never half read. One that fails to be written
    (a :class:`~ccanalytics.errors.StoreError`) has its files taken back before the
    error is raised; any that cannot be deleted stay unread.
    """
    root = open_store(store)  # one location (and S3 client) for the snapshot's files
    first_seen: dict[Any, Any] = (  # every cluster failed: no rows, no observed_at
        snapshot.pods.groupby("cluster_id", sort=False)["observed_at"].min().to_dict()
        if "observed_at" in snapshot.pods
        else {}
    )
    record = snapshot_rows(snapshot, first_seen) if snapshot.cluster_ids else None
    snapshot_id = new_snapshot_id()
    try:
        files = _append_both(root, snapshot, snapshot_id)
        if record is not None:
            files += append_frame(root, "snapshots", record, snapshot=snapshot_id)
    except BaseException:
        take_back(root, snapshot_id, _days(snapshot, record))
        raise
    return CollectResult(
        observed_at=MappingProxyType(
            {str(cid): when.to_pydatetime() for cid, when in first_seen.items()}
        ),
        clusters=tuple(c for c in snapshot.cluster_ids if c not in snapshot.errors),
        pod_rows=len(snapshot.pods),
        gpu_rows=len(snapshot.gpus),
        errors=snapshot.errors,
        files=tuple(files),
    )


def _days(snapshot: Snapshot, record: pd.DataFrame | None) -> set[str]:
    """The UTC days (``YYYY-MM-DD``) the snapshot's files go to."""
    frames = [snapshot.pods, snapshot.gpus, *([] if record is None else [record])]
    return {
        f"{day:%Y-%m-%d}"
        for frame in frames
        if "observed_at" in frame
        for day in frame["observed_at"].dt.date.unique()
    }


def _append_both(root: Location, snapshot: Snapshot, snapshot_id: str) -> list[PurePath]:
    """The pod and GPU rows' files.

    On S3 the two uploads go at once: each is a request of tens of milliseconds that
    two can wait out together. In a folder, one after the other: a local write is
    mostly Arrow conversion and Parquet encoding, which hold the GIL, and its fsync is
    short: two threads cost more than they overlap (docs/performance.md).
    """
    if root.local:
        return [
            *append_frame(root, "pods", snapshot.pods, snapshot=snapshot_id),
            *append_frame(root, "gpus", snapshot.gpus, snapshot=snapshot_id),
        ]
    with ThreadPoolExecutor(2, thread_name_prefix="ccanalytics-append") as pool:
        pods = pool.submit(append_frame, root, "pods", snapshot.pods, snapshot=snapshot_id)
        gpus = pool.submit(append_frame, root, "gpus", snapshot.gpus, snapshot=snapshot_id)
        # Both finished (the pool waits for both) before a failure of either is raised.
        return [*pods.result(), *gpus.result()]


def collect(
    cluster_ids: str | Iterable[str],
    store: str | PathLike[str],
    *,
    client: Client | AsyncClient | None = None,
    errors: Literal["raise", "collect"] = "raise",
    trust_service_clock: bool = False,
) -> CollectResult:
    """Take one snapshot of each cluster and append it to ``store``.

    Parameters
    ----------
    cluster_ids:
        One cluster id or several (loaded concurrently within the rate limit).
    store:
        The store's folder (created when missing), or ``s3://bucket/prefix``; see
        :mod:`ccanalytics.history`.
    client:
        A :class:`~ccanalytics.Client` or :class:`~ccanalytics.AsyncClient`; ``None``:
        one from ``CCANALYTICS_API_KEY`` and ``CCANALYTICS_BASE_URL``.
    errors:
        ``"raise"`` (default): after writing the clusters that loaded, raise
        :class:`~ccanalytics.FleetLoadError` if any failed (``.frame`` holds the pods
        written; ``.errors`` each failed cluster's exception). ``"collect"``: return,
        with the same in :attr:`CollectResult.errors`.
    trust_service_clock:
        ``False`` (default): a ``Date`` further than :data:`CLOCK_SKEW` (5 minutes) from
        the local clock is not trusted; the local clock times those rows and
        :class:`~ccanalytics.errors.ClockSkewWarning` says so. ``True``: the service's
        time is kept whatever it reads (a simulated-clock sandbox).

    Notes
    -----
    Every row carries ``observed_at``: the response's ``Date`` header when present and
    plausible (see ``trust_service_clock``), else the local clock at receipt. Nothing secret is written: the frames
    hold no ``env`` value, and nothing of the client reaches the store.
    """
    if errors not in ("raise", "collect"):
        raise ValueError("errors must be 'raise' or 'collect'")
    snapshot = take_snapshot(cluster_ids, client, trust_service_clock=trust_service_clock)
    clock_warning(snapshot)
    result = append_snapshot(store, snapshot)
    if result.errors and errors == "raise":
        raise FleetLoadError(result.errors, snapshot.pods, asked=len(snapshot.cluster_ids))
    return result

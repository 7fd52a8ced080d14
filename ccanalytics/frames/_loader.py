"""Loading cluster pods into one DataFrame: one cluster, or a whole fleet concurrently.

Fleet loads fan out through :class:`AsyncClient` and its pacer: the first request
goes alone so the client learns the quota from ``RateLimit-Policy``, then the rest
go concurrently, as many at a time as the announced windows allow, so a fleet load
under a small quota finishes in quota-bound time without a single 429.

The frame path never builds a pydantic model per pod: the client hands over the
listing's body undecoded, and :class:`ccanalytics.frames._build.FleetFrames`
decodes it straight into rows, framed with every other cluster's in one pass at the
end (one frame of the fleet, not one per cluster concatenated). A body that is not a
listing is a :class:`MalformedResponseError` naming the request's path, raised from
here.

Errors that cross from a cluster's task to the caller drop their traceback (see
:func:`_kept`): its frames held the response and the decoding state, and an error
reporter that captures locals would ship them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, NamedTuple

from ccanalytics.api import Client
from ccanalytics.errors import CCAnalyticsError, FleetLoadError

if TYPE_CHECKING:
    import pandas as pd

    from ccanalytics.api import AsyncClient, RawListing
    from ccanalytics.frames._build import FleetFrames

__all__ = [
    "ClusterFrames",
    "FleetLoad",
    "FleetLoadError",
    "aload_cluster_pods",
    "load_cluster_frames",
    "load_cluster_pods",
    "load_fleet",
]

#: Requests in flight at once; the pacer keeps them inside the rate limit on top of this.
MAX_CONCURRENCY = 16
#: Multi-cluster loads show a progress bar by default from this many clusters on.
PROGRESS_MIN_CLUSTERS = 4

ErrorMode = Literal["raise", "collect"]


def _cluster_ids(cluster_ids: str | Iterable[str]) -> list[str]:
    ids = [cluster_ids] if isinstance(cluster_ids, str) else list(cluster_ids)
    if not ids:
        raise ValueError("cluster_ids is empty: name at least one cluster")
    for cid in ids:
        if not isinstance(cid, str) or not cid:
            raise ValueError(f"every cluster id must be a non-empty str, got {cid!r}")
    return list(dict.fromkeys(ids))  # keep order, drop repeats


def _progress_default(n: int) -> bool:
    if n < PROGRESS_MIN_CLUSTERS or "PYTEST_CURRENT_TEST" in os.environ:
        return False
    return sys.stderr.isatty() or "ipykernel" in sys.modules


class ClusterFrames(NamedTuple):
    """Both frames of a load: one row per pod, and one row per GPU."""

    pods: pd.DataFrame
    gpus: pd.DataFrame


class FleetLoad(NamedTuple):
    """Both frames of a load, and each cluster that failed with its exception.

    ``errors`` holds the client's own exceptions (a missing cluster is a
    :class:`~ccanalytics.NotFoundError`; picklable, tracebacks dropped, secrets
    scrubbed), in the order asked, as :attr:`FleetLoadError.errors` does. The frames'
    ``attrs["errors"]`` holds their messages: pandas writes ``attrs`` into Parquet
    metadata with ``json.dumps`` (``DataFrame.to_parquet`` raises ``TypeError`` for
    anything JSON cannot hold), and a frame must stay writable.
    """

    pods: pd.DataFrame
    gpus: pd.DataFrame
    errors: dict[str, CCAnalyticsError]


def _kept(err: CCAnalyticsError) -> CCAnalyticsError:
    """``err`` without its traceback, to be raised again later from :func:`_aload`.

    Its frames (the client's request loop, this module's task) held the response
    and the body; the message already says which request failed and how.
    """
    return err.with_traceback(None)


async def _aload(
    cluster_ids: str | Iterable[str],
    client: AsyncClient,
    progress: bool | None,
    errors: ErrorMode,
    with_gpus: bool,
) -> FleetLoad:
    """The fleet load itself; the GPU frame is built only when asked for (else empty)."""

    from ccanalytics.frames._build import FleetFrames
    from ccanalytics.frames._input import full_collections_deferred

    ids = _cluster_ids(cluster_ids)
    if errors not in ("raise", "collect"):
        raise ValueError("errors must be 'raise' or 'collect'")
    show = _progress_default(len(ids)) if progress is None else progress
    bar = None
    if show and len(ids) > 1:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(ids), desc="clusters", unit="cluster")

    fleet = FleetFrames(ids, with_gpus)
    failures: dict[str, CCAnalyticsError] = {}
    limit = asyncio.Semaphore(MAX_CONCURRENCY)

    async def one(cid: str) -> None:
        async with limit:
            try:
                listing = await client.list_cluster_pods_raw(cid)
            except CCAnalyticsError as err:
                failures[cid] = _kept(err)
                fleet.skip(cid)
            else:
                _add(fleet, failures, client, cid, listing)
                del listing  # the body: nothing of it may outlive the decoding
        if bar is not None:
            bar.update(1)

    try:
        with full_collections_deferred():
            # The first request alone: its headers tell the pacer the quota before we fan out.
            await one(ids[0])
            async with asyncio.TaskGroup() as group:
                for cid in ids[1:]:
                    group.create_task(one(cid))
    finally:
        if bar is not None:
            bar.close()

    return _finished(fleet, failures, ids, errors)


def _add(
    fleet: FleetFrames,
    failures: dict[str, CCAnalyticsError],
    client: Client | AsyncClient,
    cid: str,
    listing: RawListing,
) -> None:
    """Decode one cluster's listing into ``fleet``; a body that is not one, a failure."""
    refused = fleet.add(listing.content, cid, listing.observed_at)
    if refused is not None:
        failures[cid] = client.malformed(listing.path, refused.message)


def _finished(
    fleet: FleetFrames,
    failures: dict[str, CCAnalyticsError],
    ids: list[str],
    errors: ErrorMode,
) -> FleetLoad:
    """The frames of every cluster that loaded, the failures in the order asked."""
    pods_all, gpus = fleet.frames()
    gpus_all = gpus if gpus is not None else _no_gpus()
    failed = {cid: failures[cid] for cid in ids if cid in failures}  # in the order asked
    for frame in (pods_all, gpus_all):
        frame.attrs["errors"] = {cid: str(err) for cid, err in failed.items()}  # see FleetLoad
    if failed and errors == "raise":
        if len(ids) == 1:
            raise failed[ids[0]]
        raise FleetLoadError(failed, pods_all, asked=len(ids))
    return FleetLoad(pods_all, gpus_all, failed)


def _load_one(cid: str, client: Client, errors: ErrorMode, with_gpus: bool) -> FleetLoad:
    """One cluster through a synchronous client: its own request, on its own pool.

    What ``_aload`` does for one cluster, without an event loop and an async twin
    (a new connection pool, TLS context and connection for every load): a tenth of
    a 50,000-pod load's time went there.
    """
    from ccanalytics.frames._build import FleetFrames
    from ccanalytics.frames._input import full_collections_deferred

    fleet = FleetFrames([cid], with_gpus)
    failures: dict[str, CCAnalyticsError] = {}
    with full_collections_deferred():
        try:
            listing = client.list_cluster_pods_raw(cid)
        except CCAnalyticsError as err:
            failures[cid] = _kept(err)
            fleet.skip(cid)
        else:
            _add(fleet, failures, client, cid, listing)
            del listing  # the body: nothing of it may outlive the decoding
    return _finished(fleet, failures, [cid], errors)


def _no_gpus() -> pd.DataFrame:
    """The GPU frame of a load that did not ask for it: empty, with its columns."""
    from ccanalytics.frames._build import gpus_frame

    return gpus_frame([])


async def aload_cluster_pods(
    cluster_ids: str | Iterable[str],
    *,
    client: AsyncClient,
    progress: bool | None = None,
    errors: ErrorMode = "raise",
) -> pd.DataFrame:
    """Coroutine form of :func:`load_cluster_pods`, for code already in an event loop."""
    return (await _aload(cluster_ids, client, progress, errors, with_gpus=False)).pods


def _run_sync(
    cluster_ids: str | Iterable[str],
    client: Client | AsyncClient | None,
    progress: bool | None,
    errors: ErrorMode,
    with_gpus: bool,
) -> FleetLoad:
    """Run a load from synchronous code, in Jupyter too (a loop already running)."""
    ids = _cluster_ids(cluster_ids)
    if errors not in ("raise", "collect"):
        raise ValueError("errors must be 'raise' or 'collect'")
    if len(ids) == 1 and isinstance(client, Client):
        return _load_one(ids[0], client, errors, with_gpus)
    # The load is handed back here, not as the task's result: on Python 3.11, asyncio.run
    # formats repr(main task) on its way out (looking up the SIGINT handler), and a done
    # task's repr holds its result's: both frames, formatted as text for nothing.
    loaded: list[FleetLoad] = []

    async def run() -> None:
        # Same pacer, and the rate limit it learns shows on ``client`` too. Imported
        # here: a one-cluster load through a Client never needs the async client.
        from ccanalytics.api import AsyncClient

        twin = client.as_async() if client is not None else AsyncClient()
        async with twin:
            loaded.append(await _aload(ids, twin, progress, errors, with_gpus))

    if not _loop_running():
        # Outside the ``except`` that asked: an error of the load must not carry an
        # unrelated "no running event loop" RuntimeError in its chain.
        asyncio.run(run())
    else:
        with concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="ccanalytics-load"
        ) as pool:
            pool.submit(asyncio.run, run()).result()
    return loaded.pop()


def _loop_running() -> bool:
    """Whether this thread runs an event loop already (Jupyter does)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def load_cluster_pods(
    cluster_ids: str | Iterable[str],
    *,
    client: Client | AsyncClient | None = None,
    progress: bool | None = None,
    errors: ErrorMode = "raise",
) -> pd.DataFrame:
    """Load the pods of one cluster or many into one pods frame (see :func:`pods_frame`).

    Parameters
    ----------
    cluster_ids:
        One cluster id, or several (loaded concurrently within the rate limit).
    client:
        A :class:`Client` or :class:`AsyncClient`; its configuration and its
        rate-limit pacer are used. ``None``: a client from ``CCANALYTICS_API_KEY``
        and ``CCANALYTICS_BASE_URL``.
    progress:
        Show a ``tqdm`` progress bar for multi-cluster loads. ``None``: on in a
        terminal or notebook from four clusters on, off under pytest.
    errors:
        ``"raise"`` (default): if any cluster fails, raise its error (one cluster)
        or :class:`FleetLoadError` carrying the clusters that did load.
        ``"collect"``: return what loaded; ``frame.attrs["errors"]`` maps each
        failed cluster id to its exception (as :attr:`FleetLoadError.errors` does).

    Notes
    -----
    Works in scripts and in Jupyter (where an event loop is already running: the
    load then runs on a worker thread with its own loop).
    """
    return _run_sync(cluster_ids, client, progress, errors, with_gpus=False).pods


def load_cluster_frames(
    cluster_ids: str | Iterable[str],
    *,
    client: Client | AsyncClient | None = None,
    progress: bool | None = None,
    errors: ErrorMode = "raise",
) -> ClusterFrames:
    """As :func:`load_cluster_pods`, and the GPU frame too (see :func:`gpus_frame`).

    One request per cluster serves both frames; ``errors`` applies to both
    (``attrs["errors"]`` is set on each with ``"collect"``).
    """
    pods, gpus, _ = _run_sync(cluster_ids, client, progress, errors, with_gpus=True)
    return ClusterFrames(pods, gpus)


def load_fleet(
    cluster_ids: str | Iterable[str],
    *,
    client: Client | AsyncClient | None = None,
    progress: bool | None = None,
) -> FleetLoad:
    """Both frames of the clusters that loaded, and the exception of each that did not.

    As :func:`load_cluster_frames` with ``errors="collect"``, with the exceptions
    themselves in :attr:`FleetLoad.errors` (the frames' ``attrs["errors"]`` keeps
    their messages). What ``collect`` and the report build on.
    """
    return _run_sync(cluster_ids, client, progress, "collect", with_gpus=True)

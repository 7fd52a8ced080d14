"""A listing's JSON bytes, decoded straight into pod rows (the loader's path).

The bytes are split into one undecoded slice per pod (``msgspec.Raw``) in one pass
that also checks the whole document is JSON and a listing. Each pod is then decoded
into typed structs (:class:`_Pod`) that hold only the fields the frames read:
everything else (``args``, ``env`` values, SSH commands, ...) is skipped without
being turned into Python objects, and the structs are not tracked by the garbage
collector. That is what makes this path faster than ``orjson.loads`` alone
(benchmarks/loader.py). Leaf values are typed ``Any``: they arrive as the JSON types
``orjson`` would give, and the reading rules (``<NA>`` for wrong types) are applied
later, by the same code as for dicts.

A pod the structs cannot take (a block that is not an object, a number beyond
float range such as ``1e400``, a pod that is not an object) is decoded again on its
own with the standard library's ``json``, which reads any JSON, and goes through
:func:`~ccanalytics.frames._fields.dict_row`: one odd pod costs one slow pod, never
the listing. Numbers beyond float range become ``None`` there, so ``<NA>`` in their
cell; integers of any length stay integers (``<NA>`` wherever they do not fit).

Errors: a document that is not JSON, or not a listing, is reported as a message (a
:class:`Refusal`) rather than raised here, so that no traceback frame of this module
ever holds the body; the public functions raise it from frames that do not either.
"""

from __future__ import annotations

import re
from typing import Any, Final, NamedTuple

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType

from ccanalytics._json import tolerant_loads
from ccanalytics.frames._fields import GpuSample, JsonObject, Row, dict_row

__all__ = ["Refusal", "UnreadablePod", "decoded_rows", "split_listing"]


class Refusal(NamedTuple):
    """Why a document is not a listing, in words that quote nothing from it."""

    message: str
    not_json: bool  # invalid JSON, as opposed to JSON of the wrong shape


class UnreadablePod(Exception):
    """A pod no reader can take (not UTF-8, nested past every parser's depth limit)."""

    def refusal(self) -> Refusal:
        return Refusal(str(self), not_json=True)


# -- the structs: only what the frames read; leaves as sent (checked later) --------


class _Cluster(Struct, gc=False):
    id: Any = None
    rank: Any = None
    ip: Any = None
    role: Any = None


class _Utilization(Struct, gc=False):
    util: Any = None


class _Runtime(Struct, gc=False):
    uptime: Any = None
    # Structs, not dicts: a 50,000-pod listing has 400,000 of them.
    gpus: list[GpuSample] | None = None
    cpu: _Utilization | None = None
    memory: _Utilization | None = None
    ports: Any = None


class _Gpu(Struct, gc=False):
    id: Any = None
    count: Any = None


class _Cpu(Struct, gc=False):
    id: Any = None
    vcpuCount: Any = None
    memory: Any = None


class _Persistent(Struct, gc=False):
    size: Any = None
    path: Any = None


class _Mounts(Struct, gc=False):
    persistent: _Persistent | None = None
    network: Any = None


class _Networking(Struct, gc=False):
    enabled: Any = None
    ip: Any = None
    internalDns: Any = None


class _Endpoint(Struct, gc=False):
    host: Any = None
    port: Any = None


class _Ssh(Struct, gc=False):
    proxy: _Endpoint | None = None
    direct: _Endpoint | None = None


class _Pod(Struct, gc=False):
    id: Any = None
    name: Any = None
    cost: Any = None
    createdAt: Any = None
    startedAt: Any = None
    dataCenterId: Any = None
    desiredStatus: Any = None
    status: Any = None
    cloud: Any = None
    disk: Any = None
    image: Any = None
    template: Any = None
    registry: Any = None
    cudaVersion: Any = None
    locked: Any = None
    ports: Any = None
    # Names only are read: the values stay undecoded slices of the body.
    env: dict[str, Raw] | None = None
    cluster: _Cluster | None = None
    runtime: _Runtime | None = None
    gpu: _Gpu | None = None
    cpu: _Cpu | None = None
    mounts: _Mounts | None = None
    globalNetworking: _Networking | None = None
    ssh: _Ssh | None = None


class _Listing(Struct):
    pods: list[Raw] | UnsetType | None = UNSET


_NO_CLUSTER: Final = _Cluster()
_NO_RUNTIME: Final = _Runtime()
_NO_UTILIZATION: Final = _Utilization()
_NO_GPU: Final = _Gpu()
_NO_CPU: Final = _Cpu()
_NO_MOUNTS: Final = _Mounts()
_NO_PERSISTENT: Final = _Persistent()
_NO_NETWORKING: Final = _Networking()
_NO_SSH: Final = _Ssh()
_NO_ENDPOINT: Final = _Endpoint()

_LISTING: Final = msgspec.json.Decoder(_Listing)
_LISTING_OR_ARRAY: Final = msgspec.json.Decoder(_Listing | list[Raw])
_POD: Final = msgspec.json.Decoder(_Pod)
_GOT: Final = re.compile(r"got `([^`]+)`")


def split_listing(
    content: bytes | bytearray | memoryview, *, bare_array: bool, null_pods: bool
) -> list[Raw] | list[JsonObject] | Refusal:
    """The listing's pods as undecoded slices, or why ``content`` is not a listing.

    ``bare_array``: a JSON array of pods is accepted too; ``null_pods``: so is
    ``{"pods": null}`` (as no pods). The loader accepts neither: the service sends
    neither, so they mean something else answered.
    """
    try:
        top = (_LISTING_OR_ARRAY if bare_array else _LISTING).decode(content)
    except msgspec.ValidationError as err:
        # msgspec's messages name JSON types and paths, never values.
        got = _GOT.search(str(err))
        kind = got.group(1) if got else "another shape"
        if "$.pods" in str(err):
            return Refusal(f"expected a list of pods, got {kind}", not_json=False)
        want = "a pod listing {'pods': [...]}" + (" or a list of pods" if bare_array else "")
        return Refusal(f"expected {want}, got {kind}", not_json=False)
    except msgspec.DecodeError as err:
        # JSON msgspec refuses but the standard library reads ("\ud800"): read slowly,
        # by the same rules as a refused pod; else it is not JSON, and msgspec says why.
        return _tolerant_listing(content, bare_array, null_pods, str(err))
    except RecursionError:
        return Refusal(f"not readable JSON ({len(content)} bytes: nested too deep)", not_json=True)
    if isinstance(top, list):
        return top
    if top.pods is UNSET:
        return Refusal(
            "expected a pod listing {'pods': [...]}, got an object without 'pods'", False
        )
    if top.pods is None:
        return [] if null_pods else Refusal("expected a list of pods, got null", not_json=False)
    return top.pods


def _tolerant_listing(
    content: bytes | bytearray | memoryview, bare_array: bool, null_pods: bool, why: str
) -> list[JsonObject] | Refusal:
    """The pods of a document only the standard library reads, as dicts (or why not)."""
    try:
        top = tolerant_loads(content)
    except (ValueError, RecursionError):
        return Refusal(f"not valid JSON ({len(content)} bytes: {why})", not_json=True)
    pods = top if bare_array and isinstance(top, list) else None
    if isinstance(top, dict):
        pods = top.get("pods", UNSET)
        if pods is None and null_pods:
            return []
    if not isinstance(pods, list):
        return Refusal("expected a pod listing {'pods': [...]}", not_json=False)
    return [pod for pod in pods if isinstance(pod, dict)]


def _fallback(raw: Raw, index: int) -> Any:
    """One pod the structs refused, read by the standard library (any JSON at all).

    Raises :class:`UnreadablePod` for the pods no reader can take: bytes that are not
    UTF-8, or nesting deeper than the standard library's recursion limit.
    """
    try:
        return tolerant_loads(bytes(raw))
    except UnicodeDecodeError:
        raise UnreadablePod(f"pod {index} is not valid UTF-8") from None
    except RecursionError:
        raise UnreadablePod(f"pod {index} is nested too deep to read") from None
    except ValueError as err:  # what msgspec refused as JSON, the standard library too
        raise UnreadablePod(f"pod {index} is not valid JSON ({type(err).__name__})") from None


def _names(env: dict[str, Raw] | None) -> dict[str, None] | None:
    """``env``'s names only: its values are slices that keep the whole body alive."""
    return None if env is None else dict.fromkeys(env)


def decoded_rows(raws: list[Raw]) -> list[Row]:
    """Each pod slice as its row (:class:`~ccanalytics.frames._fields.PodFields` order);
    slices that are not JSON objects are dropped. :class:`UnreadablePod` when a slice
    cannot be read at all."""
    decode = _POD.decode
    rows: list[Row] = []
    add = rows.append
    for index, raw in enumerate(raws):
        try:
            pod = decode(raw)
        except (msgspec.MsgspecError, RecursionError, UnicodeDecodeError):
            parsed = _fallback(raw, index)
            if isinstance(parsed, dict):
                add(dict_row(parsed))
            continue
        cluster = pod.cluster or _NO_CLUSTER
        runtime = pod.runtime or _NO_RUNTIME
        runtime_cpu = runtime.cpu or _NO_UTILIZATION
        runtime_memory = runtime.memory or _NO_UTILIZATION
        gpu = pod.gpu or _NO_GPU
        cpu = pod.cpu or _NO_CPU
        mounts = pod.mounts or _NO_MOUNTS
        persistent = mounts.persistent or _NO_PERSISTENT
        networking = pod.globalNetworking or _NO_NETWORKING
        ssh = pod.ssh or _NO_SSH
        proxy = ssh.proxy or _NO_ENDPOINT
        direct = ssh.direct or _NO_ENDPOINT
        add(
            (
                cluster.id,
                pod.id,
                pod.name,
                cluster.rank,
                pod.cost,
                gpu.id,
                gpu.count,
                runtime_cpu.util,
                runtime_memory.util,
                pod.createdAt,
                pod.startedAt,
                runtime.uptime,
                cluster.ip,
                pod.dataCenterId,
                pod.desiredStatus,
                pod.status,
                pod.cloud,
                cluster.role,
                cpu.id,
                cpu.vcpuCount,
                cpu.memory,
                pod.disk,
                pod.image,
                pod.template,
                pod.registry,
                pod.cudaVersion,
                pod.locked,
                persistent.size,
                persistent.path,
                mounts.network,
                networking.enabled,
                networking.ip,
                networking.internalDns,
                proxy.host,
                proxy.port,
                direct.host,
                direct.port,
                pod.ports,
                runtime.ports,
                _names(pod.env),
                runtime.gpus,
            )
        )
    return rows

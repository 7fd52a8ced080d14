"""The pods frame's columns: one row per pod, nested blocks flattened.

Nested lists: the pods frame keeps one row per pod, so the label lists (``ports``,
``mounts.network[].volumeId``, ``env`` names) become comma-joined strings and
``runtime.ports`` a count: they are for reading and filtering
(``frame.ports.str.contains("8888/http")``), not for arithmetic. The one list of
measurements, ``runtime.gpus``, is aggregated per pod (mean/min/max) here and given
in full, one row per GPU, by the gpus frame. For these list-derived columns an
absent list is ``<NA>`` and an empty list is ``""`` or ``0``.
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter
from typing import Any, Final

import pandas as pd
from pandas.api.extensions import ExtensionArray

from ccanalytics.frames._convert import (
    Values,
    _bool_column,
    _float_column,
    _int_column,
    _masked_floats,
    _string_column,
    _timestamp_column,
    _utc_stamps,
)
from ccanalytics.frames._fields import JsonObject, Origin, PodFields, cluster_ids, statuses
from ccanalytics.frames._gpus import gpu_samples, summarize

__all__ = ["pod_columns"]

_DICT_TYPES: Final = frozenset({dict})

# The list-valued fields: each has a fast path for the common case (every element of
# the expected type), which raises TypeError/KeyError on a stray element; the column
# then takes the per-element path. One stray value costs one column, not the listing.


def _joined(lists: Values) -> list[str | None]:
    """Each list of strings comma-joined, skipping non-strings; ``None`` if not a list."""
    try:
        return [",".join(v) if isinstance(v, list) else None for v in lists]
    except TypeError:
        return [_join_strings(v) if isinstance(v, list) else None for v in lists]


_volume_id: Final = itemgetter("volumeId")


def _volume_ids(networks: Values) -> list[str | None]:
    """Each ``mounts.network[].volumeId`` list comma-joined; ``None`` if not a list."""
    try:
        return [",".join(map(_volume_id, v)) if isinstance(v, list) else None for v in networks]
    except (TypeError, KeyError):
        return [
            _join_strings([x.get("volumeId") for x in _objects_only(v)])
            if isinstance(v, list)
            else None
            for v in networks
        ]


def _join_strings(items: list[Any]) -> str:
    return ",".join([x for x in items if isinstance(x, str)])


def _objects_only(items: list[Any]) -> list[JsonObject]:
    return [x for x in items if isinstance(x, dict)]


def _env_names(envs: Values) -> list[str | None]:
    """The names of each ``env``, sorted and comma-joined. Values are never looked at."""
    try:
        return [",".join(sorted(e)) if isinstance(e, dict) else None for e in envs]
    except TypeError:  # a non-string name (possible in dicts built in Python)
        return [
            ",".join(sorted([k for k in e if isinstance(k, str)])) if isinstance(e, dict) else None
            for e in envs
        ]


def _object_counts(lists: Values) -> list[int | None]:
    """How many elements of each list are objects; ``None`` if not a list."""
    present = [v for v in lists if isinstance(v, list)]
    if _DICT_TYPES.issuperset(map(type, chain.from_iterable(present))):
        return [len(v) if isinstance(v, list) else None for v in lists]
    return [len(_objects_only(v)) if isinstance(v, list) else None for v in lists]


def pod_columns(raw: PodFields, origin: Origin) -> dict[str, ExtensionArray]:
    """The pods frame's columns for a chunk of pods, in no particular order."""
    n = len(raw.pod_id)
    samples = gpu_samples(raw.gpus)
    util = summarize(samples.util, samples.owner, n)
    memory = summarize(samples.memory_util, samples.owner, n)
    columns = {
        "cluster_id": cluster_ids(raw.cluster_id, origin.cluster_id),
        "pod_id": _string_column(raw.pod_id),
        "name": _string_column(raw.name),
        "rank": _int_column(raw.rank),
        "cost": _float_column(raw.cost),
        "gpu_type": _string_column(raw.gpu_type),
        "gpu_count": _int_column(raw.gpu_count),
        "cpu_util": _float_column(raw.cpu_util),
        "memory_util": _float_column(raw.memory_util),
        "gpu_util_mean": _masked_floats(util.mean),
        "gpu_util_max": _masked_floats(util.maximum),
        "gpu_mem_util_mean": _masked_floats(memory.mean),
        "created_at": _timestamp_column(raw.created_at),
        "started_at": _timestamp_column(raw.started_at),
        "uptime_s": _float_column(raw.uptime_s),
        "gpu_util_min": _masked_floats(util.minimum),
        "gpu_mem_util_max": _masked_floats(memory.maximum),
        "gpus_reporting": pd.arrays.IntegerArray(util.reporting, ~samples.listed),
        "cluster_ip": _string_column(raw.cluster_ip),
        "data_center_id": _string_column(raw.data_center_id),
        "desired_status": _string_column(raw.desired_status),
        "status": _string_column(statuses(raw.status, raw.desired_status)),
        "cloud": _string_column(raw.cloud),
        "cluster_role": _string_column(raw.cluster_role),
        "cpu_type": _string_column(raw.cpu_type),
        "vcpu_count": _int_column(raw.vcpu_count),
        "cpu_memory": _int_column(raw.cpu_memory),
        "disk": _int_column(raw.disk),
        "image": _string_column(raw.image),
        "template": _string_column(raw.template),
        "registry": _string_column(raw.registry),
        "cuda_version": _string_column(raw.cuda_version),
        "locked": _bool_column(raw.locked),
        "persistent_size": _int_column(raw.persistent_size),
        "persistent_path": _string_column(raw.persistent_path),
        "network_volumes": _string_column(_volume_ids(raw.network)),
        "global_networking": _bool_column(raw.global_networking),
        "global_ip": _string_column(raw.global_ip),
        "internal_dns": _string_column(raw.internal_dns),
        "ssh_proxy_host": _string_column(raw.ssh_proxy_host),
        "ssh_proxy_port": _int_column(raw.ssh_proxy_port),
        "ssh_direct_host": _string_column(raw.ssh_direct_host),
        "ssh_direct_port": _int_column(raw.ssh_direct_port),
        "ports": _string_column(_joined(raw.ports)),
        "runtime_ports": _int_column(_object_counts(raw.runtime_ports)),
        "env_vars": _string_column(_env_names(raw.env)),
    }
    if origin.observed_at is not None:
        columns["observed_at"] = _utc_stamps(origin.observed_at)
    return columns

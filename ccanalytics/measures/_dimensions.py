"""What a measure can be split by, declared once: the dimensions.

A :class:`Dimension` names one way of cutting the pod rows a measure sums (as dbt
MetricFlow's dimensions do): the columns it gives an answer (with their dtypes, the
pods frame's own), the pod-row columns it groups by (``keys``), the columns it reports
as last seen (``attributes``: a pod's name and rank), and for a time dimension the width
of its UTC buckets (each snapshot's span is cut at their edges). ``team`` is a mapping's
answer, not a column: it needs one (``teams=``). :meth:`History.measures
<ccanalytics.history.History.measures>` answers any sum of the registry by any of these;
the docs' measures page lists them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

__all__ = ["DIMENSIONS", "POD_IDENTITY", "Dimension", "columns_of", "dimensions"]

_US_PER_HOUR = 3_600_000_000

#: A pod's identity as every per-pod answer gives it first (the ``pod`` dimension's
#: columns), with the pods frame's dtypes: its keys, then its name, rank, GPU type and
#: count as last seen.
POD_IDENTITY: Final[Mapping[str, str]] = MappingProxyType(
    {
        "cluster_id": "string",
        "pod_id": "string",
        "name": "string",
        "rank": "Int64",
        "gpu_type": "string",
        "gpu_count": "Int64",
    }
)


@dataclass(frozen=True)
class Dimension:
    """One way to split a measure (see the module docstring)."""

    name: str
    meaning: str
    #: The answer's columns for this dimension and their dtypes, in order.
    columns: Mapping[str, str]
    #: The pod-row columns grouped by (a subset of ``columns``).
    keys: tuple[str, ...] = ()
    #: The columns reported as the pod last had them (``arg_max(column, t)``).
    attributes: tuple[str, ...] = field(default=())
    #: A time dimension: its buckets' width in microseconds, aligned to the Unix epoch.
    bucket_us: int | None = None
    #: The argument the dimension needs (``"teams"``: a team mapping), if any.
    needs: str | None = None


#: Every dimension, in the order an answer's key columns come.
DIMENSIONS: Final[tuple[Dimension, ...]] = (
    Dimension(
        "cluster",
        "the cluster (cluster_id)",
        {"cluster_id": "string"},
        keys=("cluster_id",),
    ),
    Dimension(
        "team",
        "whose the pod was, by a team mapping (cluster and pod-name globs); "
        "'unallocated' when no rule matches",
        {"team": "string"},
        needs="teams",
    ),
    Dimension(
        "gpu_type",
        "the pod's GPU type as the service names it (<NA> for CPU pods)",
        {"gpu_type": "string"},
        keys=("gpu_type",),
    ),
    Dimension(
        "pod",
        "the pod (cluster_id, pod_id), with its name, rank, GPU type and count as last seen",
        POD_IDENTITY,
        keys=("cluster_id", "pod_id"),
        attributes=("name", "rank", "gpu_type", "gpu_count"),
    ),
    Dimension(
        "rank",
        "the rank within its cluster (cluster_id, rank; <NA> until assigned)",
        {"cluster_id": "string", "rank": "Int64"},
        keys=("cluster_id", "rank"),
    ),
    Dimension(
        "day",
        "the UTC day (its midnight): each snapshot's span is cut at midnight",
        {"day": "datetime64[ns, UTC]"},
        bucket_us=24 * _US_PER_HOUR,
    ),
    Dimension(
        "hour",
        "the UTC hour (its start): each snapshot's span is cut on the hour",
        {"hour": "datetime64[ns, UTC]"},
        bucket_us=_US_PER_HOUR,
    ),
)

_BY_NAME: Final[Mapping[str, Dimension]] = MappingProxyType({d.name: d for d in DIMENSIONS})


def dimensions(by: str | Iterable[str] | None) -> tuple[Dimension, ...]:
    """The dimensions ``by`` names (one name, several, or None: no split), in the
    registry's order; a ValueError names an unknown one, and an ArgumentsError two
    time dimensions at once (a span is cut at one width)."""
    from ccanalytics.errors import ArgumentsError

    names = [] if by is None else [by] if isinstance(by, str) else list(by)
    unknown = [name for name in names if name not in _BY_NAME]
    if unknown:
        raise ValueError(f"no dimension {unknown[0]!r} to split by (known: {', '.join(_BY_NAME)})")
    chosen = tuple(d for d in DIMENSIONS if d.name in names)
    if sum(d.bucket_us is not None for d in chosen) > 1:
        raise ArgumentsError("{by} may name one time dimension (day or hour), not both", "by")
    return chosen


def columns_of(chosen: tuple[Dimension, ...]) -> dict[str, str]:
    """The key columns of an answer split by ``chosen``, in order, with their dtypes."""
    found: dict[str, str] = {}
    for dimension in chosen:
        found |= {c: t for c, t in dimension.columns.items() if c not in found}
    return found

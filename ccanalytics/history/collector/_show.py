"""What a :class:`~ccanalytics.history.CollectResult` shows: one line, or a small table.

``repr`` says what was written in one line (clusters, rows, files, the clusters that
failed); ``_repr_html_`` (Jupyter) one row per cluster: when it was observed, or why
it failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

from ccanalytics._show import html_table


class CollectResult(Protocol):
    """What is read of the result (a protocol: its module imports this one)."""

    @property
    def observed_at(self) -> Mapping[str, datetime]: ...
    @property
    def clusters(self) -> tuple[str, ...]: ...
    @property
    def pod_rows(self) -> int: ...
    @property
    def gpu_rows(self) -> int: ...
    @property
    def errors(self) -> Mapping[str, Exception]: ...
    @property
    def files(self) -> tuple[object, ...]: ...


__all__ = ["result_html", "result_repr"]


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def result_repr(result: CollectResult) -> str:
    """``<CollectResult: 3 clusters, 150 pod rows, 840 GPU rows, 6 files; failed: cl-x>``."""
    text = (
        f"<CollectResult: {_plural(len(result.clusters), 'cluster')}, "
        f"{_plural(result.pod_rows, 'pod row')}, {_plural(result.gpu_rows, 'GPU row')}, "
        f"{_plural(len(result.files), 'file')}"
    )
    if result.errors:
        text += f"; failed: {', '.join(result.errors)}"
    return text + ">"


def result_html(result: CollectResult) -> str:
    """One row per cluster (loaded or failed), under a caption of the totals."""
    rows: list[list[object]] = []
    for cluster in result.clusters:
        when = result.observed_at.get(cluster)
        rows.append(
            [
                cluster,
                "written" if when else "no pods",
                f"{when:%Y-%m-%d %H:%M:%S} UTC" if when else "",
            ]
        )
    for cluster, err in result.errors.items():
        rows.append([cluster, "failed", " ".join(str(err).split())])
    caption = result_repr(result).removeprefix("<").removesuffix(">")
    return html_table(caption, rows, header=["cluster", "outcome", "observed at / why"])

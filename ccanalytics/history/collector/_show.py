"""What a :class:`~ccanalytics.history.CollectResult` shows: one line, or a small table.

``repr`` says what was written in one line (clusters, rows, files, the clusters that
failed); ``_repr_html_`` (Jupyter) one row per cluster: when it was observed, or why
it failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccanalytics._show import html_table

if TYPE_CHECKING:
    from ccanalytics.history.collector._collect import CollectResult

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

"""``cost_breakdown(by="cluster")``, the word History uses; ``"cluster_id"`` still works, warned."""

from __future__ import annotations

import warnings

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from ccanalytics import pods_frame
from ccanalytics.plots import cost_breakdown
from ccanalytics.sandbox import SandboxApp


def _bars(by: str) -> list[tuple[str, float]]:
    raw = SandboxApp().data.clusters
    pods = pd.concat([pods_frame(p, cluster_id=c) for c, p in raw.items()], ignore_index=True)
    _, ax = plt.subplots()
    cost_breakdown(pods, by=by, ax=ax)  # type: ignore[arg-type]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    widths = [
        sum(p.get_width() for c in ax.containers for p in [c.patches[i]])
        for i in range(len(labels))
    ]
    plt.close(ax.figure)
    return list(zip(labels, widths, strict=True))


def test_by_cluster_is_by_cluster_id_and_the_old_spelling_warns() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = _bars("cluster")
    with pytest.warns(DeprecationWarning, match='by="cluster"'):
        old = _bars("cluster_id")
    assert new == old and len(new) > 1

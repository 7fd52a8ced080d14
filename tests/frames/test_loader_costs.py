"""Work a load must not do: costs found profiling ``load_cluster_pods`` (issue 37)."""

from __future__ import annotations

import pandas as pd
import pytest

import ccanalytics


def test_a_load_never_formats_its_frames_as_text(client, monkeypatch: pytest.MonkeyPatch) -> None:
    # On Python 3.11, asyncio.run looks the SIGINT handler up on the way out, and the
    # enum lookup formats a message holding repr(main task): the task's result, both
    # frames. 0.15 s of a 50k-pod load's 3.8 s, profiled; none of it shown anywhere.
    shown: list[int] = []

    def counted(self: pd.DataFrame) -> str:
        shown.append(len(self))
        return "<frame>"

    monkeypatch.setattr(pd.DataFrame, "__repr__", counted)
    frame = ccanalytics.load_cluster_pods("cl-llama70b-train", client=client)
    assert len(frame) == 32
    assert shown == []

"""A synchronous load never formats its frames as text (once half of each collect).

On Python 3.11 ``asyncio.run`` ends by asking ``signal.getsignal`` for its SIGINT
handler, whose failed enum lookup formats the main task's repr, result included: a
load whose frames were that result paid a full ``DataFrame.__repr__`` per frame.
"""

from __future__ import annotations

import pandas as pd
import pytest

import ccanalytics
from ccanalytics.sandbox import FULL_ACCESS_KEY, IN_PROCESS_URL, SandboxApp, SandboxTransport


def test_a_synchronous_load_never_formats_its_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    formatted: list[int] = []
    original = pd.DataFrame.__repr__

    def counting(frame: pd.DataFrame) -> str:
        formatted.append(len(frame))
        return original(frame)

    monkeypatch.setattr(pd.DataFrame, "__repr__", counting)
    transport = SandboxTransport(SandboxApp())
    with ccanalytics.Client(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=transport) as client:
        pods = ccanalytics.load_cluster_pods(["cl-infer-prod", "cl-llama70b-train"], client=client)
    assert len(pods) > 0
    assert formatted == []

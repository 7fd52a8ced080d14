"""Work a load must not do: costs found profiling ``load_cluster_pods``."""

from __future__ import annotations

import subprocess
import sys

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


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_load_imports_analysis_only_when_the_accessor_is_used() -> None:
    # The measures' engine and every analysis module were a tenth of a first load's
    # imports, for an accessor that a script that only loads never reads.
    out = _run(
        "import sys\n"
        "import ccanalytics\n"
        "from ccanalytics.sandbox import Sandbox\n"
        "with Sandbox() as sb, sb.client() as client:\n"
        "    frame = ccanalytics.load_cluster_pods('cl-llama70b-train', client=client)\n"
        "print('ccanalytics.analysis' in sys.modules)\n"
        "print(type(frame.cc).__name__, len(frame.cc.idle_pods()) >= 0)\n"
        "print('ccanalytics.analysis' in sys.modules)\n"
    )
    assert out.splitlines() == ["False", "CCAccessor True", "True"]


@pytest.mark.parametrize(
    "first",
    [
        "import ccanalytics.analysis\nimport ccanalytics\nf = ccanalytics.pods_frame([])",
        "import ccanalytics\nf = ccanalytics.pods_frame([])\nimport ccanalytics.analysis",
        "import ccanalytics\nf = ccanalytics.pods_frame([])\nimport pandas as pd\npd.DataFrame.cc",
    ],
    ids=["analysis-first", "analysis-after-the-frame", "read-on-the-class"],
)
def test_the_accessor_is_analysis_own_whatever_is_imported_first(first: str) -> None:
    # -W error: pandas warns when an accessor overrides a name that is taken.
    out = _run(f"{first}\nprint(type(f.cc).__name__, f.cc.summary().empty)\n")
    assert out == "CCAccessor True"

"""What a newcomer sees first: help(ccanalytics), reprs of the objects they hold."""

from __future__ import annotations

import pydoc

import ccanalytics
from ccanalytics.sandbox import Sandbox


def test_help_starts_with_how_to_begin() -> None:
    text = pydoc.render_doc(ccanalytics, renderer=pydoc.plaintext)
    description = text[text.index("DESCRIPTION") :]
    first_lines = description.splitlines()[1:16]
    assert first_lines[0].strip().startswith("How to begin")
    code = "\n".join(first_lines)
    assert "load_cluster_pods" in code and "Sandbox()" in code and "pods.cc." in code


def test_the_getting_started_example_runs() -> None:
    with Sandbox() as sb, sb.client() as client:
        pods = ccanalytics.load_cluster_pods(
            ["cl-llama70b-train", "cl-infer-prod"], client=client, progress=False
        )
    assert set(pods.cc.cluster_summary()["cluster_id"]) == {"cl-llama70b-train", "cl-infer-prod"}
    assert not pods.cc.idle_pods().empty


def test_sandbox_repr_names_its_url_and_state() -> None:
    sandbox = Sandbox()
    n = len(sandbox.app.data.clusters)
    assert repr(sandbox) == f"<Sandbox {sandbox.url} not started, {n} clusters>"
    with sandbox:
        assert repr(sandbox).startswith(f"<Sandbox {sandbox.url} serving")
    sandbox_key = sandbox.api_key
    assert sandbox_key not in repr(sandbox)

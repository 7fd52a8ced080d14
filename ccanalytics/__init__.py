"""ccanalytics: what your GPU clusters are doing and costing, and clean SSH keys.

How to begin (no account needed: the embedded sandbox answers like the real API)::

    import ccanalytics
    from ccanalytics.sandbox import Sandbox

    with Sandbox() as sb, sb.client() as client:     # or ccanalytics.Client() with
        pods = ccanalytics.load_cluster_pods(         # CCANALYTICS_API_KEY and
            ["cl-llama70b-train", "cl-infer-prod"],   # CCANALYTICS_BASE_URL set
            client=client,
        )
    pods.cc.cluster_summary()    # per cluster: pods by status, USD/h, idle and unused cost
    pods.cc.idle_pods()          # running GPU pods paid for and doing nothing
    pods.cc.stragglers()         # ranks far below their cluster's median

Then: ``ccanalytics.analysis`` and ``ccanalytics.plots`` for more answers and charts,
``ccanalytics.audit_keys("authorized_keys")`` for SSH keys, and ``ccanalytics report
--sandbox --output report.html`` for the scheduled HTML report. Errors are subclasses
of :class:`CCAnalyticsError`; the README has the whole picture.

Every public name and subpackage is imported on first use (``lazy_loader``, from
the names listed once, in ``__init__.pyi``): ``import ccanalytics`` loads nothing
heavy, the client loads httpx and pydantic, the frames load pandas, so ``ccanalytics
--help`` and the key-audit CLI start fast.
"""

from __future__ import annotations

import importlib
from typing import Any

import lazy_loader

__version__ = "0.1.0"

_attribute, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)


def __getattr__(name: str) -> Any:
    value = _attribute(name)
    if getattr(value, "__module__", "").startswith("ccanalytics.frames"):
        # A frame made through the front door has the ``df.cc`` accessor, which
        # ``analysis`` registers (frames may not import analysis: it builds on them).
        importlib.import_module("ccanalytics.analysis")
    return value

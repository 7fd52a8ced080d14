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
heavy, the client loads httpx and pydantic, the frames load pandas (and analysis only
when ``df.cc`` is first used), so ``ccanalytics --help`` and the key-audit CLI start fast.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import lazy_loader

__version__ = "0.1.0"

_attribute, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)


def __getattr__(name: str) -> Any:
    value = _attribute(name)
    if getattr(value, "__module__", "").startswith("ccanalytics.frames"):
        # A frame made through the front door has the ``df.cc`` accessor, which
        # ``analysis`` registers (frames may not import analysis: it builds on them).
        _accessor_on_first_use()
    return value


def _accessor_on_first_use() -> None:
    """``DataFrame.cc``, with :mod:`ccanalytics.analysis` imported at its first use.

    Importing analysis with the frames took a tenth of a first load's imports (the
    measures' engine and every analysis module) for an accessor a script that only
    loads never touches.
    """
    import pandas as pd  # the frames import it anyway

    if "ccanalytics.analysis" not in sys.modules and "cc" not in vars(pd.DataFrame):
        setattr(pd.DataFrame, "cc", _AnalysisOnFirstUse())  # noqa: B010 (not typed on DataFrame)


class _AnalysisOnFirstUse:
    """Stands in for ``DataFrame.cc`` until first read: then it steps aside, imports
    analysis, whose accessor registers itself in its place, and hands that over."""

    def __get__(self, frame: Any, owner: type | None = None) -> Any:
        import pandas as pd

        if vars(pd.DataFrame).get("cc") is self:
            delattr(pd.DataFrame, "cc")
        # While analysis is being imported (its registration asks whether the name is
        # taken), this is the half-made module and ``cc`` is not there yet: the
        # AttributeError tells pandas the name is free.
        importlib.import_module("ccanalytics.analysis")
        return (pd.DataFrame if frame is None else frame).cc

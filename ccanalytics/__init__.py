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

Every public name is imported on first use (module ``__getattr__``): ``import
ccanalytics`` loads nothing heavy, the client loads httpx and pydantic, the frames
load pandas, so ``ccanalytics --help`` and the key-audit CLI start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccanalytics.api import AsyncClient, Client
    from ccanalytics.api._ratelimit import RateLimitStatus, RateLimitWindow, parse_rate_limit
    from ccanalytics.api.models import ErrorResponse, Pod, Registry, SshKeys, UpdateSshKeysRequest
    from ccanalytics.errors import (
        ApiConnectionError,
        ApiError,
        ApiTimeoutError,
        AuthenticationError,
        CCAnalyticsError,
        ConfigurationError,
        FleetLoadError,
        InsecureTransportWarning,
        InvalidSshKeysError,
        KeyNormalizationError,
        MalformedResponseError,
        NotFoundError,
        PermissionDeniedError,
        RateLimitError,
        ResponseTooLargeError,
        ServerError,
        StoreError,
        UnprocessableEntityError,
    )
    from ccanalytics.frames._build import gpus_frame, pods_frame
    from ccanalytics.frames._loader import (
        aload_cluster_pods,
        load_cluster_frames,
        load_cluster_pods,
    )
    from ccanalytics.history import CollectResult, History, collect
    from ccanalytics.keys import (
        AuthorizedKey,
        audit_keys,
        diff_ssh_keys,
        normalize_key_lines,
        parse_authorized_key,
    )

__version__ = "0.1.0"

#: Every public name -> the module that defines it, imported on first access.
_LAZY = {
    "AsyncClient": "ccanalytics.api",
    "Client": "ccanalytics.api",
    "RateLimitStatus": "ccanalytics.api",
    "RateLimitWindow": "ccanalytics.api",
    "parse_rate_limit": "ccanalytics.api",
    **dict.fromkeys(
        (
            "ApiConnectionError",
            "ApiError",
            "ApiTimeoutError",
            "AuthenticationError",
            "CCAnalyticsError",
            "ConfigurationError",
            "FleetLoadError",
            "InsecureTransportWarning",
            "InvalidSshKeysError",
            "KeyNormalizationError",
            "MalformedResponseError",
            "NotFoundError",
            "PermissionDeniedError",
            "RateLimitError",
            "ResponseTooLargeError",
            "ServerError",
            "StoreError",
            "UnprocessableEntityError",
        ),
        "ccanalytics.errors",
    ),
    **dict.fromkeys(
        ("ErrorResponse", "Pod", "Registry", "SshKeys", "UpdateSshKeysRequest"),
        "ccanalytics.api",
    ),
    "pods_frame": "ccanalytics.frames",
    "gpus_frame": "ccanalytics.frames",
    "load_cluster_pods": "ccanalytics.frames",
    "aload_cluster_pods": "ccanalytics.frames",
    "load_cluster_frames": "ccanalytics.frames",
    "CollectResult": "ccanalytics.history",
    "History": "ccanalytics.history",
    "collect": "ccanalytics.history",
    "AuthorizedKey": "ccanalytics.keys",
    "audit_keys": "ccanalytics.keys",
    "diff_ssh_keys": "ccanalytics.keys",
    "normalize_key_lines": "ccanalytics.keys",
    "parse_authorized_key": "ccanalytics.keys",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ccanalytics' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    if module == "ccanalytics.frames":
        importlib.import_module("ccanalytics.analysis")  # registers the ``df.cc`` accessor
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "ApiConnectionError",
    "ApiError",
    "ApiTimeoutError",
    "AsyncClient",
    "AuthenticationError",
    "AuthorizedKey",
    "CCAnalyticsError",
    "Client",
    "CollectResult",
    "ConfigurationError",
    "ErrorResponse",
    "FleetLoadError",
    "History",
    "InsecureTransportWarning",
    "InvalidSshKeysError",
    "KeyNormalizationError",
    "MalformedResponseError",
    "NotFoundError",
    "PermissionDeniedError",
    "Pod",
    "RateLimitError",
    "RateLimitStatus",
    "RateLimitWindow",
    "Registry",
    "ResponseTooLargeError",
    "ServerError",
    "SshKeys",
    "StoreError",
    "UnprocessableEntityError",
    "UpdateSshKeysRequest",
    "aload_cluster_pods",
    "audit_keys",
    "collect",
    "diff_ssh_keys",
    "gpus_frame",
    "load_cluster_frames",
    "load_cluster_pods",
    "normalize_key_lines",
    "parse_authorized_key",
    "parse_rate_limit",
    "pods_frame",
]

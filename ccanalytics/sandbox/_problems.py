"""What the sandbox answers with: responses and RFC 9457 problem+json errors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from ccanalytics.sandbox._faults import Fault

__all__ = [
    "SandboxResponse",
    "not_allowed",
    "problem",
    "title",
]


@dataclass
class SandboxResponse:
    """What the app answers; ``wire_fault`` tells a server to misbehave on the wire."""

    status: int
    headers: dict[str, str]
    body: bytes
    wire_fault: Fault | None = None


_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Content Too Large",
    414: "URI Too Long",
    415: "Unsupported Media Type",
    422: "Unprocessable Entity",
    431: "Request Header Fields Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def problem(
    status: int, title: str, detail: str, errors: list[str] | None = None
) -> SandboxResponse:
    body: dict[str, Any] = {"title": title, "status": status, "detail": detail}
    if errors:
        body["errors"] = errors
    return SandboxResponse(
        status, {"Content-Type": "application/problem+json"}, json.dumps(body).encode()
    )


def title(status: int) -> str:
    try:
        return _TITLES.get(status) or HTTPStatus(status).phrase
    except ValueError:  # a status http does not name (e.g. 599)
        return "Error"


def not_allowed(method: str, allowed: str) -> SandboxResponse:
    """405 with ``Allow``, as the document requires of every 405."""
    shown = method if method.isascii() and method.isprintable() else "this method"
    resp = problem(405, "Method Not Allowed", f"{shown[:20]} is not allowed here")
    resp.headers["Allow"] = allowed
    return resp

"""Where requests go: the base URL, checked once when a client is built, and path segments.

Rules for the base URL (each broken rule is a :class:`ConfigurationError` at
construction, never a raw ``UnicodeError`` at the first call):

- ``http`` or ``https``, with a host that DNS could resolve: an IP address, or
  labels of 1-63 letters, digits, ``-`` or ``_`` (253 characters in all;
  internationalised names are checked in their IDNA form);
- no ``user:password@``, query or fragment (a base URL is shown in reprs and errors);
- a path prefix is kept (``https://gw.example.com/cc`` sends ``/cc/v2/...``), but a
  trailing ``/v2`` is stripped: the client adds it, and ``/v2/v2/...`` would be a
  404 that reads as if the resource did not exist.

``http://`` to a host that is not this machine (nor a reserved name) sends the bearer key in clear text:
that gives one :class:`InsecureTransportWarning` per host and process.
"""

from __future__ import annotations

import ipaddress
import re
import threading
import warnings
from typing import NamedTuple
from urllib.parse import quote

import httpx

from ccanalytics.errors import ConfigurationError, InsecureTransportWarning

__all__ = ["BaseUrl", "checked_base_url", "path_segment", "warn_if_insecure"]

_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
_MAX_HOST_LENGTH = 253
#: The version prefix the client adds to every path.
_API_PREFIX = "/v2"
#: Host names whose requests cannot cross the network: loopback, and RFC 6761's
#: reserved names, which public DNS never resolves (only a test or in-process
#: transport serves them, like the sandbox's ``http://sandbox.invalid``).
_LOCAL_SUFFIXES = (".localhost", ".invalid", ".test", ".example")

_warned_hosts: set[str] = set()
_warned_lock = threading.Lock()


class BaseUrl(NamedTuple):
    """A checked base URL: ``url`` without a trailing ``/`` or ``/v2``; ``host`` for messages."""

    url: str
    host: str
    scheme: str


def _host_problem(host: str, raw_host: bytes) -> str | None:
    """Why ``host`` cannot be resolved, or ``None`` if it can."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return None
    try:
        name = raw_host.decode("ascii")
    except UnicodeDecodeError:
        return "it is not ASCII after IDNA encoding"
    name = name.removesuffix(".")
    if len(name) > _MAX_HOST_LENGTH:
        return f"it is {len(name)} characters long, more than {_MAX_HOST_LENGTH}"
    for number, label in enumerate(name.split("."), start=1):
        if not label:
            return f"label {number} is empty"
        if len(label) > 63:
            return f"label {number} is {len(label)} characters long, more than 63"
        if not _LABEL.fullmatch(label):
            return f"label {number} has a character other than letters, digits, '-' and '_'"
    return None


def _parsed(url: str) -> httpx.URL:
    try:
        return httpx.URL(url)
    except Exception:
        pass
    # Raised outside the except block, so the parser's error (which may quote the URL,
    # and a URL may carry a password) is not even the hidden __context__.
    raise ConfigurationError("the base URL cannot be parsed as a URL")


def checked_base_url(url: str) -> BaseUrl:
    """The base URL to send to, or :class:`ConfigurationError` saying which rule it breaks."""
    if not isinstance(url, str):
        raise ConfigurationError(f"the base URL must be a str, not {type(url).__name__}")
    parsed = _parsed(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigurationError(
            "the base URL must be an http:// or https:// URL with a host, "
            f"e.g. https://api.example.com (got scheme {parsed.scheme!r})"
        )
    if parsed.userinfo:
        raise ConfigurationError(
            "the base URL must not contain user:password@; the API key is the only credential"
        )
    if parsed.query or parsed.fragment:
        raise ConfigurationError("the base URL must not have a query (?...) or fragment (#...)")
    problem = _host_problem(parsed.host, parsed.raw_host)
    if problem is not None:
        raise ConfigurationError(f"the base URL's host {parsed.host!r} is unusable: {problem}")
    path = parsed.raw_path.decode("ascii").rstrip("/").removesuffix(_API_PREFIX).rstrip("/")
    netloc = parsed.netloc.decode("ascii")
    return BaseUrl(f"{parsed.scheme}://{netloc}{path}", netloc, parsed.scheme)


def _is_local(host: str) -> bool:
    host = host.lower().removesuffix(".")
    if host == "localhost" or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def warn_if_insecure(base: BaseUrl, *, stacklevel: int) -> None:
    """Warn once per host when the key would cross the network in clear text.

    ``stacklevel`` as for :func:`warnings.warn`, counted from this function's caller.
    """
    host = httpx.URL(base.url).host
    if base.scheme != "http" or _is_local(host):
        return
    with _warned_lock:
        if host in _warned_hosts:
            return
        _warned_hosts.add(host)
    warnings.warn(
        InsecureTransportWarning(
            f"the base URL is plain http:// to {host}: the API key will be sent in clear "
            "text over the network; use https:// (this warning is shown once per host)"
        ),
        stacklevel=stacklevel + 1,
    )


def path_segment(value: object, what: str) -> str:
    """``value`` as exactly one URL path segment: ``a/b`` reaches the server as ``a%2Fb``.

    ``.`` and ``..`` are refused: URL normalisation (the client's, or any proxy's)
    would remove them and address another endpoint (``GET /v2/clusters/../pods``
    is ``GET /v2/pods``), and no resource is named that.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    if value in (".", ".."):
        raise ValueError(f"{what} must not be {value!r}: a dot segment would change the URL path")
    try:
        return quote(value, safe="")
    except UnicodeEncodeError:
        pass
    raise ValueError(f"{what} is not valid Unicode text (lone surrogate)")  # no __context__

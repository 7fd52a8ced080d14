"""Every exception ccanalytics raises.

The whole tree, drawn once::

    CCAnalyticsError
    ├── ApiError                       status, title, detail, errors, headers
    │   ├── AuthenticationError        401
    │   ├── PermissionDeniedError      403
    │   ├── NotFoundError              404
    │   ├── UnprocessableEntityError   422
    │   ├── RateLimitError             429 (retry_after), also raised locally when pacing gives up
    │   ├── ServerError                5xx and any other unexpected status
    │   ├── MalformedResponseError     a 2xx whose body is not what the spec promises
    │   └── ResponseTooLargeError      a body past the client's size limit (not read further)
    ├── ApiConnectionError             network failure
    │   └── ApiTimeoutError            connect/read/write/pool timeout, or the call's deadline
    ├── InvalidSshKeysError            local validation before a PUT; ``errors`` as "<json path>: <message>"
    ├── KeyNormalizationError          lines normalize_key_lines cannot make API keys of; ``errors`` as "line <n>: <reason>"
    ├── KeyFileError                   a key file given by path that is not a readable regular file (also an OSError)
    ├── ConfigurationError             no API key or base URL, or an unusable one (also a ValueError)
    ├── GpuTypesError                  a table of GPU types (right-sizing) unreadable or malformed (also a ValueError)
    ├── FleetLoadError                 some clusters of a fleet load failed; ``frame`` has the rest
    ├── ScheduleError                  a collector schedule over the rate-limit budget (also a ValueError)
    ├── StoreError                     the history store cannot be read or written; ``path`` names the file
    ├── EngineError                    a History's engine (Spark) cannot answer a question; ``engine``, ``question``
    ├── PolicyError                    a check policy file that cannot be used; ``path``, ``line``, ``key`` (also a ValueError)
    ├── TeamsError                     a showback team mapping that cannot be used; ``path``, ``line``, ``key`` (also a ValueError)
    ├── NoDataError                    a plot has nothing to draw (also a ValueError)
    ├── ReportLoadError                no cluster of a report could be loaded; ``errors``: id -> why
    ├── ReportOutputError              the report or its CSV files cannot go there (also an OSError)
    ├── CheckOutputError               check's --textfile cannot be written there; ``path`` (also an OSError)
    ├── ArgumentsError                 arguments each valid that do not go together; ``names`` (also a ValueError)
    └── ExportOutputError              an export's output exists (no ``force``) or cannot be written; ``path`` (also an OSError)

``MalformedResponseError``, ``ResponseTooLargeError``, ``KeyNormalizationError``,
``ConfigurationError``, ``GpuTypesError``, ``FleetLoadError``, ``ScheduleError``, ``StoreError``, ``EngineError``, ``PolicyError``,
``KeyFileError``, ``NoDataError``, ``ReportLoadError``, ``ReportOutputError``, ``CheckOutputError``,
``ArgumentsError``, ``TeamsError`` and ``ExportOutputError`` are additions to the tree
that ``shared/API.md`` fixes; everything else is exactly that tree.
:class:`InsecureTransportWarning` warns of a bearer key sent over plain ``http://`` to
a host that is not this machine; :class:`ClockSkewWarning` of a service clock far from
ours, which the client and ``collect`` do not trust unless told to.

API and connection errors name where they went (``method``, ``url``, ``host``, ``path``;
``str(err)`` starts with ``"GET https://host/v2/...: "``). No message built here
ever contains the API key: messages are made from the response's status and
problem+json fields and the request's method and URL only, and the client scrubs
every text that came from the network before an error leaves it.

Every exception pickles and deep-copies with its fields (a ``ProcessPoolExecutor``
worker can raise one), through :meth:`CCAnalyticsError.__reduce__`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ApiConnectionError",
    "ApiError",
    "ApiTimeoutError",
    "ArgumentsError",
    "AuthenticationError",
    "CCAnalyticsError",
    "CheckOutputError",
    "ClockSkewWarning",
    "ConfigurationError",
    "EngineError",
    "ExportOutputError",
    "FleetLoadError",
    "GpuTypesError",
    "InsecureTransportWarning",
    "InvalidSshKeysError",
    "KeyFileError",
    "KeyNormalizationError",
    "MalformedResponseError",
    "NoDataError",
    "NotFoundError",
    "PermissionDeniedError",
    "PolicyError",
    "RateLimitError",
    "ReportLoadError",
    "ReportOutputError",
    "ResponseTooLargeError",
    "ScheduleError",
    "ServerError",
    "StoreError",
    "TeamsError",
    "UnprocessableEntityError",
]

#: Headers that may be kept on an exception; anything else (cookies, auth echoes) is dropped.
_SAFE_HEADERS = frozenset(
    {
        "content-type",
        "content-length",
        "date",
        "retry-after",
        "ratelimit",
        "ratelimit-policy",
        "server",
        "via",
        "x-request-id",
    }
)


#: Line breaks and control characters (terminal escapes) in text a server sent.
_UNREADABLE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")
#: ``$.keys[3]: ...``, the server's JSON-path form of a failure of one key.
_KEY_PATH = re.compile(r"^\$(?:\.keys|\[['\"]keys['\"]\])\[(\d+)\]")


#: Longest message an error keeps; a huge ``detail`` from a server is cut (the attribute is not).
MAX_MESSAGE_LENGTH = 1000


def _one_line(text: str) -> str:
    """``text`` as one readable line: a hostile or sloppy server cannot break logs or terminals."""
    line = _UNREADABLE.sub(" ", text).strip()
    if len(line) > MAX_MESSAGE_LENGTH:
        line = line[: MAX_MESSAGE_LENGTH - 30] + f"... ({len(line)} characters)"
    return line


def _key_indices(errors: Sequence[str]) -> list[int]:
    """Indices of ``keys`` elements named by ``"$.keys[<i>]: <message>"`` errors, sorted."""
    return sorted({int(m.group(1)) for e in errors if (m := _KEY_PATH.match(e))})


def _rebuild(cls: type[BaseException], args: tuple[Any, ...]) -> BaseException:
    """Unpickle an error without calling its ``__init__`` (whose signature varies)."""
    err = cls.__new__(cls)
    err.args = args
    return err


class CCAnalyticsError(Exception):
    """Base class of every error raised by ccanalytics."""

    def __reduce__(self) -> tuple[Any, ...]:
        # The default, ``cls(*args)``, fails for keyword-only fields (``status=``), so
        # an error raised in a worker process would arrive as BrokenProcessPool.
        return _rebuild, (type(self), self.args), self.__dict__


class _Located(Exception):
    """Where a request went, for errors that name it: ``str()`` starts ``"GET <url>: "``."""

    method: str | None
    path: str | None
    url: str | None
    host: str | None

    def __str__(self) -> str:
        text = str(self.args[0]) if self.args else ""
        target = self.url or self.path
        if self.method and target:
            text = f"{self.method} {target}: {text}"
        return _one_line(text)


class ApiError(_Located, CCAnalyticsError):
    """The API answered with an error status (or a body that breaks the spec)."""

    status: int
    title: str
    detail: str
    errors: list[str]
    headers: dict[str, str]

    def __init__(
        self,
        message: str | None = None,
        *,
        status: int,
        title: str = "",
        detail: str = "",
        errors: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        method: str | None = None,
        path: str | None = None,
        url: str | None = None,
        host: str | None = None,
    ) -> None:
        self.status = status
        self.title = title
        self.detail = detail
        self.errors = list(errors)
        keep_headers(self, headers or {})
        locate(self, method, path, url, host)
        super().__init__(_one_line(message or self._default_message()))

    def _default_message(self) -> str:
        text = f"{self.status} {self.title}".rstrip()
        if self.detail and self.detail != self.title:
            text += f": {self.detail}"
        if self.errors:
            shown = self.errors[:10]
            text += " (" + "; ".join(shown)
            if len(self.errors) > len(shown):
                text += f"; and {len(self.errors) - len(shown)} more"
            text += ")"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, title={self.title!r}, detail={self.detail!r})"


class AuthenticationError(ApiError):
    """401: the API key is missing, malformed, expired or invalid."""


class PermissionDeniedError(ApiError):
    """403: the API key is valid but does not grant access to this resource or action."""


class NotFoundError(ApiError):
    """404: the addressed resource does not exist."""


class UnprocessableEntityError(ApiError):
    """422: the request was well formed but failed the server's validation."""

    @property
    def failed_key_indices(self) -> list[int]:
        """Positions in the sent ``keys`` that the server rejected (from ``$.keys[<i>]`` errors)."""
        return _key_indices(self.errors)


class RateLimitError(ApiError):
    """429 from the server, or a window known to be exhausted for longer than the client may wait."""

    retry_after: float | None

    def __init__(self, message: str | None = None, *, retry_after: float | None = None, **kw: Any):
        self.retry_after = retry_after
        super().__init__(message, **kw)


class ServerError(ApiError):
    """5xx, or any status the client has no more specific class for."""


class MalformedResponseError(ApiError):
    """A successful status whose body is not valid JSON of the documented shape."""


class ResponseTooLargeError(ApiError):
    """The body is larger than the client's ``max_response_size``; the rest was not read."""


class ApiConnectionError(_Located, CCAnalyticsError):
    """The request did not get an HTTP response: DNS, refused or reset connection, TLS, ..."""

    def __init__(
        self,
        message: str,
        *,
        method: str | None = None,
        path: str | None = None,
        url: str | None = None,
        host: str | None = None,
    ) -> None:
        locate(self, method, path, url, host)
        super().__init__(_one_line(message))


class ApiTimeoutError(ApiConnectionError):
    """The request timed out (connect, read, write, a pooled connection, or the call's deadline)."""


class InvalidSshKeysError(CCAnalyticsError, ValueError):
    """Some keys would be rejected by the API; nothing was sent.

    ``errors`` lists every failure in the server's ``"<json path>: <message>"`` form,
    for example ``"$.keys[2]: does not match pattern ..."``.
    """

    errors: list[str]

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        head = f"{len(self.errors)} SSH key(s) would be rejected by the API; nothing was sent"
        super().__init__(head + ":\n  " + "\n  ".join(self.errors))

    @property
    def failed_key_indices(self) -> list[int]:
        """Positions in the given ``keys`` that would be rejected."""
        return _key_indices(self.errors)


class KeyNormalizationError(CCAnalyticsError, ValueError):
    """Some lines cannot become keys the API accepts; ``errors`` says which and why.

    Each error is ``"line <n>: <reason>"``; no reason quotes the line's text.
    """

    errors: list[str]

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        head = f"{len(self.errors)} line(s) cannot be turned into keys the API accepts"
        super().__init__(head + ":\n  " + "\n  ".join(self.errors))


class ConfigurationError(CCAnalyticsError, ValueError):
    """The client cannot be configured: no API key or base URL, or an unusable one."""


class GpuTypesError(CCAnalyticsError, ValueError):
    """A table of GPU types (right-sizing's memory per type) cannot be read or is malformed."""


class InsecureTransportWarning(UserWarning):
    """The bearer API key would travel in clear text (``http://`` to a host not on this machine)."""


class ClockSkewWarning(UserWarning):
    """The service's ``Date`` is far from the local clock, so the local clock timed the rows.

    A client warns once (its copies share it), ``collect`` once per run;
    ``trust_service_clock=True`` on either keeps the service's time (a simulated-clock
    sandbox's ``Date`` is its simulated time: ``Sandbox.client()`` trusts it).
    """


class FleetLoadError(CCAnalyticsError):
    """Some clusters of a fleet load failed; ``frame`` holds the clusters that loaded.

    ``errors`` maps each failed cluster id to its exception (an :class:`ApiError`
    or :class:`ApiConnectionError`), in the order the clusters were asked for.
    ``asked`` is how many clusters were asked for (the headline's "of N"; a cluster
    that loaded with no pods has no row in ``frame`` but was asked all the same).
    """

    def __init__(
        self, errors: Mapping[str, CCAnalyticsError], frame: Any, *, asked: int | None = None
    ) -> None:
        self.errors = dict(errors)
        self.frame = frame
        if asked is None:  # callers from before ``asked``: the clusters with rows
            asked = len(self.errors) + (frame["cluster_id"].nunique() if len(frame) else 0)
        self.asked = asked
        super().__init__(
            f"{self._headline()} (the others are in .frame):\n  " + "\n  ".join(self._lines())
        )

    def _headline(self) -> str:
        return f"{len(self.errors)} of {self.asked} clusters failed to load"

    def _lines(self) -> list[str]:
        return [f"{cid}: {err}" for cid, err in self.errors.items()]

    def describe(self) -> str:
        """The message without its pointer to ``.frame``: for people who are not in Python."""
        return f"{self._headline()}: " + "; ".join(self._lines())


class ScheduleError(CCAnalyticsError, ValueError):
    """A collector schedule that would use more of a rate-limit window than it may.

    Raised before anything is written; the message names the window and the shortest
    interval that fits (``ccanalytics collect --every``: exit 2).
    """


class StoreError(CCAnalyticsError):
    """The history store cannot be read or written: a corrupt or vanished file, a bad marker.

    ``path`` is the file at fault when one is known (the message names it too).
    """

    def __init__(self, message: str, path: Any = None) -> None:
        super().__init__(message)
        self.path = path


class EngineError(CCAnalyticsError):
    """A History's engine (Spark) cannot answer ``question`` (a History method): one it
    does not run, or a session that failed or stopped. One line, never the JVM's stack."""

    def __init__(self, message: str, *, engine: str = "spark", question: str | None = None) -> None:
        super().__init__(message)
        self.engine = engine
        self.question = question


class _InOurTomlFile(CCAnalyticsError, ValueError):
    """An error in one of our TOML files (a policy, a team mapping): ``path``, ``line``
    and ``key`` say where (each ``None`` when unknown); the message is one line naming
    them."""

    def __init__(
        self, message: str, *, path: Any = None, line: int | None = None, key: str | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.key = key


class PolicyError(_InOurTomlFile):
    """A ``check`` policy file that cannot be used: bad TOML, an unknown key, a bad value.

    ``path``, ``line`` and ``key`` say where (each ``None`` when unknown); the message is
    one line naming them. Raised before anything is judged; never quotes a webhook URL.
    """


class TeamsError(_InOurTomlFile):
    """A team mapping (``export showback --teams``) that cannot be used: bad TOML, an
    unknown key, a pattern that is not a string.

    ``path``, ``line`` and ``key`` say where (each ``None`` when unknown); the message is
    one line naming them. Raised before anything is read from the store.
    """


class KeyFileError(CCAnalyticsError, OSError):
    """A key file given by path that cannot be read: missing, a directory, a pipe or device.

    Only regular files are read from a path (a named pipe with no writer would block
    forever); pass an open file object to read a stream such as standard input.
    """


class NoDataError(CCAnalyticsError, ValueError):
    """A plot has nothing to draw (no rows, no GPU metrics, no cost); also a ``ValueError``."""


class ReportLoadError(CCAnalyticsError):
    """No cluster could be loaded, so no report was written; ``errors``: id -> why.

    ``why`` is the cluster's exception where the load kept one, else its text.
    """

    def __init__(self, errors: Mapping[str, object]) -> None:
        self.errors = dict(errors)
        reasons = "; ".join(f"{cid}: {why}" for cid, why in self.errors.items())
        super().__init__(f"no cluster could be loaded, so no report was written ({reasons})")


class CheckOutputError(CCAnalyticsError, OSError):
    """``check``'s textfile cannot be written where it was asked to go; ``path`` names it."""

    def __init__(self, message: str, path: Any = None) -> None:
        super().__init__(message)
        self.path = path


class ReportOutputError(CCAnalyticsError, OSError):
    """The report or its CSV files cannot be written where they were asked to go."""


class ArgumentsError(CCAnalyticsError, ValueError):
    """Arguments that are each valid but do not go together (``window`` without ``store``).

    One rule, checked once, by the library function; its message is a ``template`` with
    a ``{name}`` per parameter it names (``names``, in order). ``str(err)`` spells them
    as Python keywords (``window=``, or the ``python`` spelling given for a name); a
    front end spells them its own way with :meth:`spelled` (the CLI: ``--window``).
    """

    def __init__(self, template: str, *names: str, python: Mapping[str, str] | None = None) -> None:
        self.template = template
        self.names = names
        self.python = dict(python or {})
        super().__init__(self.spelled(lambda name: self.python.get(name, f"{name}=")))

    def spelled(self, spell: Any) -> str:
        """The message with each parameter named by ``spell(name)``."""
        return self.template.format_map({name: spell(name) for name in self.names})


class ExportOutputError(CCAnalyticsError, OSError):
    """An export's output cannot be written: it exists (and ``force`` was not given), or its
    folder is missing or not writable. ``path`` names it."""

    def __init__(self, message: str, path: Any = None) -> None:
        super().__init__(message)
        self.path = path


def locate(
    err: _Located,
    method: str | None,
    path: str | None,
    url: str | None = None,
    host: str | None = None,
) -> None:
    """Say where the request that failed went (the client knows it only once it failed)."""
    err.method, err.path, err.url, err.host = method, path, url, host


def keep_headers(err: ApiError, headers: Mapping[str, str]) -> None:
    """Keep the response headers that help support (request id, rate limits), no others."""
    err.headers = {k.lower(): v for k, v in headers.items() if k.lower() in _SAFE_HEADERS}

"""No frame of a traceback the package raises holds the API key, whatever the key looks like.

Error reporters (Sentry's default, ``TracebackException(capture_locals=True)``) send every
frame's locals off the machine. A key the client refuses at construction (a NUL, a
no-break space, a byte-order mark, a Latin-1 letter) used to stay in the constructor's
locals, ``api_key='sk-live-...'``; so did a good key when the base URL was refused.
"""

from __future__ import annotations

import asyncio
import traceback
from pathlib import Path
from typing import Any

import pytest

import ccanalytics
from ccanalytics import AsyncClient, Client, ConfigurationError

PACKAGE = str(Path(ccanalytics.__file__).parent)
SECRET = "sk-live-4f9a8b7c6d5e4f3a2b1c"
BAD_KEYS = {
    "a NUL": SECRET + "\x00",
    "a no-break space": SECRET[:8] + "\u00a0" + SECRET[8:],
    "a byte-order mark": "\ufeff" + SECRET,
    "a Latin-1 letter": SECRET + "é",
}


def _everything_shown(err: BaseException) -> str:
    """The library's frames with their locals as an error reporter shows them, for the chain.

    Only frames of the ``ccanalytics`` package count: the test's own frames (which
    caught the error, and whose locals hold what the test passed) are not the library's.
    """
    texts = []
    current: BaseException | None = err
    while current is not None:
        report = traceback.TracebackException(
            type(current), current, current.__traceback__, capture_locals=True
        )
        for frame in report.stack:
            if PACKAGE in frame.filename:
                texts.append(f"{frame.filename}:{frame.lineno} {frame.name} {frame.locals}")
        texts += ["".join(report.format_exception_only()), repr(vars(current))]
        current = current.__cause__ or current.__context__
    return "\n".join(texts)


def _construct(kind: str, **kw: Any) -> BaseException:
    try:
        if kind == "sync":
            Client(**kw).close()
        else:

            async def make() -> None:
                async with AsyncClient(**kw):
                    pass

            asyncio.run(make())
    except Exception as err:
        return err
    raise AssertionError("the client was made")


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("what", list(BAD_KEYS))
@pytest.mark.parametrize("route", ["argument", "environment"])
def test_a_refused_key_is_in_no_frame_of_the_traceback(
    kind: str, what: str, route: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = BAD_KEYS[what]
    if route == "environment" and "\x00" in key:
        pytest.skip("an environment variable cannot hold a NUL")
    if route == "argument":
        err = _construct(kind, api_key=key, base_url="https://api.example.com")
    else:
        monkeypatch.setenv("CCANALYTICS_API_KEY", key)
        err = _construct(kind, base_url="https://api.example.com")
    del key  # this test's own frame is not the library's
    assert isinstance(err, ConfigurationError)
    shown = _everything_shown(err)
    assert "api_key" not in shown or "'api_key': '" not in shown  # masked or gone
    assert SECRET[8:20] not in shown


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize(
    "options",
    [{"base_url": "ftp://nope"}, {"base_url": "https://api.example.com", "max_retries": -1}],
)
def test_a_good_key_is_in_no_frame_when_another_option_is_refused(
    kind: str, options: dict[str, Any]
) -> None:
    err = _construct(kind, api_key=SECRET, **options)
    assert isinstance(err, ValueError)
    assert SECRET[8:20] not in _everything_shown(err)

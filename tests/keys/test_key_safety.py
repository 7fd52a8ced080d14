"""No accidental destruction: ``update_ssh_keys`` replaces every key, so it must never
send an invalid key, never send ``[]`` by accident, and after a 422 say exactly which
keys the server rejected.
"""

from __future__ import annotations

import asyncio
import collections
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from ccanalytics import (
    Client,
    InvalidSshKeysError,
    UnprocessableEntityError,
)
from ccanalytics.errors import _key_indices
from ccanalytics.keys.api_rule import matches_api_pattern
from ccanalytics.sandbox import (
    EXEMPT_KEY,
    FULL_ACCESS_KEY,
    IN_PROCESS_URL,
    Sandbox,
    SandboxApp,
    SandboxTransport,
)
from ccanalytics.sandbox._data import INITIAL_SSH_KEYS

SSH_KEYS = "/v2/account/ssh-keys"
ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINajBoYvNIvnWWRi5fvEHCRN+YGrlS3KI3xqQ4uhGGlr a@b"
KEYS = settings(
    # The Hypothesis profile's number (tests/conftest.py), unless told otherwise.
    max_examples=int(os.environ.get("CCANALYTICS_FUZZ_EXAMPLES", settings.default.max_examples)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

MakeSandbox = Callable[..., Sandbox]

# -- strategies: keys the API takes, and the ways a pasted key goes wrong ---------------

_comment_chars = st.characters(codec="utf-8", exclude_characters="\r\n")
_token = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=20)
valid_keys = st.builds(
    lambda kind, algo, material, comment: f"{kind}-{algo} {material}{comment}",
    st.sampled_from(["ssh", "ecdsa", "sk"]),
    _token,
    _token,
    st.one_of(
        st.just(""),
        st.text(_comment_chars, max_size=20).map(lambda c: " " + c),
        st.text(_comment_chars, max_size=20).map(lambda c: "\t" + c),
    ),
)
_breakages: list[Callable[[str], str]] = [
    lambda k: k + "\n",  # a pasted line with its line feed
    lambda k: k + "\r",  # CRLF leftovers
    lambda k: " " + k,  # indentation
    lambda k: k.replace(" ", "\t", 1),  # tab between type and key material
    lambda k: k.replace(" ", "\ufeff ", 1),  # a BOM (ECMA \s) glued to the type
    lambda k: k.split("-", 1)[1],  # the "ssh-" prefix lost
    lambda k: k.split(" ", 1)[0],  # the key material lost
    lambda k: "",
    lambda k: k + " caf\udce9",  # a Latin-1 comment read with errors="surrogateescape"
]
broken_keys = st.builds(
    lambda k, i: _breakages[i](k), valid_keys, st.integers(0, len(_breakages) - 1)
)


def sendable(key: object) -> bool:
    """The API's rule, and text a UTF-8 JSON body can carry."""
    if not matches_api_pattern(key):
        return False
    try:
        key.encode("utf-8")  # type: ignore[union-attr]
    except UnicodeEncodeError:
        return False
    return True


any_elements = st.one_of(valid_keys, broken_keys, st.text(max_size=40), st.integers(), st.none())


@pytest.fixture(scope="module")
def app() -> SandboxApp:
    return SandboxApp()


@pytest.fixture(scope="module")
def local_client(app: SandboxApp) -> Any:
    # Exempt from rate limits: deep hypothesis runs send thousands of PUTs.
    with Client(EXEMPT_KEY, IN_PROCESS_URL, transport=SandboxTransport(app)) as c:
        yield c


# -- never an invalid key -----------------------------------------------------------------


@KEYS
@given(keys=st.lists(any_elements, min_size=1, max_size=6))
def test_a_list_with_any_invalid_key_is_refused_and_nothing_is_sent(
    app: SandboxApp, local_client: Client, keys: list[Any]
) -> None:
    bad = [i for i, k in enumerate(keys) if not sendable(k)]
    assume(bad)
    before = app.count("PUT", SSH_KEYS)
    with pytest.raises(InvalidSshKeysError) as info:
        local_client.update_ssh_keys(keys)
    assert app.count("PUT", SSH_KEYS) == before
    assert info.value.failed_key_indices == bad
    assert len(info.value.errors) == len(bad)


@KEYS
@given(keys=st.lists(valid_keys, min_size=1, max_size=4))
def test_keys_the_client_accepts_the_server_accepts(
    app: SandboxApp, local_client: Client, keys: list[str]
) -> None:
    before = app.count("PUT", SSH_KEYS)
    assert local_client.update_ssh_keys(keys).keys == keys
    assert app.count("PUT", SSH_KEYS) == before + 1
    assert app.data.ssh_keys == keys


def test_the_async_client_refuses_invalid_keys_without_sending(app: SandboxApp) -> None:
    async def main() -> InvalidSshKeysError:
        from ccanalytics import AsyncClient

        transport = SandboxTransport(app)
        async with AsyncClient(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=transport) as c:
            with pytest.raises(InvalidSshKeysError) as info:
                await c.update_ssh_keys([ED25519, ED25519 + "\n", "rsa AAAA"])
            return info.value

    before = app.count("PUT", SSH_KEYS)
    err = asyncio.run(main())
    assert err.failed_key_indices == [1, 2]
    assert app.count("PUT", SSH_KEYS) == before


def test_a_key_with_a_lone_surrogate_is_refused_before_sending(local_client: Client) -> None:
    # It matches the pattern, but no UTF-8 body can carry it (httpx would raise mid-request).
    keys = [ED25519 + " caf\udce9", "bad", ED25519]
    with pytest.raises(InvalidSshKeysError) as info:
        local_client.update_ssh_keys(keys)
    assert info.value.failed_key_indices == [0, 1]
    assert "lone surrogate" in info.value.errors[0]


def test_a_pasted_secret_is_not_echoed_by_the_local_check(local_client: Client) -> None:
    with pytest.raises(InvalidSshKeysError) as info:
        local_client.update_ssh_keys([ED25519, "sbx-secret-pasted-by-mistake"])
    assert "sbx-secret-" not in str(info.value) + repr(info.value)
    assert info.value.failed_key_indices == [1]


# -- never [] by accident --------------------------------------------------------------------


@pytest.mark.parametrize(
    "empty",
    [
        pd.Series([], dtype="string"),  # a filtered audit column: frame[frame.api_valid].text
        np.array([], dtype=str),
        collections.deque(),
        {}.keys(),
        range(0),
        frozenset(),
    ],
    ids=["series", "ndarray", "deque", "dict_keys", "range", "frozenset"],
)
def test_an_empty_non_list_never_removes_every_key(make_sandbox: MakeSandbox, empty: Any) -> None:
    sb = make_sandbox()
    with sb.client() as c, pytest.raises((ValueError, TypeError)):
        c.update_ssh_keys(empty)
    assert sb.app.count("PUT", SSH_KEYS) == 0
    assert sb.app.data.ssh_keys == INITIAL_SSH_KEYS


def test_a_non_empty_series_of_valid_keys_is_sent(make_sandbox: MakeSandbox) -> None:
    sb = make_sandbox()
    with sb.client() as c:
        assert c.update_ssh_keys(pd.Series([ED25519])).keys == [ED25519]  # type: ignore[arg-type]
    assert sb.app.count("PUT", SSH_KEYS) == 1


def test_only_an_explicit_empty_list_removes_every_key(make_sandbox: MakeSandbox) -> None:
    sb = make_sandbox()
    with sb.client() as c:
        assert c.update_ssh_keys([]).keys == []
    assert sb.app.count("PUT", SSH_KEYS) == 1
    assert sb.app.data.ssh_keys == []


# -- a 422 says which keys failed ------------------------------------------------------------


@pytest.fixture
def strict_server(monkeypatch: pytest.MonkeyPatch, make_sandbox: MakeSandbox) -> Sandbox:
    """A server stricter than the published rule: it also rejects keys mentioning "forbidden"."""
    import ccanalytics.sandbox._app as app_module

    published = app_module.matches_api_pattern
    monkeypatch.setattr(
        app_module, "matches_api_pattern", lambda k: published(k) and "forbidden" not in k
    )
    return make_sandbox()


def test_a_422_names_exactly_the_keys_the_server_rejected(
    strict_server: Sandbox, fast_retries
) -> None:
    keys = [ED25519, ED25519 + " forbidden-1", ED25519, "ssh-rsa AAAAB3 forbidden-2"]
    with strict_server.client(max_retries=3) as c, pytest.raises(UnprocessableEntityError) as info:
        c.update_ssh_keys(keys)
    err = info.value
    assert err.failed_key_indices == [1, 3]
    assert [e.split(":")[0] for e in err.errors] == ["$.keys[1]", "$.keys[3]"]
    assert "$.keys[1]" in str(err) and "$.keys[3]" in str(err)
    # Not retried, and nothing changed on the account.
    assert strict_server.app.count("PUT", SSH_KEYS) == 1
    assert strict_server.app.data.ssh_keys == INITIAL_SSH_KEYS


def test_the_async_client_422_names_the_rejected_keys(strict_server: Sandbox) -> None:
    async def main() -> UnprocessableEntityError:
        async with strict_server.async_client() as c:
            with pytest.raises(UnprocessableEntityError) as info:
                await c.update_ssh_keys(["ssh-ed25519 AAAA forbidden", ED25519])
            return info.value

    assert asyncio.run(main()).failed_key_indices == [0]
    assert strict_server.app.data.ssh_keys == INITIAL_SSH_KEYS


def test_a_422_without_errors_names_no_key(make_sandbox: MakeSandbox) -> None:
    sb = make_sandbox()
    sb.app.add_fault("status", status=422, path=SSH_KEYS)
    with sb.client() as c, pytest.raises(UnprocessableEntityError) as info:
        c.update_ssh_keys([ED25519])
    assert info.value.failed_key_indices == []
    assert sb.app.data.ssh_keys == INITIAL_SSH_KEYS


@pytest.mark.parametrize(
    ("errors", "indices"),
    [
        ([], []),
        (["$.keys[2]: does not match pattern"], [2]),
        (["$.keys[10]: x", "$.keys[2]: y", "$.keys[10]: z"], [2, 10]),  # sorted, unique
        (["$.extra: additional property is not allowed", "$.keys: must be an array"], []),
        (["$['keys'][4]: bracket form", '$["keys"][5]: too'], [4, 5]),
        (["keys[1]: no root", "$.keys[-1]: negative", "$.keys[x]: nan", "  $.keys[3]: x"], []),
        (["$.keys[7].comment: deeper path still names key 7"], [7]),
    ],
)
def test_failed_key_indices_reads_the_servers_json_paths(
    errors: list[str], indices: list[int]
) -> None:
    assert _key_indices(errors) == indices
    assert UnprocessableEntityError(status=422, errors=errors).failed_key_indices == indices

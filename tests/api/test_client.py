"""The typed client against the sandbox over real loopback HTTP: operations, errors, config."""

from __future__ import annotations

import asyncio
import logging
import socket
import time

import httpx
import pytest

import ccanalytics
from ccanalytics import (
    ApiConnectionError,
    ApiTimeoutError,
    AsyncClient,
    AuthenticationError,
    Client,
    ConfigurationError,
    InvalidSshKeysError,
    MalformedResponseError,
    NotFoundError,
    PermissionDeniedError,
    Pod,
    Registry,
    ServerError,
    UnprocessableEntityError,
)
from ccanalytics.sandbox import (
    EXEMPT_KEY,
    FULL_ACCESS_KEY,
    IN_PROCESS_URL,
    NO_ACCESS_KEY,
    SECRET_PREFIX,
    Sandbox,
    SandboxApp,
    SandboxTransport,
)

ED25519 = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINajBoYvNIvnWWRi5fvEHCRN+YGrlS3KI3xqQ4uhGGlr alice@laptop"
)
PODS = "/v2/clusters/cl-llama70b-train/pods"


# -- operations -------------------------------------------------------------------


def test_list_cluster_pods_returns_typed_pods(client: Client) -> None:
    pods = client.list_cluster_pods("cl-llama70b-train")
    assert len(pods) == 32
    assert all(isinstance(p, Pod) for p in pods)
    pod = pods[13]
    assert pod.cluster is not None and pod.cluster.rank == 13
    assert pod.gpu is not None and pod.gpu.count == 8
    assert pod.runtime is not None and pod.runtime.gpus is not None and len(pod.runtime.gpus) == 8
    assert pod.created_at is not None and pod.created_at.tzinfo is not None


def test_unknown_response_fields_are_kept(client: Client, sandbox: Sandbox) -> None:
    raw = sandbox.app.data.clusters["cl-bringup"][3]
    raw["interruptible"] = {"since": "2026-01-01"}  # a field a later service may add
    pod = client.list_cluster_pods("cl-bringup")[3]
    declared = {f.alias or name for name, f in Pod.model_fields.items()}
    extra = {k: v for k, v in raw.items() if k not in declared}
    assert pod.model_extra == extra == {"interruptible": {"since": "2026-01-01"}}
    assert pod.runtime is None and pod.cluster is not None and pod.cluster.rank is None


def test_get_registry_has_no_credentials(client: Client, sandbox: object) -> None:
    reg = client.get_registry("reg-ngc")
    assert isinstance(reg, Registry)
    assert (reg.id, reg.name) == ("reg-ngc", "NVIDIA NGC")
    dumped = reg.model_dump()
    assert "username" not in dumped and "password" not in dumped


def test_registry_drops_credentials_a_response_wrongly_carries(sandbox, client: Client) -> None:
    sandbox.app.add_fault("leak_credentials", path="/v2/registries/")
    reg = client.get_registry("reg-ghcr")
    text = repr(reg) + str(reg) + reg.model_dump_json() + str(reg.model_extra)
    assert SECRET_PREFIX not in text
    assert reg.name == "GitHub Container Registry"


def test_update_ssh_keys_replaces_the_set(client: Client, sandbox) -> None:
    result = client.update_ssh_keys([ED25519, "ssh-rsa AAAAB3Nza x\tcomment with tab"])
    assert result.keys == [ED25519, "ssh-rsa AAAAB3Nza x\tcomment with tab"]
    assert sandbox.app.data.ssh_keys == result.keys


def test_update_ssh_keys_rejects_invalid_keys_locally_and_sends_nothing(client, sandbox) -> None:
    keys = [ED25519, ED25519 + "\n", "rsa AAAA", " ssh-ed25519 AAAA"]
    with pytest.raises(InvalidSshKeysError) as info:
        client.update_ssh_keys(keys)
    assert [e.split(":")[0] for e in info.value.errors] == ["$.keys[1]", "$.keys[2]", "$.keys[3]"]
    assert sandbox.app.count("PUT", "/v2/account/ssh-keys") == 0


def test_local_key_errors_have_the_servers_form(client: Client) -> None:
    from ccanalytics.sandbox import validate_update_ssh_keys

    keys = [ED25519, "nope", ED25519 + "\r"]
    with pytest.raises(InvalidSshKeysError) as info:
        client.update_ssh_keys(keys)
    assert info.value.errors == validate_update_ssh_keys({"keys": keys})


@pytest.mark.parametrize("empty", [(), iter([]), set(), (k for k in [])])
def test_update_ssh_keys_refuses_an_implicit_empty_set(client, sandbox, empty) -> None:
    with pytest.raises(ValueError, match="pass \\[\\] explicitly"):
        client.update_ssh_keys(empty)
    assert sandbox.app.count("PUT", "/v2/account/ssh-keys") == 0


def test_update_ssh_keys_accepts_an_explicit_empty_list(client: Client, sandbox) -> None:
    assert client.update_ssh_keys([]).keys == []
    assert sandbox.app.data.ssh_keys == []


@pytest.mark.parametrize("bad", [ED25519, None, {"keys": [ED25519]}, b"ssh-ed25519 AAAA x"])
def test_update_ssh_keys_wants_a_list_of_lines(client: Client, bad: object) -> None:
    with pytest.raises(TypeError):
        client.update_ssh_keys(bad)  # type: ignore[arg-type]


def test_path_ids_are_url_encoded_as_one_segment(client: Client, sandbox) -> None:
    with pytest.raises(NotFoundError):
        client.list_cluster_pods("a/b c")
    assert sandbox.app.count("GET", "/v2/clusters/a%2Fb%20c/pods") == 1


@pytest.mark.parametrize("method", ["list_cluster_pods", "get_registry"])
def test_empty_id_is_a_value_error_before_any_request(client, sandbox, method) -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        getattr(client, method)("")
    assert sum(sandbox.app.stats.values()) == 0


# -- errors -----------------------------------------------------------------------


def test_wrong_key_is_authentication_error(sandbox) -> None:
    with Client("not-a-key", sandbox.url) as c, pytest.raises(AuthenticationError) as info:
        c.list_cluster_pods("cl-etl-cpu")
    assert info.value.status == 401 and info.value.title == "Unauthorized"
    assert "not-a-key" not in str(info.value) + repr(info.value)


def test_key_without_access_is_permission_denied(sandbox) -> None:
    with sandbox.client(NO_ACCESS_KEY) as c, pytest.raises(PermissionDeniedError) as info:
        c.get_registry("reg-ngc")
    assert (info.value.status, info.value.detail) == (403, "access denied")


def test_missing_resource_is_not_found(client: Client, sandbox) -> None:
    with pytest.raises(NotFoundError) as info:
        client.get_registry("reg-missing")
    assert info.value.status == 404
    url = f"{sandbox.url}/v2/registries/reg-missing"
    assert str(info.value) == f"GET {url}: 404 Not Found: resource not found"


def test_server_validation_failure_is_unprocessable_entity(sandbox) -> None:
    # Bypass local validation to see the server's own 422 mapped by the client.
    sandbox.app.add_fault("status", status=422, path="/v2/account/ssh-keys")
    with sandbox.client() as c, pytest.raises(UnprocessableEntityError) as info:
        c.update_ssh_keys([ED25519])
    assert info.value.status == 422


def test_sandbox_422_lists_every_failure_in_json_path_form(sandbox) -> None:
    r = httpx.put(
        sandbox.url + "/v2/account/ssh-keys",
        json={"keys": [ED25519, "bad", 3], "extra": 1},
        headers={"Authorization": f"Bearer {FULL_ACCESS_KEY}"},
    )
    assert r.status_code == 422
    assert r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert body["title"] == "Unprocessable Entity" and body["status"] == 422
    assert body["errors"][0] == "$.extra: additional property is not allowed"
    assert body["errors"][1].startswith("$.keys[1]: does not match pattern")
    assert body["errors"][2] == "$.keys[2]: must be a string, not integer"


@pytest.mark.parametrize("status", [500, 502, 503, 504, 599, 418])
def test_other_statuses_are_server_errors(make_sandbox, fast_retries, status) -> None:
    sb = make_sandbox()
    sb.app.add_fault("status", status=status, times=None)
    with sb.client(max_retries=1) as c, pytest.raises(ServerError) as info:
        c.list_cluster_pods("cl-etl-cpu")
    assert info.value.status == status
    expected_attempts = 2 if status >= 500 else 1
    assert sb.app.count("GET", "/v2/clusters/cl-etl-cpu/pods") == expected_attempts


def test_html_body_from_a_proxy_gives_a_readable_server_error(make_sandbox, fast_retries) -> None:
    sb = make_sandbox()
    sb.app.add_fault("html", status=502, times=None)
    with sb.client(max_retries=0) as c, pytest.raises(ServerError) as info:
        c.list_cluster_pods("cl-etl-cpu")
    message = str(info.value)
    assert "502" in message and "Bad Gateway" in message and "nginx" in message
    assert "<" not in message


def test_empty_error_body_still_gives_the_right_class(make_sandbox) -> None:
    sb = make_sandbox()
    sb.app.add_fault("empty", status=403)
    with sb.client() as c, pytest.raises(PermissionDeniedError) as info:
        c.list_cluster_pods("cl-etl-cpu")
    assert info.value.detail == "empty response body"


@pytest.mark.parametrize("kind", ["invalid_json", "wrong_content_type", "wrong_shape"])
def test_malformed_success_body_is_a_typed_error(make_sandbox, kind) -> None:
    sb = make_sandbox()
    sb.app.add_fault(kind, times=None)
    with sb.client() as c:
        if kind == "wrong_content_type":  # valid JSON under a wrong label is still read
            assert len(c.list_cluster_pods("cl-etl-cpu")) == 5
            return
        with pytest.raises(MalformedResponseError) as info:
            c.list_cluster_pods("cl-etl-cpu")
    assert info.value.status == 200


def test_connection_refused_is_api_connection_error(fast_retries) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = Client(FULL_ACCESS_KEY, f"http://127.0.0.1:{port}", max_retries=1)
    with client, pytest.raises(ApiConnectionError) as info:
        client.list_cluster_pods("cl-etl-cpu")
    assert not isinstance(info.value, ApiTimeoutError)
    assert "connection failed (ConnectError" in str(info.value)


def test_slow_response_past_the_timeout_is_api_timeout_error(make_sandbox, fast_retries) -> None:
    sb = make_sandbox()
    sb.app.add_fault("slow", seconds=1.0, times=None)
    with sb.client(timeout=0.2, max_retries=1) as c, pytest.raises(ApiTimeoutError) as info:
        c.list_cluster_pods("cl-etl-cpu")
    assert "timed out" in str(info.value)
    assert sb.app.count("GET", "/v2/clusters/cl-etl-cpu/pods") == 2


def test_closed_client_raises_a_library_error_at_once(sandbox) -> None:
    """Closed is final: no retry can succeed, so none is waited for (it took the three
    retries' backoff, ~3 s, before)."""
    c = sandbox.client()
    c.close()
    started = time.monotonic()
    with pytest.raises(ApiConnectionError, match="closed"):
        c.list_cluster_pods("cl-etl-cpu")
    assert time.monotonic() - started < 0.5


def test_closed_async_client_raises_a_library_error_at_once(sandbox) -> None:
    async def main() -> float:
        c = AsyncClient(FULL_ACCESS_KEY, sandbox.url)
        await c.aclose()
        started = time.monotonic()
        with pytest.raises(ApiConnectionError, match="closed"):
            await c.list_cluster_pods("cl-etl-cpu")
        return time.monotonic() - started

    assert asyncio.run(main()) < 0.5


# -- configuration ----------------------------------------------------------------


def test_client_reads_the_environment(sandbox, monkeypatch) -> None:
    monkeypatch.setenv("CCANALYTICS_API_KEY", FULL_ACCESS_KEY)
    monkeypatch.setenv("CCANALYTICS_BASE_URL", sandbox.url)
    with Client() as c:
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5


def test_arguments_win_over_the_environment(sandbox, monkeypatch) -> None:
    monkeypatch.setenv("CCANALYTICS_API_KEY", "wrong-key")
    monkeypatch.setenv("CCANALYTICS_BASE_URL", "http://127.0.0.1:9")
    with Client(FULL_ACCESS_KEY, sandbox.url) as c:
        assert len(c.list_cluster_pods("cl-etl-cpu")) == 5


@pytest.mark.parametrize("missing", ["CCANALYTICS_API_KEY", "CCANALYTICS_BASE_URL"])
def test_missing_configuration_is_a_clear_error(monkeypatch, missing) -> None:
    monkeypatch.setenv("CCANALYTICS_API_KEY", "k")
    monkeypatch.setenv("CCANALYTICS_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.delenv(missing)
    with pytest.raises(ConfigurationError, match=missing):
        Client()


@pytest.mark.parametrize("url", ["ftp://example", "not a url", "http://"])
def test_unusable_base_url_is_a_configuration_error(url) -> None:
    with pytest.raises(ConfigurationError):
        Client("k", url)


def test_in_process_transport_gives_the_same_answers(sandbox) -> None:
    local = Client(FULL_ACCESS_KEY, IN_PROCESS_URL, transport=SandboxTransport())
    with local, sandbox.client() as remote:
        assert local.list_cluster_pods("cl-infer-prod") == remote.list_cluster_pods("cl-infer-prod")


# -- secrets ----------------------------------------------------------------------

SECRET_KEY = "sk-live-7d1f0c2e9b8a4f63a5d2"


@pytest.fixture
def secret_sandbox(make_sandbox):
    return make_sandbox(api_keys={SECRET_KEY: "full"})


def test_api_key_never_in_repr_errors_or_logs(secret_sandbox, caplog, fast_retries) -> None:
    caplog.set_level(logging.DEBUG)
    secret_sandbox.app.add_fault("html", status=502, times=1)
    seen = []
    with Client(SECRET_KEY, secret_sandbox.url, max_retries=2) as c:
        seen.append(repr(c))
        seen.append(str(c.__dict__.get("base_url")))
        c.list_cluster_pods("cl-etl-cpu")  # one retry after the 502, logged
        for call in (lambda: c.get_registry("nope"), lambda: c.update_ssh_keys(["x"])):
            with pytest.raises(ccanalytics.CCAnalyticsError) as info:
                call()
            seen += [str(info.value), repr(info.value), str(info.value.__dict__)]
    seen += [r.getMessage() for r in caplog.records]
    assert any("retrying" in r for r in seen)
    assert all(SECRET_KEY not in text for text in seen)


def test_key_echoed_by_a_hostile_server_is_scrubbed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        echo = request.headers["authorization"]
        return httpx.Response(
            500, json={"title": "Oops", "status": 500, "detail": f"bad header {echo}"}
        )

    with (
        Client(
            SECRET_KEY, "http://x.invalid", max_retries=0, transport=httpx.MockTransport(handler)
        ) as c,
        pytest.raises(ServerError) as info,
    ):
        c.list_cluster_pods("c")
    assert SECRET_KEY not in str(info.value) and "***" in str(info.value)


def test_pod_env_values_never_in_repr_or_json(client: Client) -> None:
    pod = client.list_cluster_pods("cl-llama70b-train")[0]
    assert pod.env is not None and set(pod.env) == {"WANDB_API_KEY", "HF_TOKEN", "NCCL_DEBUG"}
    for text in (repr(pod), str(pod), pod.model_dump_json(), str(pod.model_dump())):
        assert SECRET_PREFIX not in text
    assert pod.env["HF_TOKEN"].get_secret_value().startswith(SECRET_PREFIX)


# -- async parity -----------------------------------------------------------------


def test_async_client_has_the_same_operations(sandbox) -> None:
    async def main() -> tuple:
        async with sandbox.async_client() as c:
            pods = await c.list_cluster_pods("cl-etl-cpu")
            reg = await c.get_registry("reg-ngc")
            keys = await c.update_ssh_keys([ED25519])
            with pytest.raises(NotFoundError):
                await c.list_cluster_pods("nope")
            with pytest.raises(InvalidSshKeysError):
                await c.update_ssh_keys(["bad"])
            with pytest.raises(ValueError, match="explicitly"):
                await c.update_ssh_keys(())
            return pods, reg, keys, c.rate_limit

    pods, reg, keys, rate_limit = asyncio.run(main())
    with sandbox.client() as sync:
        assert pods == sync.list_cluster_pods("cl-etl-cpu")
        assert reg == sync.get_registry("reg-ngc")
    assert keys.keys == [ED25519]
    assert rate_limit is not None and rate_limit["minute"].quota == 600


def test_async_client_retries_and_times_out(make_sandbox, fast_retries) -> None:
    sb = make_sandbox()
    sb.app.add_fault("status", status=503, times=2)
    sb.app.add_fault("slow", seconds=1.0, times=None, path="/v2/registries/")

    async def main() -> None:
        async with sb.async_client(timeout=0.2, max_retries=2) as c:
            assert len(await c.list_cluster_pods("cl-etl-cpu")) == 5
            with pytest.raises(ApiTimeoutError):
                await c.get_registry("reg-ngc")

    asyncio.run(main())
    assert sb.app.count("GET", "/v2/clusters/cl-etl-cpu/pods") == 3


def test_exempt_caller_has_no_rate_limit(sandbox) -> None:
    with sandbox.client(EXEMPT_KEY) as c:
        c.list_cluster_pods("cl-etl-cpu")
        assert c.rate_limit is None


def test_in_process_sandbox_serves_async_too() -> None:
    app = SandboxApp()

    async def main() -> int:
        async with AsyncClient(
            FULL_ACCESS_KEY, IN_PROCESS_URL, transport=SandboxTransport(app)
        ) as c:
            return len(await c.list_cluster_pods("cl-infer-prod"))

    assert asyncio.run(main()) == 12
    assert app.count("GET", "/v2/clusters/cl-infer-prod/pods") == 1


def test_huge_error_detail_is_cut_in_the_message_but_kept_whole() -> None:
    detail = "x" * 50_000

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"title": "Not Found", "status": 404, "detail": detail})

    client = Client("k", "http://x.invalid", transport=httpx.MockTransport(handler))
    with client, pytest.raises(NotFoundError) as info:
        client.get_registry("r")
    assert len(str(info.value)) <= 1000
    assert info.value.detail == detail


def test_an_id_that_is_not_valid_unicode_is_a_clear_value_error(client: Client) -> None:
    with pytest.raises(ValueError, match="not valid Unicode"):
        client.list_cluster_pods("bad\ud800id")

"""Secret hygiene end to end: the API key and every pod env value never show anywhere.

A sandbox is given API keys of our own (secrets no code path knows), a realistic
session runs against it (every operation, errors of every kind, retries through
faults, fleet loads, frames and their exports, the CLI, the report), and all that
came out (return values, reprs, exception messages and attributes, tracebacks,
logs at DEBUG of ``ccanalytics``, ``httpx`` and ``httpcore``, files, stdout and
stderr) is searched for the secrets.
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from ccanalytics import (
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    CCAnalyticsError,
    Client,
    FleetLoadError,
    InvalidSshKeysError,
    MalformedResponseError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    Registry,
    ServerError,
    UnprocessableEntityError,
    gpus_frame,
    load_cluster_pods,
    pods_frame,
)
from ccanalytics.cli import main
from ccanalytics.sandbox import (
    EXEMPT_KEY,
    FULL_ACCESS_KEY,
    LIMITED_KEY,
    NO_ACCESS_KEY,
    SECRET_PREFIX,
    Sandbox,
    SandboxApp,
)

#: Characters that repr, JSON and percent-encoding each escape differently: / + = \ "
SECRET_KEY = 'sk-live/4f1c+9e0b=7a2d\\4c88"b1e3aa90'
NO_ACCESS_SECRET = "sk-live-noaccess-77e0c1d2f3a4b5c6"
LIMITED_SECRET = "sk-live-limited-0a9b8c7d6e5f4a3b"
WRONG_SECRET = "sk-live-revoked-5e5e5e5e5e5e5e5e"
SANDBOX_KEYS = (FULL_ACCESS_KEY, NO_ACCESS_KEY, LIMITED_KEY, EXEMPT_KEY)
ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINajBoYvNIvnWWRi5fvEHCRN+YGrlS3KI3xqQ4uhGGlr a@b"
ROOT = Path(__file__).resolve().parent.parent

MakeSandbox = Callable[..., Sandbox]


def secrets_of(app: SandboxApp) -> list[str]:
    """Every value that must never appear: our API keys, pod env values, registry credentials."""
    values = [SECRET_KEY, NO_ACCESS_SECRET, LIMITED_SECRET, WRONG_SECRET, *app.data.secrets()]
    assert values[4:] and all(v.startswith(SECRET_PREFIX) for v in values[4:])
    return values


def escaped(secret: str) -> list[str]:
    """``secret`` and the forms an echo or a careless log may give it."""
    percent = quote(secret, safe="")
    forms = [
        secret,
        repr(secret)[1:-1],
        repr(secret.encode())[2:-1],
        json.dumps(secret)[1:-1],
        json.dumps(secret)[1:-1].replace("/", "\\/"),
        percent,
        percent.lower(),
    ]
    return list(dict.fromkeys(forms))


def assert_clean(texts: Iterable[str], secrets: list[str], *, also: Iterable[str] = ()) -> None:
    forbidden = [form for s in [*secrets, *also] for form in escaped(s)] + [SECRET_PREFIX]
    for text in texts:
        for secret in forbidden:
            assert secret not in text, f"{secret[:12]}... leaked in: {text[:300]!r}"


def error_texts(err: BaseException, *, with_locals: bool = True) -> list[str]:
    """Everything an exception shows: message, repr, attributes, the formatted traceback,
    its whole chain (``__cause__``/``__context__``), and every library frame's locals as
    an error reporter that captures them (Sentry) would send them."""
    texts = ["".join(traceback.format_exception(err))]
    if err.__traceback__ is not None and with_locals:
        # The first frame caught the error in this file; the ones below are the library's.
        below = err.__traceback__.tb_next
        report = traceback.TracebackException(type(err), err, below, capture_locals=True)
        texts.append("".join(report.format()))
    current: BaseException | None = err
    while current is not None:
        texts += [str(current), repr(current), str(vars(current)), str(current.args)]
        for inner in (
            getattr(current, "errors", {}).values() if isinstance(current, FleetLoadError) else ()
        ):
            texts += error_texts(inner)
        current = current.__cause__ or current.__context__
    return texts


def log_texts(caplog: pytest.LogCaptureFixture) -> list[str]:
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return [formatter.format(record) for record in caplog.records]


@pytest.fixture
def secret_sandbox(make_sandbox: MakeSandbox) -> Sandbox:
    return make_sandbox(
        api_keys={SECRET_KEY: "full", NO_ACCESS_SECRET: "none", LIMITED_SECRET: "limited"}
    )


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    for name in ("ccanalytics", "httpx", "httpcore"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


# -- the client: operations, errors, retries, reprs and logs ------------------------------


def test_a_realistic_session_leaks_no_secret(
    secret_sandbox: Sandbox, debug_logs: pytest.LogCaptureFixture, fast_retries
) -> None:
    app = secret_sandbox.app
    secrets = secrets_of(app)
    seen: list[str] = []
    url = secret_sandbox.url

    def expect(
        kind: type[CCAnalyticsError], call: Callable[[], Any], *, with_locals: bool = True
    ) -> CCAnalyticsError:
        with pytest.raises(kind) as info:
            call()
        seen.extend(error_texts(info.value, with_locals=with_locals))
        return info.value

    with Client(SECRET_KEY, url, timeout=0.5, max_retries=2) as client:
        seen += [repr(client), str(client)]
        # Every operation, every model and its parts.
        for cluster_id in app.data.clusters:
            for pod in client.list_cluster_pods(cluster_id):
                seen += [repr(pod), str(pod), pod.model_dump_json(), str(pod.model_dump())]
                seen += [repr(getattr(pod, f)) for f in type(pod).model_fields]
                seen.append(str(pod.env))
        for registry_id in app.data.registries:
            reg = client.get_registry(registry_id)
            seen += [repr(reg), str(reg), reg.model_dump_json()]
        keys = client.update_ssh_keys([ED25519])
        seen += [repr(keys), repr(client.rate_limit)]

        # Errors of several kinds.
        expect(NotFoundError, lambda: client.get_registry("reg-missing"))
        expect(NotFoundError, lambda: client.list_cluster_pods("cl-missing"))
        app.add_fault("status", status=422, path="/v2/account/ssh-keys")
        expect(UnprocessableEntityError, lambda: client.update_ssh_keys([ED25519]))
        # A secret passed as a key line must not be quoted in the error; it is in the
        # library frames' locals as the caller's own argument, which no code can avoid.
        expect(
            InvalidSshKeysError,
            lambda: client.update_ssh_keys([ED25519, SECRET_KEY]),
            with_locals=False,
        )

        # Retries through faults (each recovers), then one that does not.
        for kind in ("html", "reset", "truncate", "slow", "rate_limited", "malformed_ratelimit"):
            app.add_fault(kind, times=1, seconds=0.0 if kind == "rate_limited" else 1.0)
            assert client.get_registry("reg-ngc").id == "reg-ngc"
        # And faults that do not recover: every remaining error class.
        for kind, error in [
            ("reset", ApiConnectionError),
            ("slow", ApiTimeoutError),
            ("rate_limited", RateLimitError),
            ("invalid_json", MalformedResponseError),
            ("status", ServerError),
        ]:
            fault = app.add_fault(kind, times=None, seconds=0.0 if kind == "rate_limited" else 1.0)
            expect(error, lambda: client.get_registry("reg-ghcr"))
            fault.times = 0
        # A listing cut in half: what was read holds pod env values, and the frames an
        # error passes through (captured locals included) must not.
        fault = app.add_fault("invalid_json", times=None, path="/v2/clusters/")
        expect(MalformedResponseError, lambda: client.list_cluster_pods("cl-llama70b-train"))
        fault.times = 0
        seen.append(repr(client))

    # Other keys: no access, limited, revoked.
    with Client(NO_ACCESS_SECRET, url) as other:
        expect(PermissionDeniedError, lambda: other.list_cluster_pods("cl-etl-cpu"))
    with Client(LIMITED_SECRET, url) as limited:
        expect(PermissionDeniedError, lambda: limited.list_cluster_pods("cl-llama70b-train"))
        seen += [repr(p) for p in limited.list_cluster_pods("cl-infer-prod")]
    with Client(WRONG_SECRET, url) as revoked:
        err = expect(ApiError, lambda: revoked.get_registry("reg-ngc"))
        assert err.status == 401

    logs = log_texts(debug_logs)
    # The capture really saw all three libraries, retries included...
    names = {r.name.split(".")[0] for r in debug_logs.records}
    assert {"ccanalytics", "httpx", "httpcore"} <= names
    assert any("retrying" in line for line in logs)
    assert any("HTTP Request: GET" in line for line in logs)
    # ...and no request header was logged (httpx logs request lines, not headers).
    assert not any("authorization" in line.lower() for line in logs)
    assert_clean(seen + logs, secrets)


def test_an_echoing_server_cannot_plant_the_key_in_an_error(debug_logs) -> None:
    """A hostile server or proxy echoing the Authorization header back everywhere it can."""

    def handler(request: httpx.Request) -> httpx.Response:
        echo = request.headers["authorization"]
        # Raw, as a bytes repr, and percent-encoded, as proxies and frameworks show it.
        as_bytes, as_url = repr(echo.encode()), quote(echo, safe="")
        return httpx.Response(
            502,
            headers={
                "Content-Type": "text/html",
                "X-Request-Id": echo,
                "Server": as_bytes,
                "Via": as_url,
                "Set-Cookie": f"session={echo}",
                "WWW-Authenticate": echo,
            },
            content=f"<html><body>upstream said: {echo} {as_bytes} {as_url}</body></html>".encode(),
        )

    transport = httpx.MockTransport(handler)
    with (
        Client(SECRET_KEY, "http://echo.invalid", max_retries=0, transport=transport) as c,
        pytest.raises(ServerError) as info,
    ):
        c.get_registry("reg-ngc")
    err = info.value
    assert "upstream said: Bearer ***" in str(err)
    assert "set-cookie" not in err.headers and "www-authenticate" not in err.headers
    assert_clean([*error_texts(err), str(err.headers)], [SECRET_KEY])


# -- registries never hold credentials ------------------------------------------------------


@pytest.mark.parametrize(
    "credentials",
    [
        {"username": "sbx-secret-u", "password": "sbx-secret-p"},
        {"Username": "sbx-secret-u", "Password": "sbx-secret-p"},
        {"USERNAME": "sbx-secret-u", "PASSWORD": "sbx-secret-p"},
        {"password": None},
        {"password": {"nested": "sbx-secret-p"}},
    ],
)
def test_registry_model_drops_credentials_in_any_case(
    credentials: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    reg = Registry.model_validate({"id": "reg-x", "name": "X", "extra": 1, **credentials})
    assert (reg.id, reg.name, reg.model_extra) == ("reg-x", "X", {"extra": 1})
    dumped = reg.model_dump()
    assert {k.lower() for k in dumped} == {"id", "name", "extra"}
    assert_clean([repr(reg), str(reg), reg.model_dump_json(), *log_texts(caplog)], [])
    assert any("dropped" in r.getMessage() for r in caplog.records)


def test_registry_drops_credentials_passed_to_the_constructor() -> None:
    reg = Registry(id="reg-x", username="sbx-secret-u", password="sbx-secret-p")  # type: ignore[call-arg]
    assert SECRET_PREFIX not in repr(reg) + reg.model_dump_json()


def test_a_leaking_registry_response_over_http_is_cleaned(
    secret_sandbox: Sandbox, debug_logs: pytest.LogCaptureFixture
) -> None:
    secret_sandbox.app.add_fault("leak_credentials", times=None, path="/v2/registries/")
    with Client(SECRET_KEY, secret_sandbox.url) as c:
        regs = [c.get_registry(r) for r in secret_sandbox.app.data.registries]
    texts = [t for r in regs for t in (repr(r), str(r), r.model_dump_json(), str(r.model_extra))]
    assert_clean(texts + log_texts(debug_logs), secrets_of(secret_sandbox.app))


# -- fleet loads, frames and their exports ----------------------------------------------------


def frame_texts(frame: Any) -> list[str]:
    return [
        frame.to_csv(),
        frame.to_json(date_format="iso"),
        frame.to_json(orient="records", date_format="iso"),
        frame.to_html(),
        frame.to_string(),
        repr(frame),
        str(frame.attrs),
    ]


def test_fleet_loads_and_frames_leak_no_secret(
    secret_sandbox: Sandbox, debug_logs: pytest.LogCaptureFixture, fast_retries, tmp_path
) -> None:
    app = secret_sandbox.app
    secrets = secrets_of(app)
    fleet = [*app.data.clusters, "cl-missing"]
    seen: list[str] = []
    with Client(SECRET_KEY, secret_sandbox.url, max_retries=1) as client:
        collected = load_cluster_pods(fleet, client=client, errors="collect")
        assert list(collected.attrs["errors"]) == ["cl-missing"]
        with pytest.raises(FleetLoadError) as info:
            load_cluster_pods(fleet, client=client)
        seen += error_texts(info.value) + [repr(e) for e in info.value.errors.values()]
        seen += frame_texts(info.value.frame)
        pods = client.list_cluster_pods("cl-llama70b-train")
    with Client(LIMITED_SECRET, secret_sandbox.url) as limited:
        partial = load_cluster_pods(fleet, client=limited, errors="collect")
        assert set(partial["cluster_id"].unique()) == {"cl-infer-prod", "cl-etl-cpu"}
    frames = [collected, partial, pods_frame(pods), gpus_frame(pods)]
    # The raw listing, env values included, straight into the frame functions.
    raw = [pod for listing in app.data.clusters.values() for pod in listing]
    frames += [
        pods_frame(raw),
        gpus_frame(raw),
        pods_frame({"pods": raw}),
        pods_frame(json.dumps(raw)),
    ]
    assert collected["env_vars"].str.contains("HF_TOKEN").all()  # names are kept...
    for frame in frames:
        seen += frame_texts(frame)
    collected.to_parquet(tmp_path / "pods.parquet")
    seen.append((tmp_path / "pods.parquet").read_bytes().decode("latin-1"))
    assert_clean(seen + log_texts(debug_logs), secrets)  # ...values never


# -- the CLI, the report and the notebooks ---------------------------------------------------


def test_cli_output_leaks_no_secret(
    secret_sandbox: Sandbox,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    debug_logs: pytest.LogCaptureFixture,
    tmp_path: Path,
    fast_retries: None,
) -> None:
    secrets = secrets_of(secret_sandbox.app)
    outputs: list[str] = []

    def run(*argv: str) -> int:
        code = main(list(argv))
        out, err = capsys.readouterr()
        outputs.extend([out, err])
        return code

    # In-process sandbox: its own key must not show either.
    for fmt in ("table", "csv", "json"):
        assert run("pods", "cl-llama70b-train", "cl-bringup", "--sandbox", "--format", fmt) == 0
    assert run("pods", "cl-missing", "--sandbox") == 1
    # Over loopback with our secret key from the environment.
    monkeypatch.setenv("CCANALYTICS_API_KEY", SECRET_KEY)
    monkeypatch.setenv("CCANALYTICS_BASE_URL", secret_sandbox.url)
    assert run("pods", "cl-infer-prod", "--format", "json") == 0
    assert run("pods", "cl-infer-prod", "cl-missing") == 1
    secret_sandbox.app.add_fault("slow", seconds=1.0, times=None, path="/v2/clusters/cl-etl-cpu/")
    assert run("pods", "cl-etl-cpu", "--timeout", "0.2") == 1
    monkeypatch.setenv("CCANALYTICS_API_KEY", WRONG_SECRET)
    assert run("pods", "cl-infer-prod") == 1
    assert "401" in outputs[-1]
    # An authorized_keys file whose options carry a secret environment value.
    keys_file = tmp_path / "authorized_keys"
    keys_file.write_text(f'environment="HF_TOKEN={SECRET_PREFIX}in-options" {ED25519}\n')
    for fmt in ("table", "csv", "json"):
        run("audit-keys", str(keys_file), "--format", fmt)
    assert any("HF_TOKEN" in out for out in outputs[-6:])
    assert_clean(outputs + log_texts(debug_logs), secrets, also=SANDBOX_KEYS)


@pytest.mark.slow
def test_the_report_leaks_no_secret(
    secret_sandbox: Sandbox,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("CCANALYTICS_API_KEY", SECRET_KEY)
    monkeypatch.setenv("CCANALYTICS_BASE_URL", secret_sandbox.url)
    clusters = list(secret_sandbox.app.data.clusters)
    report = tmp_path / "report.html"
    code = main(["report", *clusters, "--output", str(report), "--csv", str(tmp_path / "csv")])
    out, err = capsys.readouterr()
    assert code == 0, err
    files = [report, *sorted((tmp_path / "csv").glob("*.csv"))]
    assert len(files) >= 3 and report.stat().st_size > 10_000
    texts = [out, err, *(f.read_text(encoding="utf-8") for f in files)]
    assert_clean(texts, secrets_of(secret_sandbox.app), also=SANDBOX_KEYS)


def test_stored_notebooks_hold_no_secret() -> None:
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    if not notebooks:
        pytest.skip("no notebooks in this checkout")
    secrets = secrets_of(SandboxApp())
    for path in notebooks:
        nb = json.loads(path.read_text(encoding="utf-8"))
        assert_clean([path.read_text(encoding="utf-8")], secrets)
        # Sources may name the sandbox key's constant, but no output may show a key.
        outputs = [json.dumps(c.get("outputs", [])) for c in nb["cells"]]
        assert_clean(outputs, secrets, also=SANDBOX_KEYS)

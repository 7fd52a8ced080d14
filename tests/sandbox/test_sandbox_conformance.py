"""Every sandbox response against the provider's published document (OpenAPI 3.1).

Bodies are validated with ``jsonschema`` against the document's own schemas, ``$ref``s
resolved from the document itself (a ``referencing.Registry`` holding it). What the
schemas cannot say but ``provider-notes.md`` does (runtime null unless RUNNING, cost
0.0 when stopped, one kind of mount, actions valid for the status, roles only on
SLURM/RAY clusters, 405 with ``Allow``) is checked by :func:`pod_violations` and
:func:`violations`. A copy of the document lives in ``tests/data`` so the test runs
anywhere; ``test_vendored_document_is_the_published_one`` catches drift.
"""

from __future__ import annotations

import functools
import json
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from ccanalytics.sandbox import (
    EXEMPT_KEY,
    FULL_ACCESS_KEY,
    LIMITED_KEY,
    NO_ACCESS_KEY,
    Sandbox,
    SandboxApp,
    SimulatedClock,
    SpendJump,
)

DATA = Path(__file__).parents[1] / "data"
DOCUMENT_PATH = DATA / "provider-openapi-v2.json"
#: Where the published document sits: beside the checkout (CI), or the team's share.
PUBLISHED = [
    Path(__file__).resolve().parents[3] / "shared/spec/provider-openapi-v2.json",
    Path("/work/shared/spec/provider-openapi-v2.json"),
]
DOC = json.loads(DOCUMENT_PATH.read_text())
DOC_URI = "urn:provider-openapi-v2"
REGISTRY: Registry[Any] = Registry().with_resource(
    DOC_URI, Resource.from_contents(DOC, default_specification=DRAFT202012)
)

ED25519 = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINajBoYvNIvnWWRi5fvEHCRN+YGrlS3KI3xqQ4uhGGlr alice@laptop"
)
#: Our three operations: path regex -> (document path template, implemented method).
TEMPLATES = [
    (re.compile(r"^/v2/clusters/[^/]*/pods$"), "/v2/clusters/{id}/pods", "GET"),
    (re.compile(r"^/v2/registries/[^/]*$"), "/v2/registries/{id}", "GET"),
    (re.compile(r"^/v2/account/ssh-keys$"), "/v2/account/ssh-keys", "PUT"),
]
#: The transitions a status can offer (the test's own reading of PodStatus/PodAction).
VALID_ACTIONS = {
    "PROVISIONING": {"terminate"},
    "STARTING": {"stop", "terminate"},
    "RUNNING": {"stop", "restart", "terminate"},
    "EXITED": {"start", "terminate"},
    "ERROR": {"start", "restart", "terminate"},
    "TERMINATED": set(),
}
#: Clusters whose pods carry a role (SLURM or RAY); every other cluster has none.
ROLE_CLUSTERS = {"cl-slurm-hpc": ("SLURM_CONTROLLER", "SLURM_COMPUTE")}
IMF_FIXDATE = re.compile(r"^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$")
SF_MEMBER = r'"?[a-z]+"?(;[a-z]=[0-9]+)+'
SF_LIST = re.compile(rf"^{SF_MEMBER}(, {SF_MEMBER})*$")


@dataclass
class Exchange:
    """One request and the response the sandbox sent."""

    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: bytes
    scope: str = "full"  # full, none, limited, exempt, anonymous
    expect_date: datetime | None = None  # the simulated clock at the request
    notes: list[str] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


# -- the checker ------------------------------------------------------------------


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = REGISTRY.resolver(DOC_URI).lookup(DOC_URI + node["$ref"]).contents
    return node


def documented_response(method: str, path: str, status: int) -> tuple[str, dict[str, Any]]:
    """(document location, Response object) that describes this answer."""
    for pattern, template, _ in TEMPLATES:
        if pattern.match(path.split("?")[0]):
            op = DOC["paths"][template].get(method.lower())
            if op is None or status == 405:
                where = "components.responses.MethodNotAllowedError"
                return where, DOC["components"]["responses"]["MethodNotAllowedError"]
            responses = op["responses"]
            key = str(status) if str(status) in responses else "default"
            return f"{template} {method} {key}", _resolve(responses[key])
    # A path outside our operations: the service's generic answers.
    name = {404: "NotFoundError", 401: "UnauthorizedError"}.get(status)
    if name:
        return f"components.responses.{name}", DOC["components"]["responses"][name]
    return "ErrorResponse", {
        "content": {
            "application/problem+json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}
        }
    }


@functools.cache
def _validator(schema_json: str) -> Draft202012Validator:
    schema = json.loads(schema_json)
    wrapped = {"$ref": DOC_URI + schema["$ref"]} if "$ref" in schema else schema
    return Draft202012Validator(wrapped, registry=REGISTRY)


@functools.lru_cache(maxsize=512)
def _schema_errors(body: bytes, schema_json: str) -> tuple[str, ...]:
    return tuple(
        f"{'/'.join(map(str, e.absolute_path)) or '$'}: {e.message[:200]}"
        for e in _validator(schema_json).iter_errors(json.loads(body))
    )


def schema_errors(instance: Any, schema: dict[str, Any]) -> list[str]:
    """Validation errors of ``instance`` (cached: a sweep sees the same bodies often)."""
    body = json.dumps(instance, sort_keys=True).encode()
    return list(_schema_errors(body, json.dumps(schema, sort_keys=True)))


def violations(ex: Exchange) -> list[str]:
    """Everything in ``ex`` that the document (or its notes) does not allow."""
    out: list[str] = []
    where, response = documented_response(ex.method, ex.path, ex.status)
    ctype = (ex.header("Content-Type") or "").split(";")[0].strip()
    content = response.get("content", {})
    if ctype not in content:
        out.append(f"Content-Type {ctype!r} is not one of {sorted(content)} ({where})")
    elif ex.method != "HEAD":
        try:
            body = json.loads(ex.body)
        except ValueError:
            out.append("body is not JSON")
        else:
            out += schema_errors(body, content[ctype]["schema"])
            if ctype == "application/problem+json" and body.get("status") != ex.status:
                out.append(f"problem status {body.get('status')!r} != HTTP {ex.status}")
            if ex.status == 200 and "pods" in body:
                cluster_id = ex.path.split("/")[3]
                for i, pod in enumerate(body["pods"]):
                    out += [f"pods/{i}: {v}" for v in pod_violations(pod, cluster_id)]
            if ex.status == 200 and "/registries/" in ex.path:
                out += [f"registry leaks {k}" for k in ("username", "password") if k in body]
    if ex.status == 405 and not ex.header("Allow"):
        out.append("405 without Allow")
    if ex.status == 429 and not (ex.header("Retry-After") or "").isdigit():
        out.append("429 without an integer Retry-After")
    for name in ("RateLimit", "RateLimit-Policy"):
        value = ex.header(name)
        if value is not None and not SF_LIST.match(value):
            out.append(f"{name} is not a structured-field list: {value!r}")
        if ex.scope in ("full", "none", "limited") and ex.status < 500 and value is None:
            out.append(f"an authenticated answer without {name}")
        if ex.scope == "exempt" and value is not None:
            out.append(f"an exempt caller got {name}")
    date = ex.header("Date")
    if date is None or not IMF_FIXDATE.match(date):
        out.append(f"Date is not an IMF-fixdate: {date!r}")
    elif ex.expect_date is not None and parsedate_to_datetime(date) != ex.expect_date:
        out.append(f"Date {date} is not the simulated clock {ex.expect_date}")
    return out


def pod_violations(pod: dict[str, Any], cluster_id: str) -> list[str]:
    """The notes' rules on one pod that the schema cannot express."""
    out: list[str] = []
    status = pod.get("status")
    if "desiredStatus" in pod:
        out.append("desiredStatus is not a v2 field")
    if ("gpu" in pod) == ("cpu" in pod):
        out.append("exactly one of gpu (GPU pods) and cpu (CPU pods) must be present")
    runtime = pod.get("runtime")
    if runtime is not None and status != "RUNNING":
        out.append(f"runtime on a {status} pod")
    if runtime is not None:
        gpus = runtime.get("gpus") or []
        percents = [g.get(k) for g in gpus for k in ("util", "memoryUtil")]
        percents += [(runtime.get(k) or {}).get("util") for k in ("cpu", "memory")]
        if any(p is not None and not 0 <= p <= 100 for p in percents):
            out.append(f"utilization outside 0-100: {percents}")
        if len(gpus) > (pod.get("gpu") or {}).get("count", 0):
            out.append("more GPU readings than GPUs")
        if runtime.get("uptime", 0) < 0:
            out.append("negative uptime")
    if status in ("EXITED", "TERMINATED") and pod.get("cost") != 0.0:
        out.append(f"cost {pod.get('cost')} on a {status} pod")
    if len([k for k, v in (pod.get("mounts") or {}).items() if v]) > 1:
        out.append("more than one kind of mount")
    actions = pod.get("actions") or []
    if not set(actions) <= VALID_ACTIONS.get(status or "", set()) or len(set(actions)) != len(
        actions
    ):
        out.append(f"actions {actions} are not valid for {status}")
    if (pod.get("ssh") or {}).get("direct") is not None and status != "RUNNING":
        out.append(f"ssh.direct on a {status} pod")
    cluster = pod.get("cluster") or {}
    if cluster.get("id") != cluster_id:
        out.append(f"cluster.id {cluster.get('id')!r} in the listing of {cluster_id}")
    if status != "PROVISIONING" and cluster.get("rank") is None:
        out.append(f"no rank on a {status} pod")
    roles = ROLE_CLUSTERS.get(cluster_id)
    if roles is None and "role" in cluster:
        out.append("cluster.role on a cluster that is neither SLURM nor RAY")
    if roles is not None and cluster.get("rank") is not None:
        expected = roles[0] if cluster["rank"] == 0 else roles[1]
        if cluster.get("role") != expected:
            out.append(f"rank {cluster['rank']} has role {cluster.get('role')!r}, not {expected}")
    for stamp in ("createdAt", "startedAt"):
        if pod.get(stamp) is not None:
            try:
                datetime.fromisoformat(pod[stamp])
            except ValueError:
                out.append(f"{stamp} is not a date-time: {pod[stamp]!r}")
    return out


# -- what the sandbox answers ------------------------------------------------------

KEYS = {
    "full": FULL_ACCESS_KEY,
    "none": NO_ACCESS_KEY,
    "limited": LIMITED_KEY,
    "exempt": EXEMPT_KEY,
}
METHODS = ("GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE")


def send(
    http: httpx.Client,
    method: str,
    path: str,
    scope: str = "full",
    clock: SimulatedClock | None = None,
    **kw: Any,
) -> Exchange:
    headers = dict(kw.pop("headers", {}))
    if scope in KEYS:
        headers["Authorization"] = f"Bearer {KEYS[scope]}"
    expect = clock.now().replace(microsecond=0) if clock else None
    r = http.request(method, path, headers=headers, **kw)
    return Exchange(method, path, r.status_code, dict(r.headers), r.content, scope, expect)


def paths_of(app: SandboxApp) -> list[str]:
    clusters = [*app.cluster_ids(), "cl-missing", "a%2Fb"]
    return [
        *(f"/v2/clusters/{c}/pods" for c in clusters),
        "/v2/registries/reg-ngc",
        "/v2/registries/reg-ghcr",
        "/v2/registries/reg-missing",
        "/v2/account/ssh-keys",
        "/v2/unknown",
        "/",
    ]


def exchanges(
    http: httpx.Client, app: SandboxApp, clock: SimulatedClock | None
) -> Iterator[Exchange]:
    """Every path under every key scope, every method, and every PUT outcome."""
    for path in paths_of(app):
        method = next((m for p, _, m in TEMPLATES if p.match(path)), "GET")
        body = {"json": {"keys": [ED25519]}} if method == "PUT" else {}
        for scope in (*KEYS, "anonymous"):
            yield send(http, method, path, scope, clock, **body)
        yield send(http, method, path, "x", clock, headers={"Authorization": "Bearer nope"})
        yield send(http, method, path, "x", clock, headers={"Authorization": "Basic Zm9vOmJhcg=="})
        for other in METHODS:
            yield send(http, other, path, "full", clock)
    keys = "/v2/account/ssh-keys"
    json_type = {"Content-Type": "application/json"}
    for content in (b'{"keys": ["bad"], "extra": 1}', b"[1, 2", b"[" * 50_000 + b"]" * 50_000):
        yield send(http, "PUT", keys, "full", clock, content=content, headers=json_type)
    yield send(
        http, "PUT", keys, "full", clock, content=b"keys", headers={"Content-Type": "text/plain"}
    )
    yield send(http, "PUT", keys, "full", clock, content=b" " * (2 << 20), headers=json_type)


@pytest.fixture(scope="module")
def snapshot_exchanges() -> list[Exchange]:
    with Sandbox() as sb, httpx.Client(base_url=sb.url) as http:
        return list(exchanges(http, sb.app, None))


def by_status(found: list[Exchange]) -> set[int]:
    return {ex.status for ex in found}


def assert_conforms(found: list[Exchange]) -> None:
    bad = {f"{ex.method} {ex.path} [{ex.scope}] -> {ex.status}": violations(ex) for ex in found}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, json.dumps(bad, indent=1)[:6000]


# -- the tests ------------------------------------------------------------------------


def test_vendored_document_is_the_published_one() -> None:
    published = next((p for p in PUBLISHED if p.exists()), None)
    if published is None:
        pytest.skip(f"no published document at {PUBLISHED}")
    assert json.loads(published.read_text()) == DOC


def test_every_snapshot_response_conforms(snapshot_exchanges: list[Exchange]) -> None:
    # The sweep covers every status the sandbox answers on its own.
    assert by_status(snapshot_exchanges) >= {200, 400, 401, 403, 404, 405, 413, 415, 422}
    assert_conforms(snapshot_exchanges)


def test_every_cluster_listing_is_served_and_conforms(snapshot_exchanges) -> None:
    listed = {
        ex.path.split("/")[3]
        for ex in snapshot_exchanges
        if ex.status == 200 and ex.path.startswith("/v2/clusters/") and ex.method == "GET"
    }
    assert listed == set(SandboxApp().cluster_ids())
    assert "cl-slurm-hpc" in listed


@pytest.mark.parametrize("hour", [0, 8.05, 8.25, 10.5, 12.5, 14.05, 16.5, 18.2, 23])
def test_timeline_responses_conform(hour: float) -> None:
    clock = SimulatedClock()
    clock.advance(timedelta(hours=hour))
    with Sandbox(SandboxApp(clock=clock)) as sb, httpx.Client(base_url=sb.url) as http:
        found = list(exchanges(http, sb.app, clock))
    assert 200 in by_status(found) and 405 in by_status(found)
    assert_conforms(found)


def test_rate_limited_answers_conform() -> None:
    clock = SimulatedClock()
    app = SandboxApp(clock=clock, rate_limits={"minute": (2, 60.0)})
    with Sandbox(app) as sb, httpx.Client(base_url=sb.url) as http:
        found = [send(http, "GET", "/v2/registries/reg-ngc", "full", clock) for _ in range(3)]
        found.append(send(http, "PUT", "/v2/account/ssh-keys", "full", clock, json={"keys": []}))
    assert [ex.status for ex in found] == [200, 200, 429, 429]
    assert_conforms(found)


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_error_faults_conform(status: int) -> None:
    with Sandbox() as sb, httpx.Client(base_url=sb.url) as http:
        sb.app.add_fault("status", status=status, times=None)
        found = [send(http, "GET", p, "full") for p in paths_of(sb.app)]
        found.append(send(http, "PUT", "/v2/account/ssh-keys", "full", json={"keys": []}))
    assert by_status(found) == {status}
    assert_conforms(found)


def raw_exchange(sb: Sandbox, request: bytes) -> Exchange:
    """Send bytes on a raw socket; parse the one answer (the server closes after it)."""
    host, port = sb._server.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=5) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    method, path = [*request.split(b" ", 2)[:2], b"-", b"-"][:2]
    return Exchange(method.decode(), path.decode(), int(status_line.split()[1]), headers, body, "x")


def test_requests_the_parser_refuses_get_problem_json() -> None:
    """Over a raw socket: never an HTML error page, whatever arrives."""
    auth = f"Authorization: Bearer {FULL_ACCESS_KEY}\r\n".encode()
    with Sandbox() as sb:
        found = [
            raw_exchange(sb, b"GARBAGE\r\n\r\n"),
            raw_exchange(sb, b"GET /v2/registries/reg-ngc HTTP/9.9\r\n\r\n"),
            raw_exchange(sb, b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n"),
            raw_exchange(
                sb, b"GET /v2/registries/reg-ngc HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n"
            ),
            raw_exchange(
                sb,
                b"BREW /v2/registries/reg-ngc HTTP/1.1\r\nConnection: close\r\n" + auth + b"\r\n",
            ),
        ]
    assert [ex.status for ex in found] == [400, 505, 414, 431, 405]
    assert_conforms(found)


# -- the checker fails on violations ----------------------------------------------


def _first(found: list[Exchange], path: str, status: int = 200, method: str = "GET") -> Exchange:
    return next(
        ex for ex in found if ex.path == path and ex.status == status and ex.method == method
    )


def _mutate_pod(ex: Exchange, index: int, change: Any) -> Exchange:
    body = json.loads(ex.body)
    change(body["pods"][index])
    return replace(ex, body=json.dumps(body).encode())


MUTATIONS = {
    "float utilization": (
        "cl-llama70b-train",
        0,
        lambda p: p["runtime"]["gpus"][0].update(util=50.5),
    ),
    "utilization over 100": (
        "cl-llama70b-train",
        0,
        lambda p: p["runtime"]["cpu"].update(util=101),
    ),
    "gpu null on a CPU pod": ("cl-etl-cpu", 0, lambda p: p.update(gpu=None)),
    "cpu beside gpu": (
        "cl-llama70b-train",
        1,
        lambda p: p.update(cpu={"id": "c", "vcpuCount": 8, "memory": 8}),
    ),
    "no status": ("cl-finetune-7b", 0, lambda p: p.pop("status")),
    "desiredStatus": ("cl-finetune-7b", 0, lambda p: p.update(desiredStatus="RUNNING")),
    "unknown status": ("cl-finetune-7b", 0, lambda p: p.update(status="PENDING")),
    "no cloud": ("cl-finetune-7b", 0, lambda p: p.pop("cloud")),
    "runtime on an exited pod": ("cl-bringup", 5, lambda p: p.update(runtime={"uptime": 3})),
    "cost on an exited pod": ("cl-bringup", 5, lambda p: p.update(cost=23.92)),
    "two kinds of mount": (
        "cl-finetune-7b",
        0,
        lambda p: p["mounts"].update(persistent={"size": 20, "path": "/w"}),
    ),
    "start on a running pod": ("cl-finetune-7b", 0, lambda p: p.update(actions=["start"])),
    "role on a training cluster": (
        "cl-finetune-7b",
        0,
        lambda p: p["cluster"].update(role="RAY_HEAD"),
    ),
    "no role on SLURM": ("cl-slurm-hpc", 2, lambda p: p["cluster"].pop("role")),
    "extra cluster property": ("cl-finetune-7b", 0, lambda p: p["cluster"].update(zone="a")),
    "missing required field": ("cl-finetune-7b", 0, lambda p: p.pop("globalNetworking")),
    "float uptime": ("cl-finetune-7b", 0, lambda p: p["runtime"].update(uptime=12.5)),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_checker_fails_on_a_mutated_listing(snapshot_exchanges, name: str) -> None:
    cluster, index, change = MUTATIONS[name]
    good = _first(snapshot_exchanges, f"/v2/clusters/{cluster}/pods")
    assert violations(good) == []
    assert violations(_mutate_pod(good, index, change)), name


def test_checker_fails_on_mutated_errors(snapshot_exchanges) -> None:
    not_allowed = _first(snapshot_exchanges, "/v2/registries/reg-ngc", 405, "DELETE")
    assert violations(not_allowed) == []
    no_allow = {k: v for k, v in not_allowed.headers.items() if k.lower() != "allow"}
    assert violations(replace(not_allowed, headers=no_allow)) == ["405 without Allow"]
    html = {**not_allowed.headers, "content-type": "text/html"}
    assert violations(replace(not_allowed, headers=html, body=b"<html></html>"))
    assert violations(replace(not_allowed, body=b'{"title": "x", "status": 405}'))  # no detail
    listing = _first(snapshot_exchanges, "/v2/clusters/cl-etl-cpu/pods")
    assert violations(replace(listing, body=b'{"pods": {}}'))
    registry = _first(snapshot_exchanges, "/v2/registries/reg-ngc")
    leaked = json.dumps({**json.loads(registry.body), "password": "x"}).encode()
    assert violations(replace(registry, body=leaked)) == ["registry leaks password"]


def test_the_forgotten_pod_conforms() -> None:
    clock = SimulatedClock()
    app = SandboxApp(clock=clock, forgotten_pod_at=clock.start + timedelta(minutes=30))
    clock.advance(timedelta(hours=1))
    with Sandbox(app) as sb, httpx.Client(base_url=sb.url) as http:
        found = send(http, "GET", "/v2/clusters/cl-research-dev/pods", "full", clock)
    assert found.status == 200 and len(json.loads(found.body)["pods"]) == 7
    assert_conforms([found])


def test_a_spend_jumps_pods_conform() -> None:
    clock = SimulatedClock()
    jump = SpendJump(clock.start + timedelta(minutes=30), hours=2)
    app = SandboxApp(clock=clock, spend_jumps=[jump])
    clock.advance(timedelta(hours=1))
    with Sandbox(app) as sb, httpx.Client(base_url=sb.url) as http:
        found = send(http, "GET", "/v2/clusters/cl-infer-prod/pods", "full", clock)
    assert found.status == 200 and len(json.loads(found.body)["pods"]) == 15
    assert_conforms([found])

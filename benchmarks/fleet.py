"""Figure 3: a fleet load under a small quota, against a retry-after loop."""

from __future__ import annotations

import time

import httpx
import pandas as pd
from _harness import (
    report,
    timed,
)

import ccanalytics
from ccanalytics.frames._build import pods_frame
from ccanalytics.sandbox import FULL_ACCESS_KEY, Sandbox, SandboxApp

FLEET = 25
QUOTA, WINDOW, LATENCY = 10, 3.0, 0.02


def fleet_sandbox() -> Sandbox:
    app = SandboxApp(rate_limits={"window": (QUOTA, WINDOW)}, latency=LATENCY)
    pods = app.data.clusters["cl-finetune-7b"]
    app.data.clusters = {f"cl-{i:02d}": pods for i in range(FLEET)}
    return Sandbox(app).start()


class RetryAfterTransport(httpx.HTTPTransport):
    """The baseline: a plain transport that retries 429s after Retry-After."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        while True:
            response = super().handle_request(request)
            if response.status_code != 429:
                return response
            response.read()
            time.sleep(float(response.headers.get("Retry-After", "1")))


def optimum(start_offset: float) -> float:
    """Quota-bound optimum from the load's start: a batch of QUOTA per window."""
    batches = -(-FLEET // QUOTA)
    # Fixed windows are aligned on the sandbox's start; the load starts start_offset into one.
    return (batches - 1) * WINDOW - start_offset + LATENCY


def bench() -> None:
    print(
        f"3. fleet load: {FLEET} clusters, quota {QUOTA} per {WINDOW:g}s window, {LATENCY * 1000:.0f} ms latency",
        flush=True,
    )
    ids = [f"cl-{i:02d}" for i in range(FLEET)]

    sb = fleet_sandbox()
    try:
        offset = time.monotonic() - sb.app._limiter.epoch  # windows align on this
        with sb.client() as c:
            t_ours = timed(lambda: ccanalytics.load_cluster_pods(ids, client=c, progress=False))
        ours_429 = sb.app.statuses[429]
    finally:
        sb.stop()
    best = optimum(offset)
    boundaries = -(-FLEET // QUOTA) - 1

    sb = fleet_sandbox()
    try:
        with httpx.Client(base_url=sb.url, transport=RetryAfterTransport()) as http:
            headers = {"Authorization": f"Bearer {FULL_ACCESS_KEY}"}

            def loop() -> None:
                frames = []
                for cid in ids:
                    r = http.get(f"/v2/clusters/{cid}/pods", headers=headers)
                    frames.append(pods_frame(r.content, cluster_id=cid))
                pd.concat(frames)

            t_base = timed(loop)
        base_429 = sb.app.statuses[429]
    finally:
        sb.stop()
    report(
        "fleet load wall time",
        f"{t_ours:.2f}s",
        f"{t_base:.2f}s",
        f"{t_ours / t_base:.2f}x the retry loop",
        value=t_ours / t_base,
    )
    report(
        f"vs quota-bound optimum {best:.2f}s (target: +<= {boundaries}s)",
        f"+{t_ours - best:.2f}s",
        f"+{t_base - best:.2f}s",
        f"{t_ours / best:.2f}x the optimum: " + ("ok" if t_ours - best <= boundaries else "MISSED"),
        value=t_ours / best,
    )
    report(
        "429 responses (target 0)",
        str(ours_429),
        str(base_429),
        "ok" if ours_429 == 0 else "MISSED",
    )

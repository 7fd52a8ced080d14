"""The fleet loader uses only the client's public, documented methods."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import ccanalytics
from ccanalytics import AsyncClient, MalformedResponseError
from ccanalytics.api import RawListing

LOADER = Path(ccanalytics.__file__).parent / "frames" / "_loader.py"


def test_the_loader_touches_no_private_member_of_a_client() -> None:
    tree = ast.parse(LOADER.read_text(encoding="utf-8"))
    private = sorted(
        {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in ("client", "twin")
        }
    )
    assert private == []


def test_the_raw_listing_is_public_on_both_clients(sandbox) -> None:
    with sandbox.client() as client:
        listing = client.list_cluster_pods_raw("cl-etl-cpu")
    assert isinstance(listing, RawListing) and listing.content.startswith(b"{")
    assert listing.path == "/v2/clusters/cl-etl-cpu/pods"
    assert "bytes>" in repr(listing)  # the body (env values) never shows

    async def main() -> RawListing:
        async with sandbox.async_client() as c:
            return await c.list_cluster_pods_raw("cl-etl-cpu")

    assert asyncio.run(main()).content == listing.content


def test_malformed_names_the_host_and_scrubs_like_the_clients_own_errors(sandbox) -> None:
    client = AsyncClient(sandbox.api_key, sandbox.url)
    err = client.malformed("/v2/clusters/cl-x/pods", f"not a listing {sandbox.api_key}")
    assert isinstance(err, MalformedResponseError)
    assert err.host.startswith("127.0.0.1") and err.path == "/v2/clusters/cl-x/pods"
    assert str(err).startswith(f"GET {sandbox.url}/v2/clusters/cl-x/pods: ")
    assert sandbox.api_key not in str(err)
    asyncio.run(client.aclose())


def test_a_load_through_a_sync_client_leaves_its_rate_limit_current(make_sandbox) -> None:
    sb = make_sandbox(rate_limits={"day": (50_000, 86_400.0)})
    with sb.client() as client:
        ccanalytics.load_cluster_pods(["cl-infer-prod", "cl-bringup"], client=client)
        assert client.rate_limit is not None
        assert client.rate_limit.windows["day"].remaining == 49_998

"""The S3 clients of a store, made when first needed: botocore's (for listings and the
conditional writes) and pyarrow's filesystem (for Parquet reads). Both take their
credentials from the standard AWS chain themselves: this package never holds one."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from ccanalytics.errors import StoreError
from ccanalytics.history.store._s3_replies import env_region, s3_timestamp

if TYPE_CHECKING:
    import pyarrow.fs as pafs  # type: ignore[import-untyped]

__all__ = ["s3_client", "s3_filesystem"]


@functools.cache
def _botocore_loader() -> Any:
    """One botocore data loader for every S3 client this process makes.

    It reads and parses S3's service model (~0.15 s, for every client of a new
    session) once; each session still resolves its own credentials and settings, so a
    key rotated between two stores is the one the second uses.
    """
    import botocore.session  # type: ignore[import-untyped]

    return botocore.session.get_session().get_component("data_loader")


def s3_client(endpoint_url: str | None, region: str | None, where: str) -> Any:
    """A botocore S3 client; a :class:`StoreError` naming ``where`` without botocore."""
    # botocore's own session, not boto3's: the same client and AWS chain, without the
    # ~0.2 s import of boto3 and its s3transfer, which nothing here uses.
    try:
        import botocore.session
        from botocore.config import Config  # type: ignore[import-untyped]
    except ImportError:
        raise StoreError(
            "an s3:// store needs botocore: pip install 'ccanalytics[s3]'", where
        ) from None
    session = botocore.session.get_session()
    session.register_component("data_loader", _botocore_loader())
    session.get_component("response_parser_factory").set_parser_defaults(
        timestamp_parser=s3_timestamp
    )
    return session.create_client(
        "s3",
        endpoint_url=endpoint_url,
        region_name=region,
        config=Config(retries={"mode": "standard", "max_attempts": 5}),
    )


def s3_filesystem(bucket: str, endpoint_url: str | None, region: str | None) -> pafs.FileSystem:
    """pyarrow's S3 filesystem for ``bucket``."""
    import pyarrow.fs as pafs

    region = region or env_region()
    if endpoint_url is None:
        # from_uri honours AWS_ENDPOINT_URL (the constructor does not); a known region
        # spares it the request that would look the bucket's up.
        query = f"?region={quote(region)}" if region else ""
        fs, _ = pafs.FileSystem.from_uri(f"s3://{bucket}{query}")
        return fs
    parts = urlsplit(endpoint_url)
    return pafs.S3FileSystem(
        endpoint_override=parts.netloc, scheme=parts.scheme or "https", region=region
    )

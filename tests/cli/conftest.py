"""Fixtures of the commands' tests."""

from s3server import s3_endpoint, s3_store  # noqa: F401 (fixtures: a local S3 server)

"""Fixtures of the docs' tests: the local S3 server, for the page on object storage."""

from s3server import s3_endpoint, s3_store  # noqa: F401 (fixtures: a local S3 server)

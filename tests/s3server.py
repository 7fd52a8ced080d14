"""A real S3 implementation on 127.0.0.1 for the store's tests: moto's server mode.

Started once per test session on a free port, as :class:`moto.server.ThreadedMotoServer`
starts it (moto's WSGI app and request handler in werkzeug's threaded server), but for
S3 only; each test gets a fresh bucket. The AWS chain is pinned for the whole session so that
nothing can reach real AWS: dummy credentials, no config or credentials file, no
instance metadata, and ``AWS_ENDPOINT_URL`` on the local server (boto3 and pyarrow's
``FileSystem.from_uri`` both honour it). Import the fixtures from a conftest::

    from s3server import s3_endpoint, s3_store  # noqa: F401

Tests that use them skip, saying why, when moto (the ``test`` extra) or boto3 (the
``s3`` extra) is not installed.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from werkzeug.serving import BaseWSGIServer

#: What the session's environment holds while the server runs (never a real secret).
FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing-key-id",
    "AWS_SECRET_ACCESS_KEY": "testing-secret-key",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": "/nonexistent/ccanalytics-test-aws-config",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/ccanalytics-test-aws-credentials",
}
_UNSET = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_PROFILE")


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of a moto S3 server, with the AWS chain pinned to it."""
    pytest.importorskip(
        "moto.server", reason="moto[server,s3] (the test extra) runs the local S3 server"
    )
    pytest.importorskip("boto3", reason="an s3:// store needs boto3 (the s3 extra)")
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = _s3_server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    endpoint = f"http://{host}:{port}"
    saved = {name: os.environ.get(name) for name in (*FAKE_AWS, *_UNSET, "AWS_ENDPOINT_URL")}
    os.environ.update(FAKE_AWS, AWS_ENDPOINT_URL=endpoint)
    for name in _UNSET:
        os.environ.pop(name, None)
    try:
        yield endpoint
    finally:
        server.shutdown()
        thread.join()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _s3_server() -> BaseWSGIServer:
    """Moto's server app on 127.0.0.1 (a free port) that serves S3 alone.

    Moto's dispatcher finds each request's service by listing its ~150 service packages
    on disk (``moto.backends.list_of_moto_modules``), per request: 40 % of an S3 request's
    time here (2.6 ms a PUT or GET rather than 4.5). Every request these tests send is
    S3's, so the dispatcher is told so.
    """
    from moto.moto_server import werkzeug_app
    from werkzeug.serving import make_server

    class S3Only(werkzeug_app.DomainDispatcherApplication):
        def get_backend_for_host(self, host: str | None) -> str:
            return "s3"

    app = S3Only(werkzeug_app.create_backend_app)
    # The handler ThreadedMotoServer gives it (newer moto: S3 metadata keys keep their
    # underscores); moto 5.1.5, the floor, has none and uses werkzeug's.
    handler = getattr(werkzeug_app, "MotoRequestHandler", None)
    return make_server("127.0.0.1", 0, app, threaded=True, request_handler=handler)


def new_bucket(endpoint: str) -> str:
    """A fresh, empty bucket on the local server; its name."""
    import boto3

    name = f"ccstore-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=name)
    return name


def upload_folder(folder: str | os.PathLike[str], url: str) -> int:
    """Put every file of ``folder`` at ``url`` (``s3://bucket/prefix``) key for key, as
    ``aws s3 cp --recursive`` would: the same bytes on both backends. The number of objects.

    Straight into the session server's S3 backend (it runs in this process), through
    moto's own ``put_object``, where each PUT request ends: the same ETag, size and
    LastModified as an upload, without a round trip per object (the simulated day's 864
    files took 3.6 s as requests). The readers under test still reach the objects only
    over HTTP.
    """
    from pathlib import Path

    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["global"]
    assert bucket in backend.buckets, f"{bucket} is not on the session's S3 server"
    files = [path for path in sorted(Path(folder).rglob("*")) if path.is_file()]
    for path in files:
        key = f"{prefix}/{path.relative_to(folder).as_posix()}"
        backend.put_object(bucket, key, path.read_bytes())
    return len(files)


@pytest.fixture
def s3_store(s3_endpoint: str) -> str:
    """``s3://<fresh bucket>/store``: an empty store on the local S3 server."""
    return f"s3://{new_bucket(s3_endpoint)}/store"

"""The API client: HTTP, models, errors, rate limits and retries of the REST API v2.

- ``_sync`` / ``_async``: ``Client`` and ``AsyncClient`` (httpx): the operations and
  their request loops, which differ only in how they wait and send;
- ``_base``: what both share: configuration, one call's state and deadline,
  responses to outcomes, the retry decision, the one way out for errors;
- ``_operations``: the three operations' paths, PUT body and response shapes;
- ``_deadline``: the call's deadline down at the socket (sync client), as an httpcore
  network backend;
- ``_transport``: the sync client's own httpx transport over httpcore pools on that
  backend (httpx's settings, proxies from the environment, httpx's exceptions);
- ``_response``: reading a body within the limits; status, JSON and ``Date``
  (``RawListing``, ``observed_at``, for the frame path);
- ``_secrets``: the API key checked at construction, and scrubbed from echoes;
- ``_url``: the base URL's rules, path segments, the clear-text warning;
- ``models``: pydantic v2 models of the resources (lenient on responses);
- ``_ratelimit``: ``RateLimit``/``RateLimit-Policy`` parsing and the pacer;
- ``_retry``: which failures are retried, and how long to wait;
- ``_config``: every policy constant and limit in one place.

The exception tree lives in :mod:`ccanalytics.errors`, shared by every layer. This
package may import only :mod:`ccanalytics.errors` and the key rule of
:mod:`ccanalytics.keys` (the client checks keys locally, as the server will);
everything else builds on it. Names are imported on first use (``lazy_loader``, from the list in
``__init__.pyi``), so importing ``_ratelimit`` or ``models`` does not load httpx.
"""

from __future__ import annotations

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)

"""The public names of ``ccanalytics.api``, written once (see ``__init__.py``)."""

from ._async import (
    AsyncClient as AsyncClient,
)
from ._clock import (
    trusted_span as trusted_span,
)
from ._config import (
    API_KEY_ENV as API_KEY_ENV,
    BASE_URL_ENV as BASE_URL_ENV,
    CLOCK_SKEW as CLOCK_SKEW,
)
from ._ratelimit import (
    RateLimitStatus as RateLimitStatus,
    RateLimitWindow as RateLimitWindow,
    parse_rate_limit as parse_rate_limit,
)
from ._response import (
    RawListing as RawListing,
    observed_at as observed_at,
)
from ._sync import (
    Client as Client,
)
from .models import (
    ErrorResponse as ErrorResponse,
    Pod as Pod,
    Registry as Registry,
    SshKeys as SshKeys,
    UpdateSshKeysRequest as UpdateSshKeysRequest,
)

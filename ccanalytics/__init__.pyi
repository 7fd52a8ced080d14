"""The public names of ``ccanalytics``, written once.

Type checkers read this stub; at run time ``lazy_loader.attach_stub`` reads the same
imports, so each name (and each subpackage) is imported on first access.
"""

from . import (
    analysis as analysis,
    api as api,
    errors as errors,
    frames as frames,
    history as history,
    keys as keys,
    plots as plots,
    report as report,
    sandbox as sandbox,
)
from .api import (
    AsyncClient as AsyncClient,
    Client as Client,
    ErrorResponse as ErrorResponse,
    Pod as Pod,
    RateLimitStatus as RateLimitStatus,
    RateLimitWindow as RateLimitWindow,
    Registry as Registry,
    SshKeys as SshKeys,
    UpdateSshKeysRequest as UpdateSshKeysRequest,
    parse_rate_limit as parse_rate_limit,
)
from .errors import (
    ApiConnectionError as ApiConnectionError,
    ApiError as ApiError,
    ApiTimeoutError as ApiTimeoutError,
    ArgumentsError as ArgumentsError,
    AuthenticationError as AuthenticationError,
    CCAnalyticsError as CCAnalyticsError,
    CheckOutputError as CheckOutputError,
    ClockSkewWarning as ClockSkewWarning,
    ConfigurationError as ConfigurationError,
    EngineError as EngineError,
    ExportOutputError as ExportOutputError,
    FleetLoadError as FleetLoadError,
    GpuTypesError as GpuTypesError,
    InsecureTransportWarning as InsecureTransportWarning,
    InvalidSshKeysError as InvalidSshKeysError,
    KeyFileError as KeyFileError,
    KeyNormalizationError as KeyNormalizationError,
    MalformedResponseError as MalformedResponseError,
    NoDataError as NoDataError,
    NotFoundError as NotFoundError,
    PermissionDeniedError as PermissionDeniedError,
    PolicyError as PolicyError,
    RateLimitError as RateLimitError,
    ReportLoadError as ReportLoadError,
    ReportOutputError as ReportOutputError,
    ResponseTooLargeError as ResponseTooLargeError,
    ScheduleError as ScheduleError,
    ServerError as ServerError,
    StoreError as StoreError,
    TeamsError as TeamsError,
    UnprocessableEntityError as UnprocessableEntityError,
)
from .frames import (
    aload_cluster_pods as aload_cluster_pods,
    gpus_frame as gpus_frame,
    load_cluster_frames as load_cluster_frames,
    load_cluster_pods as load_cluster_pods,
    pods_frame as pods_frame,
)
from .history import (
    CollectResult as CollectResult,
    History as History,
    collect as collect,
)
from .keys import (
    AuthorizedKey as AuthorizedKey,
    audit_keys as audit_keys,
    diff_ssh_keys as diff_ssh_keys,
    normalize_key_lines as normalize_key_lines,
    parse_authorized_key as parse_authorized_key,
)

__version__: str

"""Pydantic v2 models of the API's resources.

Responses are read leniently: the spec says neither which Pod fields are required
nor which may be null, so every response field is optional, unknown fields are
kept (``model_extra``), and a value of the wrong type is converted where
pydantic's lax mode can (``"18"`` -> 18 for an int field) or else becomes ``None``
instead of failing the whole listing (logged at DEBUG). The DataFrame path does
not go through these models and is stricter: a wrongly typed value is ``<NA>``. Requests are strict:
``UpdateSshKeysRequest`` forbids extra properties, as the server does.

Secrets never reach a repr: pod ``env`` values are ``SecretStr``, and ``Registry``
drops ``username``/``password`` even if a response wrongly carries them.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic.alias_generators import to_camel

__all__ = [
    "ClusterMembership",
    "CpuSpec",
    "ErrorResponse",
    "GlobalNetworking",
    "GpuSpec",
    "NetworkMount",
    "PersistentMount",
    "Pod",
    "PodMounts",
    "PodSsh",
    "Registry",
    "Runtime",
    "RuntimeGpu",
    "RuntimePort",
    "RuntimeUtil",
    "SshEndpoint",
    "SshKeys",
    "UpdateSshKeysRequest",
]

logger = logging.getLogger("ccanalytics.api.models")

T = TypeVar("T")


def _or_none(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate ``value``; on a type error give ``None`` rather than fail the response."""
    try:
        return handler(value)
    except ValidationError as err:
        logger.debug("ignoring a response value of unexpected type: %s", err.errors()[0]["type"])
        return None


#: A response field: missing, null or of the wrong type all read as ``None``.
Lenient = Annotated[T | None, WrapValidator(_or_none)]


def _list_or_none(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate a list element-wise, dropping elements that do not fit."""
    if not isinstance(value, list):
        return _or_none(value, handler)
    kept = []
    for item in value:
        try:
            kept.append(handler([item])[0])
        except ValidationError:
            logger.debug("dropping a list element of unexpected type")
    return kept


class _Response(BaseModel):
    """Base of response models: camelCase aliases, extra fields kept, lenient."""

    model_config = ConfigDict(
        extra="allow",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=False,
    )


class GpuSpec(_Response):
    """``pod.gpu``: the GPU type and how many the pod has."""

    id: Lenient[str] = None
    count: Lenient[int] = None


class CpuSpec(_Response):
    """``pod.cpu``: CPU flavour, vCPUs and memory (units not stated by the spec)."""

    id: Lenient[str] = None
    vcpu_count: Lenient[int] = None
    memory: Lenient[int] = None


class ClusterMembership(_Response):
    """``pod.cluster``: the cluster the pod belongs to, its rank, role and cluster-internal IP."""

    id: Lenient[str] = None
    rank: Lenient[int] = None
    ip: Lenient[str] = None
    #: SLURM_CONTROLLER, SLURM_COMPUTE, RAY_HEAD or RAY_WORKER; kept as sent.
    role: Lenient[str] = None


class RuntimeGpu(_Response):
    """One GPU's utilization sample."""

    util: Lenient[float] = None
    memory_util: Lenient[float] = None


class RuntimeUtil(_Response):
    """A ``{util: number}`` block (``runtime.cpu``, ``runtime.memory``)."""

    util: Lenient[float] = None


class RuntimePort(_Response):
    """A port mapping reported at runtime."""

    private: Lenient[int] = None
    public: Lenient[int] = None
    type: Lenient[str] = None
    ip: Lenient[str] = None


class Runtime(_Response):
    """``pod.runtime``: live metrics; absent while a pod is not running."""

    uptime: Lenient[float] = None
    gpus: Annotated[list[RuntimeGpu] | None, WrapValidator(_list_or_none)] = None
    cpu: Lenient[RuntimeUtil] = None
    memory: Lenient[RuntimeUtil] = None
    ports: Annotated[list[RuntimePort] | None, WrapValidator(_list_or_none)] = None


class PersistentMount(_Response):
    size: Lenient[int] = None
    path: Lenient[str] = None


class NetworkMount(_Response):
    volume_id: Lenient[str] = None
    path: Lenient[str] = None


class PodMounts(_Response):
    persistent: Lenient[PersistentMount] = None
    network: Annotated[list[NetworkMount] | None, WrapValidator(_list_or_none)] = None


class SshEndpoint(_Response):
    host: Lenient[str] = None
    port: Lenient[int] = None
    username: Lenient[str] = None
    command: Lenient[str] = None


class PodSsh(_Response):
    proxy: Lenient[SshEndpoint] = None
    direct: Lenient[SshEndpoint] = None


class GlobalNetworking(_Response):
    enabled: Lenient[bool] = None
    ip: Lenient[str] = None
    internal_dns: Lenient[str] = None


def _env_values(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Keep env as name -> SecretStr; any non-string value is stringified, then hidden."""
    if isinstance(value, dict):
        return {str(k): SecretStr(v if isinstance(v, str) else str(v)) for k, v in value.items()}
    return None


class Pod(_Response):
    """A cluster member pod, as ``GET /v2/clusters/{id}/pods`` returns it.

    ``env`` maps variable names to ``SecretStr``: its values never show in a repr,
    ``str()`` or ``model_dump_json()``; call ``.get_secret_value()`` deliberately.
    """

    id: Lenient[str] = None
    name: Lenient[str] = None
    image: Lenient[str] = None
    args: Lenient[str] = None
    disk: Lenient[int] = None
    ports: Annotated[list[str] | None, WrapValidator(_list_or_none)] = None
    env: Annotated[dict[str, SecretStr] | None, WrapValidator(_env_values)] = Field(
        default=None, repr=False
    )
    registry: Lenient[str] = None
    actions: Lenient[list[Any]] = None
    template: Lenient[str] = None
    cost: Lenient[float] = None
    # Kept as sent: a status or cloud this version does not know is still shown.
    status: Lenient[str] = None
    cloud: Lenient[str] = None
    #: Legacy: sent only by pre-v2 payloads, in place of ``status``.
    desired_status: Lenient[str] = None
    locked: Lenient[bool] = None
    data_center_id: Lenient[str] = None
    cuda_version: Lenient[str] = None
    created_at: Lenient[datetime] = None
    started_at: Lenient[datetime] = None
    mounts: Lenient[PodMounts] = None
    ssh: Lenient[PodSsh] = None
    global_networking: Lenient[GlobalNetworking] = None
    runtime: Lenient[Runtime] = None
    gpu: Lenient[GpuSpec] = None
    cpu: Lenient[CpuSpec] = None
    cluster: Lenient[ClusterMembership] = None


class SshKeys(_Response):
    """Response of ``PUT /v2/account/ssh-keys``: the account's keys after the replacement."""

    keys: Annotated[list[str], WrapValidator(_list_or_none)] = Field(default_factory=list)


class UpdateSshKeysRequest(BaseModel):
    """Body of ``PUT /v2/account/ssh-keys``: the complete replacement set (not a merge)."""

    model_config = ConfigDict(extra="forbid")

    keys: list[str]


#: Response fields of a registry credential that are write-only secrets.
REGISTRY_SECRET_FIELDS = ("username", "password")


class Registry(_Response):
    """A container registry credential. ``username``/``password`` are never kept."""

    id: Lenient[str] = None
    name: Lenient[str] = None

    @model_validator(mode="before")
    @classmethod
    def _drop_credentials(cls, data: Any) -> Any:
        # Case-insensitively: a "Password" kept as an extra field would show in every repr.
        def secret(key: object) -> bool:
            return isinstance(key, str) and key.casefold() in REGISTRY_SECRET_FIELDS

        if isinstance(data, dict) and any(secret(k) for k in data):
            logger.warning("registry response carried write-only credentials; dropped them")
            data = {k: v for k, v in data.items() if not secret(k)}
        return data


class ErrorResponse(_Response):
    """An RFC 9457 problem+json body as the API sends it."""

    title: Lenient[str] = None
    status: Lenient[int] = None
    detail: Lenient[str] = None
    errors: Annotated[list[str] | None, WrapValidator(_list_or_none)] = None
    type: Lenient[str] = None
    instance: Lenient[str] = None

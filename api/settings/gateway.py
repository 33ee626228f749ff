"""The gateway's settings, read once from the environment.

Every setting is a ``PROOFGATE_*`` variable, declared one way: a field of a
frozen settings dataclass marked ``variable(default, name)``
(``domain.variables``), here (``Settings``, ``TableLocation``), beside it in
``api.settings`` (``Limits``, ``Policy``, the secrets, ...) or in the layer
whose settings it tunes (the pipeline's, the threat rules'). The reader's
sections are made from the marks (``api.settings.declared``) and read by one
pydantic-settings reader (``api.settings.environment``): ``Environment`` is
every variable the gateway reads. An empty value counts as unset; a
malformed one stops start-up with an error naming the variable, rather than
surfacing later as a confusing request failure. To add a setting, add a
``variable(...)`` field to the dataclass that holds it, and a row to
README.md's Settings tables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from api.observability.logs import LogFormat, LogLevel
from api.settings.declared import Declared
from api.settings.environment import EnvironmentReader
from api.settings.formats import matching
from api.settings.keyfile import (
    ADMIN_KEY_FILE,
    CURSOR_KEY_FILE,
    HASH_SALT_FILE,
    SIGNING_KEY_FILE,
    new_admin_key,
    new_cursor_key,
    read_or_create,
)
from api.settings.limits import (
    AUTH_FAILURE_RATE,
    AuthFailures,
    AuthVariables,
    Limits,
    LimitVariables,
    Rate,
)
from api.settings.mcp import MCPVariables
from api.settings.operations import OperationSettings, OperationVariables
from api.settings.pipeline import PipelineVariables
from api.settings.policy import Policy, PolicyVariables
from api.settings.secrets import (
    HashSalt,
    Secrets,
    SecretVariables,
    decode_cursor_key,
    require_shared_secrets,
    signing_key_of,
    verifying_keys_of,
)
from api.settings.threats import ThreatVariables
from domain.variables import variable
from domain.verdicts import VERDICT_CACHE_BYTES
from services.pipeline.settings import PipelineSettings
from storage.sqlite import DEFAULT_CACHE_MIB

__all__ = [
    "ADMIN_KEY_FILE",
    "CURSOR_KEY_FILE",
    "HASH_SALT_FILE",
    "MEMORY",
    "SIGNING_KEY_FILE",
    "Backend",
    "CacheChannel",
    "Environment",
    "Settings",
    "TableLocation",
]

MEMORY = ":memory:"

_TABLE_NAME = re.compile(r"[A-Za-z0-9_.-]{3,255}")
_TABLE_RULE = "3 to 255 of the characters A-Z a-z 0-9 _ . -"
_REGION_RULE = "an AWS region such as eu-west-1"
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")


class Backend(StrEnum):
    SQLITE = "sqlite"
    DYNAMODB = "dynamodb"


class CacheChannel(StrEnum):
    """How the cache hears other processes' writes
    (docs/design.md, Cache invalidations across processes). ``auto``: Redis when
    ``PROOFGATE_REDIS_URL`` is set, else the table's log on DynamoDB (a fleet
    shares the table) or when ``serve --workers`` shares a SQLite file, else
    none (one process, whose own writes are all it hears)."""

    AUTO = "auto"
    REDIS = "redis"
    TABLE = "table"
    NONE = "none"


@dataclass(frozen=True)
class TableLocation:
    """Where the DynamoDB table lives: all ``create-table`` needs, without the
    key files ``Settings.from_env`` creates."""

    table: str = variable("proofgate", "table", format="table_name")
    region: str = variable("us-east-1", "aws_region", format="region")
    endpoint: str | None = variable(None, "dynamodb_endpoint", format="http_url")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> TableLocation:
        return _TableEnvironment.read(environ).build(cls)


_TABLE = TableLocation()


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Typed settings. ``from_env`` is the way in; constructing one directly
    (tests, embedding) skips the key files and the environment."""

    cursor_key: bytes = field(repr=False)
    admin_key: str = field(repr=False)
    backend: Backend = variable(Backend.SQLITE, "backend", format="choice")
    data_dir: Path = variable(Path(".data"), "data_dir", format="path")
    sqlite_path: str = str(Path(".data") / "proofgate.db")
    sqlite_cache_mb: int = variable(DEFAULT_CACHE_MIB, "sqlite_cache_mb")
    cache: bool = variable(False, "cache", format="switch")
    """The exact storage cache (docs/design.md, Storage cache). Off: until
    another process's writes reach this one's cache, a second writer of the
    store (a worker, the CLI) would be seen late, up to ``cache_ttl_ms``."""
    cache_channel: CacheChannel = variable(CacheChannel.AUTO, "cache_channel", format="choice")
    cache_sole_writer: bool = variable(False, "cache_sole_writer", format="switch")
    """The operator's word that this process is the store's only writer, so
    the cache may serve patterns strong only for freshness (docs/design.md,
    Storage cache, The watermark)."""
    cache_bytes: int = variable(64 * 1024 * 1024, "cache_bytes")
    cache_ttl_ms: int = variable(60_000, "cache_ttl_ms")
    response_cache: bool = variable(False, "response_cache", format="switch")
    """The response cache over the storage cache, for the queries listed in
    ``response_cache_operations`` (docs/design.md, Response cache); needs
    ``cache`` on, whose invalidations it hears."""
    response_cache_operations: tuple[str, ...] = variable(
        (), "response_cache_operations", format="operation_names"
    )
    response_cache_bytes: int = variable(32 * 1024 * 1024, "response_cache_bytes")
    response_cache_ttl_ms: int = variable(60_000, "response_cache_ttl_ms")
    response_cache_cdn_seconds: int = variable(0, "response_cache_cdn_seconds")
    """``s-maxage`` of an anonymous GET's answer: how long a CDN may serve it
    without asking again (0: it revalidates every time, with ``If-None-Match``)."""
    verdict_cache_bytes: int = variable(VERDICT_CACHE_BYTES, "verdict_cache_bytes")
    """What the remembered Ed25519 verdicts may hold (``domain.verdicts``)."""
    table: str = _TABLE.table
    dynamodb_endpoint: str | None = _TABLE.endpoint
    aws_region: str = _TABLE.region
    admin_key_file: Path | None = None
    """Where the admin key came from; None when it was set in the environment."""
    cors_origins: tuple[str, ...] = variable((), "cors_origins", format="origins")
    host: str = variable("127.0.0.1", "host", format="text")
    port: int = variable(8000, "port", format="port")
    public_url: str | None = variable(None, "public_url", format="http_url")
    """Base of the URLs printed on labels; None: ``url``, for a local gateway."""
    demo: bool = False
    log_format: LogFormat = variable(LogFormat.TEXT, "log_format", format="choice")
    log_level: LogLevel = variable(LogLevel.INFO, "log_level", format="choice")
    forwarded_allow_ips: tuple[str, ...] = variable(
        ("127.0.0.1",), "forwarded_allow_ips", format="addresses"
    )
    """Proxies whose X-Forwarded-For and X-Forwarded-Proto are believed."""
    tracemalloc_frames: int = variable(0, "tracemalloc_frames", format="frames_or_off")
    """Frames of each allocation ``serve`` traces for ``GET /debug/memory``;
    0 (off): nothing traced (docs/design.md, Memory growth)."""
    gc_full_ms: int = variable(60_000, "gc_full_ms", format="milliseconds_or_off")
    """How often a served process collects every generation of the frozen
    heap's newcomers; 0 (off): as CPython's thresholds say (docs/design.md,
    Memory growth)."""
    malloc_trim_ms: int = variable(30_000, "malloc_trim_ms", format="milliseconds_or_off")
    """How often the C allocator's free pages go back to the system; 0 (off):
    never (docs/design.md, Memory growth)."""
    malloc_arena_max: int = variable(2, "malloc_arena_max", format="arenas_or_off")
    """How many arenas glibc's malloc may keep; 0 (off): glibc's own limit,
    eight per core (docs/design.md, Memory growth)."""
    malloc_mmap_threshold_bytes: int = variable(
        128 * 1024, "malloc_mmap_threshold_bytes", format="bytes_or_off"
    )
    """Blocks from this size are mmap'd alone and returned when freed; 0
    (off): glibc's threshold, which rises with the largest block freed
    (docs/design.md, Memory growth)."""
    shutdown_seconds: int = variable(10, "shutdown_seconds")
    """How long a stopping process waits for requests in flight."""
    max_connections: int = variable(4096, "max_connections")
    """Open connections (HTTP and WebSocket) one process accepts; more get 503."""
    redis_start_degraded: bool = variable(False, "redis_start_degraded", format="one_or_zero")
    """Whether ``serve`` starts while PROOFGATE_REDIS_URL is unreachable instead
    of refusing (the operator decides a fleet may run degraded, not a typo in
    the URL)."""
    auth_failure_rate: Rate | None = AUTH_FAILURE_RATE
    """Failed authentications a client address may make; None: unlimited."""
    signing_key: str | None = field(default=None, repr=False)
    """PEM of the active Ed25519 certificate key, from the environment or a named file."""
    signing_key_file: Path | None = None
    """Where the embedded default keeps the signing key it generates on first
    start. With neither set (direct construction) the key is ephemeral."""
    verifying_keys: tuple[str, ...] = ()
    """PEM bundles of retired public keys, still accepted for verification."""
    hash_salt: bytes | None = variable(None, "hash_salt", format="hash_salt", repr=False)
    """Keys the salted hashes of device fingerprints and IPs."""
    hash_salt_file: Path | None = None
    """Where the embedded default keeps the salt it generates on first start."""
    pipeline: PipelineSettings = field(default_factory=PipelineSettings)
    """Outbox, relay, live delivery, webhooks and the threat rules' thresholds."""
    policy: Policy = field(default_factory=Policy)
    """Registration fee, FREE plan credits, claim lifetime."""
    limits: Limits = field(default_factory=Limits)
    """Operation, body and rate limits, introspection, APQ."""
    operations: OperationSettings = field(default_factory=OperationSettings)
    """The operation registry's folder and trusted-documents mode."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        """Settings from ``PROOFGATE_*`` variables. Every variable, and every
        file one names, is checked before a key file is written, so a typo
        leaves the data directory alone."""
        env = Environment.read(environ)
        secrets = env.build(Secrets)
        signing_key = signing_key_of(secrets)
        verifying_keys = verifying_keys_of(secrets)
        limits, policy, pipeline = env.build(Limits), env.build(Policy), env.pipeline(env.threats())
        data_dir = env.data_dir
        if env.backend is Backend.DYNAMODB:
            require_shared_secrets(environ, data_dir)
        cursor_key = secrets.cursor_key
        if cursor_key is None:
            path = data_dir / CURSOR_KEY_FILE
            cursor_key = decode_cursor_key(read_or_create(path, new_cursor_key), f"key file {path}")
        admin_key, admin_key_file = secrets.admin_key, None
        if admin_key is None:
            admin_key_file = data_dir / ADMIN_KEY_FILE
            admin_key = read_or_create(admin_key_file, new_admin_key)
        location = env.build(TableLocation)
        return env.build(
            cls,
            sqlite_path=env.sqlite_path or str(data_dir / "proofgate.db"),
            table=location.table,
            aws_region=location.region,
            dynamodb_endpoint=location.endpoint,
            cursor_key=cursor_key,
            admin_key=admin_key,
            admin_key_file=admin_key_file,
            auth_failure_rate=env.build(AuthFailures).rate,
            signing_key=signing_key,
            signing_key_file=data_dir / SIGNING_KEY_FILE if signing_key is None else None,
            verifying_keys=verifying_keys,
            hash_salt_file=data_dir / HASH_SALT_FILE if env.hash_salt is None else None,
            pipeline=pipeline,
            limits=limits,
            policy=policy,
            operations=env.operations(),
        )

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def label_url(self) -> str:
        """The base every label URL starts with (``PROOFGATE_PUBLIC_URL``)."""
        return self.public_url or self.url


_FORMATS = {
    "table_name": Annotated[str, matching(_TABLE_NAME, _TABLE_RULE)],
    "region": Annotated[str, matching(_REGION, _REGION_RULE)],
    "hash_salt": HashSalt,
}


class TableVariables(Declared, declares=TableLocation, formats=_FORMATS):
    """Where the DynamoDB table lives: all ``create-table`` reads."""


class ProcessVariables(TableVariables, SecretVariables, declares=Settings, formats=_FORMATS):
    """Storage, the process and its secrets. Secrets are only checked here;
    the key files for unset ones are written by ``Settings.from_env`` once
    every variable has been read."""

    if TYPE_CHECKING:
        # Fields Settings declares, which from_env reads before it builds one.
        backend: Backend
        data_dir: Path
        hash_salt: bytes | None

    sqlite_path: str | None = None


class Environment(
    ProcessVariables,
    LimitVariables,
    AuthVariables,
    OperationVariables,
    MCPVariables,
    PolicyVariables,
    ThreatVariables,
    PipelineVariables,
    EnvironmentReader,
):
    """Every variable the gateway reads, checked in one pass that touches no file."""


class _TableEnvironment(TableVariables, EnvironmentReader):
    pass

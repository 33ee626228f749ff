"""The gateway's settings, read once from the environment.

Every setting is a ``PROOFGATE_*`` variable; an empty value counts as unset.
A malformed value stops start-up with an error naming the variable, rather
than surfacing later as a confusing request failure.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import overload

from domain.errors import ConfigurationError
from resolvers.pipeline.settings import PipelineSettings
from storage.cursor import CursorCodec

from ._environment import Environment, invalid
from .keyfile import read_or_create
from .limits import Limits
from .logs import LogFormat, LogLevel
from .policy import Policy
from .signing_keys import parse_signing_key, parse_verifying_keys
from .threat_settings import threat_settings_from_env

__all__ = [
    "ADMIN_KEY_FILE",
    "ADMIN_KEY_MIN_LENGTH",
    "CURSOR_KEY_FILE",
    "HASH_SALT_FILE",
    "MEMORY",
    "SIGNING_KEY_FILE",
    "Backend",
    "Settings",
    "TableLocation",
]

MEMORY = ":memory:"
CURSOR_KEY_FILE = "cursor.key"
ADMIN_KEY_FILE = "admin.key"
ADMIN_KEY_MIN_LENGTH = 16
SIGNING_KEY_FILE = "signing.key"
HASH_SALT_FILE = "hash.salt"
HASH_SALT_MIN_BYTES = 16

_TABLE_NAME = re.compile(r"[A-Za-z0-9_.-]{3,255}")
_TABLE_RULE = "3 to 255 of the characters A-Z a-z 0-9 _ . -"
_REGION_RULE = "an AWS region such as eu-west-1"
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+={0,2}")


class Backend(StrEnum):
    SQLITE = "sqlite"
    DYNAMODB = "dynamodb"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Typed settings. ``from_env`` is the way in; constructing one directly
    (tests, embedding) skips the key files and the environment."""

    cursor_key: bytes = field(repr=False)
    admin_key: str = field(repr=False)
    backend: Backend = Backend.SQLITE
    data_dir: Path = Path(".data")
    sqlite_path: str = str(Path(".data") / "proofgate.db")
    table: str = "proofgate"
    dynamodb_endpoint: str | None = None
    aws_region: str = "us-east-1"
    admin_key_file: Path | None = None
    """Where the admin key came from; None when it was set in the environment."""
    cors_origins: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    port: int = 8000
    demo: bool = False
    log_format: LogFormat = LogFormat.TEXT
    log_level: LogLevel = LogLevel.INFO
    signing_key: str | None = field(default=None, repr=False)
    """PEM of the active Ed25519 certificate key, from the environment or a named file."""
    signing_key_file: Path | None = None
    """Where the embedded default keeps the signing key it generates on first
    start. With neither set (direct construction) the key is ephemeral."""
    verifying_keys: tuple[str, ...] = ()
    """PEM bundles of retired public keys, still accepted for verification."""
    hash_salt: bytes | None = field(default=None, repr=False)
    """Keys the salted hashes of device fingerprints and IPs."""
    hash_salt_file: Path | None = None
    """Where the embedded default keeps the salt it generates on first start."""
    pipeline: PipelineSettings = field(default_factory=PipelineSettings)
    """Outbox, relay, live delivery, webhooks (``PipelineSettings.from_env``) and
    the threat rules' thresholds (``threat_settings_from_env``)."""
    policy: Policy = field(default_factory=Policy)
    """Registration fee, FREE plan credits, claim lifetime (``Policy.from_env``)."""
    limits: Limits = field(default_factory=Limits)
    """Operation, body and rate limits, introspection, APQ (``Limits.from_env``)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        """Settings from ``PROOFGATE_*`` variables. Every variable is checked
        before a key file is written, so a typo leaves the data directory alone."""
        env = Environment(environ)
        data_dir = Path(env.get("PROOFGATE_DATA_DIR") or ".data").expanduser()
        backend = env.choice("PROOFGATE_BACKEND", Backend, Backend.SQLITE)
        location = TableLocation.from_env(environ)
        origins = env.origins("PROOFGATE_CORS_ORIGINS")
        port = env.port("PROOFGATE_PORT", 8000)
        log_format = env.choice("PROOFGATE_LOG_FORMAT", LogFormat, LogFormat.TEXT)
        log_level = env.choice("PROOFGATE_LOG_LEVEL", LogLevel, LogLevel.INFO)
        cursor_key = _decode_cursor_key(env.get("PROOFGATE_CURSOR_KEY"), "PROOFGATE_CURSOR_KEY")
        admin_key = _check_admin_key(env.get("PROOFGATE_ADMIN_KEY"))
        signing_key = _signing_key(env)
        verifying_keys = _verifying_keys(env)
        hash_salt = _decode_salt(env.get("PROOFGATE_HASH_SALT"))
        pipeline = replace(
            PipelineSettings.from_env(environ), threats=threat_settings_from_env(environ)
        )
        limits = Limits.from_env(environ)
        policy = Policy.from_env(environ)
        if cursor_key is None:
            path = data_dir / CURSOR_KEY_FILE
            cursor_key = _decode_cursor_key(
                read_or_create(path, _new_cursor_key), f"key file {path}"
            )
        admin_key_file = None
        if admin_key is None:
            admin_key_file = data_dir / ADMIN_KEY_FILE
            admin_key = read_or_create(admin_key_file, lambda: secrets.token_urlsafe(32))
        return cls(
            backend=backend,
            data_dir=data_dir,
            sqlite_path=env.get("PROOFGATE_SQLITE_PATH") or str(data_dir / "proofgate.db"),
            table=location.table,
            dynamodb_endpoint=location.endpoint,
            aws_region=location.region,
            cursor_key=cursor_key,
            admin_key=admin_key,
            admin_key_file=admin_key_file,
            cors_origins=origins,
            host=env.get("PROOFGATE_HOST") or "127.0.0.1",
            port=port,
            log_format=log_format,
            log_level=log_level,
            signing_key=signing_key,
            signing_key_file=data_dir / SIGNING_KEY_FILE if signing_key is None else None,
            verifying_keys=verifying_keys,
            hash_salt=hash_salt,
            hash_salt_file=data_dir / HASH_SALT_FILE if hash_salt is None else None,
            pipeline=pipeline,
            limits=limits,
            policy=policy,
        )

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


@dataclass(frozen=True)
class TableLocation:
    """Where the DynamoDB table lives: all ``create-table`` needs, without the
    key files ``Settings.from_env`` creates."""

    table: str = "proofgate"
    region: str = "us-east-1"
    endpoint: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> TableLocation:
        env = Environment(environ)
        return cls(
            table=env.matching("PROOFGATE_TABLE", _TABLE_NAME, "proofgate", _TABLE_RULE),
            region=env.matching("PROOFGATE_AWS_REGION", _REGION, "us-east-1", _REGION_RULE),
            endpoint=env.url("PROOFGATE_DYNAMODB_ENDPOINT"),
        )


def _new_cursor_key() -> str:
    return base64.urlsafe_b64encode(CursorCodec.generate_key()).rstrip(b"=").decode()


@overload
def _decode_cursor_key(text: str, source: str) -> bytes: ...
@overload
def _decode_cursor_key(text: None, source: str) -> None: ...
def _decode_cursor_key(text: str | None, source: str) -> bytes | None:
    if text is None:
        return None
    key = b""
    if _BASE64URL.fullmatch(text):
        unpadded = text.rstrip("=")
        with contextlib.suppress(binascii.Error, ValueError):
            key = base64.urlsafe_b64decode(unpadded + "=" * (-len(unpadded) % 4))
    if len(key) not in (16, 24, 32):
        raise ConfigurationError(
            f"Invalid cursor key in {source}: expected 16, 24 or 32 bytes, base64url encoded",
            hint='Generate one with: python -c "import os,base64;'
            'print(base64.urlsafe_b64encode(os.urandom(32)).decode())"',
        )
    return key


def _check_admin_key(key: str | None) -> str | None:
    if key is not None and len(key) < ADMIN_KEY_MIN_LENGTH:
        raise invalid("PROOFGATE_ADMIN_KEY", f"needs at least {ADMIN_KEY_MIN_LENGTH} characters")
    return key


def _read_named_file(name: str, path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError as error:
        raise invalid(name, f"cannot read {path}: {error.strerror}") from None


def _signing_key(env: Environment) -> str | None:
    """Checked here, so a bad key stops start-up before any file is written.
    A PEM in a variable may spell its line breaks as ``\\n``."""
    text, path = env.get("PROOFGATE_SIGNING_KEY"), env.get("PROOFGATE_SIGNING_KEY_FILE")
    if text is not None and path is not None:
        raise invalid("PROOFGATE_SIGNING_KEY", "set it or PROOFGATE_SIGNING_KEY_FILE, not both")
    if text is not None:
        pem = text.replace("\\n", "\n")
        parse_signing_key(pem, "PROOFGATE_SIGNING_KEY")
        return pem
    if path is not None:
        pem = _read_named_file("PROOFGATE_SIGNING_KEY_FILE", path)
        parse_signing_key(pem, f"PROOFGATE_SIGNING_KEY_FILE ({path})")
        return pem
    return None


def _verifying_keys(env: Environment) -> tuple[str, ...]:
    path = env.get("PROOFGATE_VERIFYING_KEYS_FILE")
    if path is None:
        return ()
    text = _read_named_file("PROOFGATE_VERIFYING_KEYS_FILE", path)
    parse_verifying_keys(text, f"PROOFGATE_VERIFYING_KEYS_FILE ({path})")
    return (text,)


def _decode_salt(text: str | None) -> bytes | None:
    if text is None:
        return None
    salt = b""
    if _BASE64URL.fullmatch(text):
        unpadded = text.rstrip("=")
        with contextlib.suppress(binascii.Error, ValueError):
            salt = base64.urlsafe_b64decode(unpadded + "=" * (-len(unpadded) % 4))
    if len(salt) < HASH_SALT_MIN_BYTES:
        problem = f"expected at least {HASH_SALT_MIN_BYTES} bytes, base64url encoded"
        raise invalid("PROOFGATE_HASH_SALT", problem)
    return salt

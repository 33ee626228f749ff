"""Secrets the embedded default keeps in its data directory.

A key is generated once and reused, so cursors, the admin key and (later) the
signing key survive restarts. The file is published with ``link``, which fails
if the name exists: two processes starting together on one data directory
agree on one key, and a reader never sees a half-written file.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from api.settings.key_ring import new_signing_key_pem
from domain.errors import ConfigurationError
from storage.cursor import CursorCodec

__all__ = [
    "ADMIN_KEY_FILE",
    "CURSOR_KEY_FILE",
    "HASH_SALT_FILE",
    "SHARED_SECRETS",
    "SIGNING_KEY_FILE",
    "SharedSecret",
    "new_admin_key",
    "new_cursor_key",
    "new_hash_salt",
    "read_or_create",
]

_PRIVATE = 0o600
CURSOR_KEY_FILE = "cursor.key"
ADMIN_KEY_FILE = "admin.key"
SIGNING_KEY_FILE = "signing.key"
HASH_SALT_FILE = "hash.salt"


def _base64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def new_cursor_key() -> str:
    return _base64url(CursorCodec.generate_key())


def new_hash_salt() -> str:
    return _base64url(os.urandom(32))


def new_admin_key() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class SharedSecret:
    """A secret every process of one deployment must hold alike: set in
    ``variable`` or kept in ``file_name`` of the data directory."""

    variable: str
    file_name: str
    generate: Callable[[], str]
    alternatives: tuple[str, ...] = ()


SHARED_SECRETS = (
    SharedSecret("PROOFGATE_CURSOR_KEY", CURSOR_KEY_FILE, new_cursor_key),
    SharedSecret("PROOFGATE_HASH_SALT", HASH_SALT_FILE, new_hash_salt),
    SharedSecret("PROOFGATE_ADMIN_KEY", ADMIN_KEY_FILE, new_admin_key),
    SharedSecret(
        "PROOFGATE_SIGNING_KEY",
        SIGNING_KEY_FILE,
        new_signing_key_pem,
        alternatives=("PROOFGATE_SIGNING_KEY_FILE",),
    ),
)


_DIRECTORY_HINT = (
    "Point --data-dir (PROOFGATE_DATA_DIR) at a directory this user can create and write, "
    "or set the secret's variable instead of keeping it in a file."
)


def read_or_create(path: Path, generate: Callable[[], str]) -> str:
    """The text stored at ``path``, generating it first (mode 0600) if absent."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    try:
        _create(path, generate)
    except OSError as error:
        raise ConfigurationError(
            f"Cannot write the key file {path}: {error.strerror or error}", hint=_DIRECTORY_HINT
        ) from None
    return _read(path)


def _create(path: Path, generate: Callable[[], str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _PRIVATE)
    try:
        os.fchmod(descriptor, _PRIVATE)
        os.write(descriptor, (generate() + "\n").encode())
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    try:
        os.link(draft, path)
    except FileExistsError:
        pass
    finally:
        draft.unlink()


def _read(path: Path) -> str:
    try:
        text = path.read_text().strip()
    except (PermissionError, IsADirectoryError, NotADirectoryError) as error:
        # NotADirectoryError: the data directory, or a parent, is a regular file.
        raise ConfigurationError(
            f"Cannot read the key file {path}: {error.strerror}", hint=_DIRECTORY_HINT
        ) from None
    if not text:
        raise ConfigurationError(f"Key file {path} is empty", hint="Delete it to generate a key.")
    return text

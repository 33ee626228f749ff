"""The secrets a process reads: checked while the variables are read, so a
bad one stops start-up before any key file is written.

``Settings.from_env`` writes the key files for the unset ones afterwards
(``api.settings.keyfile``); on DynamoDB every process must share them, so
there they must be set or already in the data directory.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator

from api.settings.declared import Declared
from api.settings.environment import Malformed
from api.settings.key_ring import parse_signing_key, parse_verifying_keys
from api.settings.keyfile import SHARED_SECRETS
from domain.errors import ConfigurationError
from domain.identifiers import SALT_MIN_BYTES
from domain.variables import variable

__all__ = [
    "ADMIN_KEY_MIN_LENGTH",
    "HashSalt",
    "SecretVariables",
    "Secrets",
    "base64url_bytes",
    "decode_cursor_key",
    "require_shared_secrets",
    "signing_key_of",
    "verifying_keys_of",
]

ADMIN_KEY_MIN_LENGTH = 16

_BASE64URL = re.compile(r"[A-Za-z0-9_-]+={0,2}")


def require_shared_secrets(environ: Mapping[str, str], data_dir: Path) -> None:
    """On DynamoDB, processes share one table, so a secret one of them made up
    alone breaks the others (certificates that fail to verify, cursors
    refused): every secret must be set or already in the data directory."""
    missing = [
        secret.variable
        for secret in SHARED_SECRETS
        if not any(environ.get(v, "").strip() for v in (secret.variable, *secret.alternatives))
        and not (data_dir / secret.file_name).exists()
    ]
    if missing:
        raise ConfigurationError(
            f"PROOFGATE_BACKEND=dynamodb needs the secrets all its processes share; "
            f"missing: {', '.join(missing)}",
            hint="Run `proofgate init-secrets DIR` once and start every process with "
            "the environment it prints (or with PROOFGATE_DATA_DIR=DIR).",
        )


def base64url_bytes(text: str) -> bytes:
    """The bytes ``text`` encodes, padded or not; empty when it is not base64url."""
    if _BASE64URL.fullmatch(text):
        unpadded = text.rstrip("=")
        with contextlib.suppress(binascii.Error, ValueError):
            return base64.urlsafe_b64decode(unpadded + "=" * (-len(unpadded) % 4))
    return b""


def decode_cursor_key(text: str, source: str) -> bytes:
    key = base64url_bytes(text)
    if len(key) not in (16, 24, 32):
        raise ConfigurationError(
            f"Invalid cursor key in {source}: expected 16, 24 or 32 bytes, base64url encoded",
            hint='Generate one with: python -c "import os,base64;'
            'print(base64.urlsafe_b64encode(os.urandom(32)).decode())"',
        )
    return key


def _read_named_file(name: str, path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError as error:
        raise ConfigurationError(f"Invalid {name}: cannot read {path}: {error.strerror}") from None


def signing_key_of(secrets: Secrets) -> str | None:
    """Parsed here, so a bad key stops start-up before any file is written."""
    text, path = secrets.signing_key, secrets.signing_key_file
    if text is not None and path is not None:
        raise ConfigurationError(
            "Invalid PROOFGATE_SIGNING_KEY: set it or PROOFGATE_SIGNING_KEY_FILE, not both"
        )
    if text is not None:
        parse_signing_key(text, "PROOFGATE_SIGNING_KEY")
        return text
    if path is not None:
        pem = _read_named_file("PROOFGATE_SIGNING_KEY_FILE", path)
        parse_signing_key(pem, f"PROOFGATE_SIGNING_KEY_FILE ({path})")
        return pem
    return None


def verifying_keys_of(secrets: Secrets) -> tuple[str, ...]:
    path = secrets.verifying_keys_file
    if path is None:
        return ()
    text = _read_named_file("PROOFGATE_VERIFYING_KEYS_FILE", path)
    parse_verifying_keys(text, f"PROOFGATE_VERIFYING_KEYS_FILE ({path})")
    return (text,)


def _decode_salt(text: str) -> bytes:
    salt = base64url_bytes(text)
    if len(salt) < SALT_MIN_BYTES:
        raise Malformed(f"expected at least {SALT_MIN_BYTES} bytes, base64url encoded")
    return salt


def _cursor_key(text: str) -> bytes:
    return decode_cursor_key(text, "PROOFGATE_CURSOR_KEY")


def _long_enough_admin_key(key: str) -> str:
    if len(key) < ADMIN_KEY_MIN_LENGTH:
        raise Malformed(f"needs at least {ADMIN_KEY_MIN_LENGTH} characters")
    return key


HashSalt = Annotated[bytes | None, BeforeValidator(_decode_salt)]


@dataclass(frozen=True)
class Secrets:
    """The secrets a process reads, but the hash salt (``Settings`` declares
    that one); ``Settings.from_env`` checks them before it writes a key file."""

    cursor_key: bytes | None = variable(None, "cursor_key", format="cursor_key", repr=False)
    admin_key: str | None = variable(None, "admin_key", format="admin_key", repr=False)
    signing_key: str | None = variable(None, "signing_key", format="pem", repr=False)
    """A PEM in a variable may spell its line breaks as ``\\n``."""
    signing_key_file: str | None = variable(None, "signing_key_file", format="text")
    verifying_keys_file: str | None = variable(None, "verifying_keys_file", format="text")


_FORMATS = {
    "cursor_key": Annotated[bytes | None, BeforeValidator(_cursor_key)],
    "admin_key": Annotated[str | None, AfterValidator(_long_enough_admin_key)],
    "pem": Annotated[str | None, BeforeValidator(lambda text: text.replace("\\n", "\n"))],
}


class SecretVariables(Declared, declares=Secrets, formats=_FORMATS):
    pass

"""Secrets the embedded default keeps in its data directory.

A key is generated once and reused, so cursors, the admin key and (later) the
signing key survive restarts. The file is published with ``link``, which fails
if the name exists: two processes starting together on one data directory
agree on one key, and a reader never sees a half-written file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from domain.errors import ConfigurationError

__all__ = ["read_or_create"]

_PRIVATE = 0o600


def read_or_create(path: Path, generate: Callable[[], str]) -> str:
    """The text stored at ``path``, generating it first (mode 0600) if absent."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
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
    return _read(path)


def _read(path: Path) -> str:
    text = path.read_text().strip()
    if not text:
        raise ConfigurationError(f"Key file {path} is empty", hint="Delete it to generate a key.")
    return text

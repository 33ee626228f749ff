"""``proofgate backup PATH``: a consistent copy of the embedded store, taken
while it serves.

SQLite's online backup API copies the database as one read transaction, so
the copy is the store as of one commit however many writers run meanwhile
(WAL readers never block writers). The copy is written beside the target and
renamed once its integrity check passes: a half-written backup never carries
the final name. DynamoDB keeps its own backups (point-in-time recovery,
enabled by ``create-table``); see docs/operations.md, "Backup and restore".
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Any

from api.cli.flags import DATA_DIR_HELP, existing_store_settings
from api.settings.gateway import MEMORY, Backend
from domain.errors import ConfigurationError

__all__ = ["add_backup_command", "backup_sqlite"]

LOCK_TIMEOUT_SECONDS = 30.0
_PRIVATE = 0o600


def add_backup_command(commands: Any) -> None:
    backup = commands.add_parser(
        "backup", help="copy the embedded SQLite store to PATH, consistently, while it serves"
    )
    backup.add_argument("path", help="where the copy goes; must not exist yet")
    backup.add_argument("--data-dir", help=DATA_DIR_HELP)
    backup.set_defaults(command=_backup)


def _backup(args: argparse.Namespace) -> int:
    settings = existing_store_settings(create=None, data_dir=args.data_dir)
    if settings.backend is Backend.DYNAMODB:
        raise ConfigurationError(
            "proofgate backup copies the embedded SQLite store; DynamoDB keeps its own backups",
            hint="Restore a DynamoDB table with point-in-time recovery "
            "(docs/operations.md, 'Backup and restore').",
        )
    if settings.sqlite_path == MEMORY:
        raise ConfigurationError("An in-memory store cannot be backed up")
    size = backup_sqlite(Path(settings.sqlite_path), Path(args.path))
    print(f"Backed up {settings.sqlite_path} to {args.path} ({size} bytes)")
    return 0


def backup_sqlite(source: Path, target: Path) -> int:
    """The copy's size in bytes."""
    if not source.is_file():
        raise ConfigurationError(
            f"No SQLite store at {source}",
            hint="Point --data-dir (PROOFGATE_DATA_DIR) or PROOFGATE_SQLITE_PATH at the store.",
        )
    if target.exists():
        raise ConfigurationError(
            f"{target} already exists", hint="Choose a new path: a backup never overwrites."
        )
    if not target.parent.is_dir():
        raise ConfigurationError(
            f"No directory {target.parent} for the backup",
            hint="Create it first, or give a path in an existing directory.",
        )
    partial = target.with_name(target.name + ".partial")
    try:
        _copy(source, partial)
        os.replace(partial, target)
    except (OSError, sqlite3.Error) as error:
        raise ConfigurationError(
            f"The backup to {target} failed: {getattr(error, 'strerror', None) or error}",
            hint="Choose a directory this user can write, with room for the store; "
            "a store locked by a long write can be backed up again.",
        ) from None
    finally:
        partial.unlink(missing_ok=True)
    return target.stat().st_size


def _copy(source: Path, partial: Path) -> None:
    """The store as of one commit, into ``partial``: created 0600 before SQLite
    opens it (SQLite keeps a file's mode), since a backup holds every tenant's
    data, as private as the key files."""
    partial.unlink(missing_ok=True)
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _PRIVATE))
    with (
        contextlib.closing(sqlite3.connect(source, timeout=LOCK_TIMEOUT_SECONDS)) as origin,
        contextlib.closing(sqlite3.connect(partial)) as copy,
    ):
        origin.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")
        (verdict,) = copy.execute("PRAGMA integrity_check").fetchone()
    if verdict != "ok":
        raise ConfigurationError(f"The copy of {source} failed its integrity check: {verdict}")

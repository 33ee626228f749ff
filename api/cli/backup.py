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

from api.cli.flags import DATA_DIR_HELP, settings_with_flags
from api.settings.gateway import MEMORY, Backend
from domain.errors import ConfigurationError

__all__ = ["add_backup_command", "backup_sqlite"]

LOCK_TIMEOUT_SECONDS = 30.0


def add_backup_command(commands: Any) -> None:
    backup = commands.add_parser(
        "backup", help="copy the embedded SQLite store to PATH, consistently, while it serves"
    )
    backup.add_argument("path", help="where the copy goes; must not exist yet")
    backup.add_argument("--data-dir", help=DATA_DIR_HELP)
    backup.set_defaults(command=_backup)


def _backup(args: argparse.Namespace) -> int:
    settings = settings_with_flags(data_dir=args.data_dir)
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
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    try:
        with (
            contextlib.closing(sqlite3.connect(source, timeout=LOCK_TIMEOUT_SECONDS)) as origin,
            contextlib.closing(sqlite3.connect(partial)) as copy,
        ):
            origin.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            (verdict,) = copy.execute("PRAGMA integrity_check").fetchone()
        if verdict != "ok":
            raise ConfigurationError(f"The copy of {source} failed its integrity check: {verdict}")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target.stat().st_size

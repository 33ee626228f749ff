"""Command-line flags on top of the ``PROOFGATE_*`` environment, so a flag is
checked by the same reader as the variable it stands for."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from api.settings.gateway import MEMORY, Backend, Environment, Settings
from domain.errors import ConfigurationError

__all__ = [
    "CREATE_HELP",
    "DATA_DIR_HELP",
    "add_store_flags",
    "existing_store_settings",
    "flag_environ",
    "settings_with_flags",
]

DATA_DIR_HELP = "embedded store and key files (PROOFGATE_DATA_DIR)"
CREATE_HELP = (
    "start an empty embedded store (and its key files) when none is there; "
    "without it a mistyped --data-dir is refused and nothing is created"
)


def flag_environ(**flags: object) -> dict[str, str]:
    """The process environment with the flags given on the command line on top."""
    overrides = {f"PROOFGATE_{k.upper()}": str(v) for k, v in flags.items() if v is not None}
    return {**os.environ, **overrides}


def settings_with_flags(**flags: object) -> Settings:
    return Settings.from_env(flag_environ(**flags))


def add_store_flags(parser: Any) -> None:
    """``--data-dir`` and ``--create``, for a command over an existing store."""
    parser.add_argument("--data-dir", help=DATA_DIR_HELP)
    parser.add_argument("--create", action="store_true", help=CREATE_HELP)


def existing_store_settings(*, create: bool | None, **flags: object) -> Settings:
    """Settings for an operator command over a store that must exist already.

    ``Settings.from_env`` writes key files, and opening an embedded store
    that is not there starts an empty one: a mistyped data directory would
    get both, and `reconcile` would then report an empty store as in order.
    So the store is looked for first, before anything is written; ``create``
    (``--create``) allows a new one, None says the command has no such flag.
    A DynamoDB table is never created here: opening one that does not exist
    fails."""
    environ = flag_environ(**flags)
    if not create:
        _require_store(Environment.read(environ), creatable=create is not None)
    return Settings.from_env(environ)


def _require_store(env: Environment, *, creatable: bool) -> None:
    if env.backend is not Backend.SQLITE:
        return
    path = Path(env.sqlite_path or env.data_dir / "proofgate.db")
    if str(path) == MEMORY or path.is_file():
        return
    if path.is_dir():
        raise ConfigurationError(
            f"The SQLite store {path} is a directory",
            hint="Point PROOFGATE_SQLITE_PATH at the store's file (or unset it).",
        )
    where = (
        "PROOFGATE_SQLITE_PATH names no file"
        if env.sqlite_path is not None
        else f"{env.data_dir} does not exist"
        if not env.data_dir.exists()
        else f"{env.data_dir} holds none"
    )
    hint = "Check --data-dir (PROOFGATE_DATA_DIR) and PROOFGATE_SQLITE_PATH"
    if creatable:
        hint += "; pass --create to start an empty store there"
    raise ConfigurationError(f"No SQLite store at {path}: {where}", hint=f"{hint}.")

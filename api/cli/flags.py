"""Command-line flags on top of the ``PROOFGATE_*`` environment, so a flag is
checked by the same reader as the variable it stands for."""

from __future__ import annotations

import os

from api.settings.gateway import Settings

__all__ = ["DATA_DIR_HELP", "flag_environ", "settings_with_flags"]

DATA_DIR_HELP = "embedded store and key files (PROOFGATE_DATA_DIR)"


def flag_environ(**flags: object) -> dict[str, str]:
    """The process environment with the flags given on the command line on top."""
    overrides = {f"PROOFGATE_{k.upper()}": str(v) for k, v in flags.items() if v is not None}
    return {**os.environ, **overrides}


def settings_with_flags(**flags: object) -> Settings:
    return Settings.from_env(flag_environ(**flags))

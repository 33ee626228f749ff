"""``proofgate init-secrets DIR``: the secrets a fleet of processes shares,
made once.

Each secret is written to ``DIR`` (mode 0600; an existing one is kept, so the
command is safe to run again) and printed as the environment every process
of the deployment needs. With ``PROOFGATE_BACKEND=dynamodb`` a process starts
only with all of them (``Settings.from_env``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from api.settings.keyfile import SHARED_SECRETS, read_or_create

__all__ = ["add_secret_commands", "init_secrets"]


def add_secret_commands(commands: Any) -> None:
    """Adds the subcommand to ``proofgate``'s parser."""
    init = commands.add_parser(
        "init-secrets",
        help="make the secrets every process of one deployment shares, and print them",
        description="Writes the cursor key, hash salt, admin key and signing key to DIR "
        "(keeping any that exist) and prints the environment each process needs.",
    )
    init.add_argument("directory", type=Path, help="where the secrets are kept (mode 0600)")
    init.set_defaults(command=_init_secrets)


def init_secrets(directory: Path) -> dict[str, str]:
    """The environment that gives a process the secrets kept in ``directory``.

    The signing key is named by its file: a PEM spans lines, and an operator's
    secret store mounts files more readily than multi-line variables."""
    directory = directory.expanduser().resolve()
    environment: dict[str, str] = {}
    for secret in SHARED_SECRETS:
        path = directory / secret.file_name
        value = read_or_create(path, secret.generate)
        if secret.alternatives:
            environment[secret.alternatives[0]] = str(path)
        else:
            environment[secret.variable] = value
    return environment


def _init_secrets(args: argparse.Namespace) -> int:
    environment = init_secrets(args.directory)
    print(f"# Secrets kept in {args.directory}; start every process of the deployment with:")
    for name, value in environment.items():
        print(f"{name}={value}")
    return 0

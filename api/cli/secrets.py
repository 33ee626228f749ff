"""``proofgate init-secrets DIR``: the secrets a fleet of processes shares,
made once.

Each secret is written to ``DIR`` (mode 0600; an existing one is kept, so the
command is safe to run again) and printed as the environment every process
of the deployment needs. With ``PROOFGATE_BACKEND=dynamodb`` a process starts
only with all of them (``Settings.from_env``). A ``DIR`` inside a git work tree
gets a ``.gitignore`` of its own, so the keys are never committed; ``--json``
prints them as one secret of a secrets store.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from api.settings.keyfile import SHARED_SECRETS, read_or_create
from domain.errors import ConfigurationError

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
    init.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object of the four secrets (the signing key as its PEM), "
        "the shape of a secrets store's secret (deploy/service.yaml)",
    )
    init.set_defaults(command=_init_secrets)


def init_secrets(directory: Path) -> dict[str, str]:
    """The environment that gives a process the secrets kept in ``directory``.

    The signing key is named by its file: a PEM spans lines, and an operator's
    secret store mounts files more readily than multi-line variables."""
    directory = directory.expanduser().resolve()
    _keep_out_of_git(directory)
    environment: dict[str, str] = {}
    for secret in SHARED_SECRETS:
        path = directory / secret.file_name
        value = read_or_create(path, secret.generate)
        if secret.alternatives:
            environment[secret.alternatives[0]] = str(path)
        else:
            environment[secret.variable] = value
    return environment


def _keep_out_of_git(directory: Path) -> None:
    """Inside a git work tree, ``git add -A`` would commit the keys: the
    folder gets a ``.gitignore`` that ignores everything in it, itself too."""
    if not any((parent / ".git").exists() for parent in (directory, *directory.parents)):
        return
    ignore = directory / ".gitignore"
    if ignore.exists():
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        ignore.write_text("# Secrets: never committed (proofgate init-secrets).\n*\n")
    except OSError as error:
        raise ConfigurationError(
            f"Cannot write {ignore}: {error.strerror or error}",
            hint="Keep secrets in a directory this user can write, outside the work tree.",
        ) from None
    print(f"{directory} is inside a git work tree: wrote {ignore} (ignores *)", file=sys.stderr)


def secrets_document(directory: Path) -> dict[str, str]:
    """The four secrets by the variables a process reads them from, the
    signing key as its PEM: one secret of a secrets store."""
    environment = init_secrets(directory)
    document = {name: value for name, value in environment.items() if not name.endswith("_FILE")}
    for secret in SHARED_SECRETS:
        if secret.alternatives:
            document[secret.variable] = Path(environment[secret.alternatives[0]]).read_text()
    return document


def _init_secrets(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps(secrets_document(args.directory), sort_keys=True))
        return 0
    environment = init_secrets(args.directory)
    print(f"# Secrets kept in {args.directory}; start every process of the deployment with:")
    for name, value in environment.items():
        print(f"{name}={value}")
    return 0

"""Fastify + Mercurius with graphql-jit, the Node baseline of the API section.

``bench/mercurius/server.js`` serves the page and the small query from memory
with the same data as ``bench._bare``; its dependencies are pinned by
``bench/mercurius/package-lock.json`` and installed with ``npm ci`` into a
git-ignored ``node_modules`` the first time the bench runs (and again when the
lock file changes). Node is the machine's (Debian: ``apt-get install nodejs
npm``); without it the baseline is skipped with a message.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

__all__ = ["DIRECTORY", "command", "unavailable"]

DIRECTORY = Path(__file__).resolve().parent / "mercurius"
_STAMP = DIRECTORY / "node_modules" / ".package-lock.json"
"""npm writes this copy of the lock file into node_modules on every install."""


def unavailable() -> str | None:
    """Why the baseline cannot run, or None once its dependencies are installed."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "node/npm are not installed (Debian: apt-get install nodejs npm)"
    lock = DIRECTORY / "package-lock.json"
    if _STAMP.exists() and _STAMP.stat().st_mtime >= lock.stat().st_mtime:
        return None
    result = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=DIRECTORY,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:]
        return f"npm ci failed in {DIRECTORY}: {' '.join(tail)}"
    return None


def command(port: int) -> list[str]:
    node = shutil.which("node")
    assert node is not None, "check unavailable() first"
    return [node, str(DIRECTORY / "server.js"), str(port)]

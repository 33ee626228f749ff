"""The Node client projects under ``tests/clients``: installed from their
lock files with ``npm ci``, once per checkout, under a file lock for
parallel workers; a test skips when Node is not installed."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["CLIENTS", "npm_ci"]

CLIENTS = Path(__file__).resolve().parents[1] / "clients"


def npm_ci(project: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node and npm are needed for the client tests (apt-get install nodejs npm)")
    with (project / "package.json").open() as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (project / "node_modules" / ".package-lock.json").exists():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=project,
                capture_output=True,
                text=True,
                timeout=300,
            )
            if done.returncode != 0:
                pytest.fail(f"npm ci failed in {project}: {done.stderr[-2000:]}")
    return project

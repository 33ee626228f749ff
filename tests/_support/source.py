"""Where the source tree is, for tests that read it as text."""

from __future__ import annotations

import sysconfig
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("api", "resolvers", "services", "storage", "domain")


def source_files() -> Iterator[Path]:
    """Every Python module of the gateway's own packages."""
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def venv_script(name: str) -> Path | None:
    """A console script installed beside this interpreter (``make test`` does
    not put the venv's ``bin/`` on PATH)."""
    candidate = Path(sysconfig.get_path("scripts")) / name
    return candidate if candidate.exists() else None

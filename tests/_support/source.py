"""Where the source tree is, for tests that read it as text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("api", "resolvers", "services", "storage", "domain")


def source_files() -> Iterator[Path]:
    """Every Python module of the gateway's own packages."""
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))

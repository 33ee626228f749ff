"""``python -m bench [section ...]``: run the benchmark sections, print tables."""

from __future__ import annotations

import asyncio
import importlib
import sys

SECTIONS = (
    "storage",
    "scale",
    "ledger",
    "execution",
    "fastpaths",
    "api",
    "cache",
    "backends",
    "alerts",
    "pings",
    "filters",
    "soak",
    "servers",
    "served",
)


def main(argv: list[str]) -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    for name in argv or SECTIONS:
        module = importlib.import_module(f"bench.{name}")
        asyncio.run(module.run())


if __name__ == "__main__":
    main(sys.argv[1:])

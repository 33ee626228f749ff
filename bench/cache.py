"""The exact storage cache (docs/design.md, Storage cache): storage calls and
read units per 1,000 page views at about 95% hits, the hit and miss path's
CPU, on both backends in one process; then the page of 50 (hit and miss) and
``verifyProduct`` with a warm cache over HTTP, beside the uncached gateway,
bare Strawberry and Mercurius (``bench/_cache_http.py``)."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from storage import Storage
from storage.cache import CachedStorage
from storage.cursor import CursorCodec
from storage.sqlite import open_sqlite

from . import _cache_http, _cache_instructions
from ._cache_views import VIEWS, WRITE_EVERY, Views, seed, views
from ._harness import print_table
from ._moto import moto_storage
from ._wrk import WRK

__all__ = ["run"]

CACHE_BYTES = 64 * 1024 * 1024
TTL_SECONDS = 60.0


@asynccontextmanager
async def _sqlite(directory: Path) -> AsyncIterator[Storage]:
    storage = await open_sqlite(directory / "views.db", cursor_key=CursorCodec.generate_key())
    try:
        yield storage
    finally:
        await storage.close()


MOTO_VIEWS = 200
"""moto answers a call in milliseconds: fewer views there, counted per 1,000."""


async def _views(storage: Storage, count: int = VIEWS) -> tuple[Views, Views]:
    await seed(storage)
    bare = await views(storage, count)
    cached = CachedStorage(storage, max_bytes=CACHE_BYTES, ttl_seconds=TTL_SECONDS)
    await views(cached, 1)  # warm: the first view misses
    return bare, await views(cached, count)


def _rows(backend: str, bare: Views, cached: Views) -> list[tuple[str, ...]]:
    def fall(before: float, after: float) -> str:
        return "-" if not before else f"{1 - after / before:.0%}"

    return [
        (
            backend,
            f"{bare.calls:,.0f}",
            f"{cached.calls:,.0f}",
            fall(bare.calls, cached.calls),
            f"{bare.read_units:,.1f}",
            f"{cached.read_units:,.1f}",
            fall(bare.read_units, cached.read_units),
            "-" if cached.hit_ratio is None else f"{cached.hit_ratio:.1%}",
            f"{bare.us_per_view:,.0f} / {cached.us_per_view:,.0f}",
        )
    ]


async def run() -> None:
    rows: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory() as directory:
        async with _sqlite(Path(directory)) as storage:
            rows += _rows("sqlite", *await _views(storage))
        async with moto_storage("cache") as moto:
            if moto is not None:
                rows += _rows("dynamodb (moto)", *await _views(moto, MOTO_VIEWS))
    print_table(
        f"cache: per {VIEWS:,} views of a brand's page of 50 (AP01 + AP07), a write on the page "
        f"every {WRITE_EVERY} views; storage calls and read units counted by the trace",
        rows,
        (
            "backend",
            "calls uncached",
            "calls cached",
            "fall",
            "read units uncached",
            "read units cached",
            "fall",
            "hit ratio",
            "us/view uncached / cached",
        ),
    )
    await _cache_instructions.run()
    if WRK is None:
        print("\n## cache (HTTP): skipped: wrk is not installed")
        return
    with tempfile.TemporaryDirectory() as directory:
        await _cache_http.measure(Path(directory))

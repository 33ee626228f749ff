"""The storage cache is built where the store is opened, from the settings,
so every writer of the process writes through it (docs/design.md, Storage cache)."""

from __future__ import annotations

import os

import pytest

from api.runtime.backend import open_storage
from api.settings.gateway import MEMORY, Environment, Settings
from storage.access_patterns import BRAND_BY_ID
from storage.cache import CachedStorage


def _settings(**values: object) -> Settings:
    return Settings(
        cursor_key=bytes(32),
        admin_key="a" * 32,
        sqlite_path=MEMORY,
        **values,  # type: ignore[arg-type]
    )


@pytest.mark.skipif(
    os.environ.get("CACHED_SUITE") == "1", reason="CACHED_SUITE=1 puts every store behind the cache"
)
async def test_off_by_default_the_store_is_bare() -> None:
    storage = await open_storage(_settings())
    try:
        assert not isinstance(storage, CachedStorage)
    finally:
        await storage.close()


async def test_on_the_store_is_wrapped_with_the_settings_bounds() -> None:
    storage = await open_storage(_settings(cache=True, cache_bytes=4096, cache_ttl_ms=1500))
    try:
        assert isinstance(storage, CachedStorage)
        assert storage.entries.max_bytes == 4096
        await storage.get(BRAND_BY_ID, brand_id="x")
        await storage.get(BRAND_BY_ID, brand_id="x")
        assert storage.stats.hits["AP01"] == 1
    finally:
        await storage.close()


def test_the_variables_are_read() -> None:
    env = {"PROOFGATE_CACHE": "on", "PROOFGATE_CACHE_BYTES": "1000", "PROOFGATE_CACHE_TTL_MS": "5"}
    read = Environment.read(env)
    names = ("cache", "cache_bytes", "cache_ttl_ms")
    assert tuple(getattr(read, name) for name in names) == (True, 1000, 5)

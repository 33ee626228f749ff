"""A CLI job's writes reach a gateway's cache through Redis: the job's store
publishes each invalidation and sends them all before it closes
(docs/design.md, Cache invalidations across processes)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from api.runtime.backend import job_storage
from api.settings.gateway import Settings
from api.settings.pipeline import PipelineSettings
from storage import Storage, Update
from storage.access_patterns import BRAND_BY_ID
from storage.sqlite import open_sqlite
from tests._support.redis_server import RedisServer
from tests.services.pipeline.live._cache_processes import CURSOR_KEY, Process, through_redis


@contextlib.asynccontextmanager
async def gateway(path: str, url: str) -> AsyncIterator[Process]:
    """A gateway's cache over the same file, listening on the channel, b1 warm."""
    store = await open_sqlite(path, cursor_key=CURSOR_KEY)
    await store.transact_write([Update(BRAND_BY_ID.key(brand_id="b1"), set={"name": "0"})])
    process = Process(store, through_redis(url))
    process.task = asyncio.create_task(process.channel.run())
    try:
        await process.until_trusted()
        assert await process.name("b1") == "0"
        assert await process.name("b1") == "0"
        assert process.cache.stats.hits["AP01"] == 1  # served from its cache
        yield process
    finally:
        process.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await process.task
        await process.channel.close()
        await store.close()


async def job(settings: Settings, name: str) -> None:
    async with job_storage(settings) as storage:
        await storage.transact_write([Update(BRAND_BY_ID.key(brand_id="b1"), set={"name": name})])


@contextlib.asynccontextmanager
async def silent(settings: Settings, storage: Storage, **_: Any) -> AsyncIterator[None]:
    """The planted fault: a job that runs no channel (as the CLI's did)."""
    yield


async def test_a_jobs_write_drops_the_gateways_entry(
    redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "store.sqlite")
    settings = Settings(
        cursor_key=CURSOR_KEY,
        admin_key="a" * 32,
        sqlite_path=path,
        cache=True,
        pipeline=PipelineSettings(redis_url=redis_server.url, redis_prefix="proofgate:"),
    )
    async with gateway(path, redis_server.url) as b:
        with monkeypatch.context() as patch:
            patch.setattr("api.runtime.cache_channel.running_cache_channel", silent)
            await job(settings, "unheard")
        invalidations = b.cache.stats.invalidations
        await asyncio.sleep(0.5)  # past the documented bound; the control follows
        assert b.cache.stats.invalidations == invalidations
        assert await b.name("b1") == "0"  # the fault is caught: stale

        await job(settings, "heard")
        async with asyncio.timeout(5):
            while b.cache.stats.invalidations == invalidations:
                await asyncio.sleep(0.01)
        assert await b.name("b1") == "heard"

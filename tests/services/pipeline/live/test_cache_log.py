"""Cache invalidations across processes through the store's own log, with
no Redis (docs/design.md, Cache invalidations across processes).

Two caches over one SQLite file stand for two processes: each has its own
``CacheLog`` and hears the other only through the log's items (AP35).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from domain.errors import ServiceUnavailable
from services.pipeline.live import cache_log
from services.pipeline.live.cache_log import CacheLog
from storage import Page, Storage
from storage.access_patterns import CACHE_LOG
from storage.registry import AccessPattern
from storage.sqlite import open_sqlite
from tests.services.pipeline.live._cache_processes import (
    BRANDS,
    CURSOR_KEY,
    ChannelFactory,
    DeafLog,
    Process,
    stale_reads,
    through_the_table,
)

BOUND_SECONDS = 0.2
"""Ten of the test's 20 ms ticks: A's batch written, then B's read."""


class Unreachable:
    """The store as the log reaches it, failing while ``down`` (a brownout)."""

    def __init__(self, store: Storage) -> None:
        self.store = store
        self.down = False
        self.backend = store.backend

    async def query(self, ap: AccessPattern, params: Mapping[str, Any], **kwargs: Any) -> Page:
        if self.down:
            raise ServiceUnavailable("the store does not answer")
        return await self.store.query(ap, params, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


@contextlib.asynccontextmanager
async def processes(
    tmp_path: Path, channel_b: ChannelFactory | None = None
) -> AsyncIterator[tuple[Process, Process, Storage]]:
    path = str(tmp_path / "store.sqlite")
    stores = [await open_sqlite(path, cursor_key=CURSOR_KEY) for _ in range(3)]
    a = Process(stores[0], through_the_table())
    b = Process(stores[1], channel_b or through_the_table())
    tasks = [asyncio.create_task(p.channel.run()) for p in (a, b)]
    try:
        for brand in BRANDS:
            await a.rename(brand, "0")
        await a.until_trusted()
        await b.until_trusted()
        yield a, b, stores[2]
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for store in stores:
            await store.close()


async def _stale_reads(a: Process, b: Process, truth: Storage, rounds: int) -> int:
    return await stale_reads(a, b, truth, rounds, BOUND_SECONDS)


async def test_a_write_on_a_drops_bs_entry(tmp_path: Path) -> None:
    async with processes(tmp_path) as (a, b, truth):
        assert await _stale_reads(a, b, truth, 12) == 0
        assert sum(b.cache.stats.hits.values()) > 0  # positive control: B served from its cache


async def test_a_log_that_applies_nothing_is_caught(tmp_path: Path) -> None:
    async with processes(tmp_path, through_the_table(DeafLog)) as (a, b, truth):
        assert await _stale_reads(a, b, truth, 4) > 0


async def test_the_logs_items_are_batches_that_expire(tmp_path: Path) -> None:
    async with processes(tmp_path) as (a, b, truth):
        await b.heard_from(a)
        since = datetime.fromtimestamp(time.time() - 60, UTC)
        page = await truth.query(CACHE_LOG, {"since": since}, tenant="test")
        mine = [item for item in page.items if item["publisher"] == a.channel.publisher]
        assert mine and all(item["entity"] == "CacheLogBatch" for item in mine)
        # Eight writes set up the brands: fewer items, as they were batched.
        assert sorted(int(item["number"]) for item in mine) == list(range(1, len(mine) + 1))
        assert all(
            0 < int(item["expiresAt"]) - time.time() <= cache_log.KEEP_SECONDS for item in mine
        )


async def test_a_log_that_cannot_be_read_stops_the_cache_and_flushes_it_after(
    tmp_path: Path,
) -> None:
    reach: list[Unreachable] = []

    def unreachable(store: Storage, apply: Any, flush: Any, _settled: Any) -> CacheLog:
        reach.append(Unreachable(store))
        return CacheLog(reach[0], apply=apply, flush=flush, tick=0.02)  # type: ignore[arg-type]

    async with processes(tmp_path, unreachable) as (a, b, _truth):
        assert await b.name("b1") == "0"
        reach[0].down = True
        async with asyncio.timeout(5):
            while b.channel.freshness.trusted():
                await asyncio.sleep(0.01)
        await a.rename("b1", "while down")
        assert await b.name("b1") == "while down"  # untrusted: B reads the store
        flushes = b.channel.freshness.flushes
        reach[0].down = False
        await b.until_trusted()
        assert b.channel.freshness.flushes > flushes  # heard again: flushed


async def test_an_overflowing_log_leaves_a_gap_that_flushes(
    tmp_path: Path, monkeypatch: Any
) -> None:
    async with processes(tmp_path) as (a, b, _truth):
        await b.heard_from(a)
        flushes = b.channel.freshness.flushes
        monkeypatch.setattr(cache_log, "PENDING_MAX", 2)
        for brand in ("b2", "b3", "b4"):  # no await between: the third overflows
            a.channel.publish({"keys": [], "entered": [], "moved": [], "for": brand})
        monkeypatch.undo()
        assert a.channel.unpublished == 1
        await a.rename("b5", "after the gap")
        await b.heard_from(a)
        assert b.channel.freshness.gaps == 1
        assert b.channel.freshness.flushes > flushes


async def test_close_writes_what_is_pending(tmp_path: Path) -> None:
    async with processes(tmp_path) as (a, b, truth):
        await b.heard_from(a)
        a.channel.publish({"pending": True})
        numbered = a.channel.numbered
        await a.channel.close()
        since = datetime.fromtimestamp(time.time() - 60, UTC)
        page = await truth.query(CACHE_LOG, {"since": since}, tenant="test")
        written = {int(i["number"]) for i in page.items if i["publisher"] == a.channel.publisher}
        assert numbered in written

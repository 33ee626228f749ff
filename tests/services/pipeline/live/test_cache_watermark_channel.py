"""The watermark across processes, through a real redis-server
(docs/design.md, Cache invalidations across processes, The watermark).

A (its store commits a write and holds the answer) and B, two caches over
one SQLite file with their own channels. B serves the chain (AP09) from its
cache only when A's watermark, as heard, has passed the read's start; B's
read start is pinned by B's cache clock, so each case is forced: caught up
(served), and A's write committed but not yet applied there (the store).
The planted fault, a publisher whose watermark ignores its writes in
flight, makes B serve the stale chain.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.pipeline.live.cache_channel import CacheChannel
from storage import Put, Storage
from storage.access_patterns import PROVENANCE_CHAIN
from storage.sqlite import open_sqlite
from storage.trace import Trace, tracing
from tests._support.held_writes import HeldWrites
from tests._support.redis_server import RedisServer
from tests.services.pipeline.live._cache_processes import CURSOR_KEY, Process, through_redis


class PinnedClock:
    """Real time until ``pinned`` is set: when B's reads begin."""

    def __init__(self) -> None:
        self.pinned: float | None = None

    def __call__(self) -> float:
        return time.time() if self.pinned is None else self.pinned


class CarelessChannel(CacheChannel):
    """The planted fault: stamps every message with the time, though a write
    of its own that began earlier is still in flight."""

    def _watermark(self) -> float:
        return time.time()


def event(sequence: int) -> Put:
    return Put({"PK": "PRODUCT#w", "SK": f"EVENT#{sequence:020d}", "sequence": sequence})


async def chain(storage: Storage) -> tuple[list[int], int]:
    trace = Trace()
    with tracing(trace):
        page = await storage.query(PROVENANCE_CHAIN, {"product_id": "w"}, tenant="t")
    return [int(item["sequence"]) for item in page.items], trace.storage_calls


@contextlib.asynccontextmanager
async def processes(
    tmp_path: Path, url: str, channel_a: type[CacheChannel]
) -> AsyncIterator[tuple[Process, HeldWrites, Process, PinnedClock]]:
    path = str(tmp_path / "store.sqlite")
    stores = [await open_sqlite(path, cursor_key=CURSOR_KEY) for _ in range(2)]
    await stores[0].transact_write([event(1)])
    held = HeldWrites(stores[0], held=False)
    clock = PinnedClock()
    a = Process(held, through_redis(url, channel_a))
    b = Process(stores[1], through_redis(url), clock)
    for process in (a, b):
        process.task = asyncio.create_task(process.channel.run())
    try:
        await a.until_trusted()
        await b.until_trusted()
        await b.heard_from(a)
        yield a, held, b, clock
    finally:
        held.release.set()
        for process in (a, b):
            assert process.task is not None
            process.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await process.task
            await process.channel.close()
        for store in stores:
            await store.close()


async def _until_heard_after(b: Process, a: Process, moment: float) -> None:
    """Until B has heard a message of A's sent after ``moment`` (monotonic)."""
    async with asyncio.timeout(5):
        while True:
            heard = b.channel.freshness.heard_of(a.channel.publisher)
            if heard is not None and heard[1] > moment:
                return
            await asyncio.sleep(0.01)


@pytest.mark.parametrize(
    ("channel_a", "behind"), [(CacheChannel, ([1, 2], 1)), (CarelessChannel, ([1], 0))]
)
async def test_b_serves_the_chain_only_once_as_watermark_passed_the_reads_start(
    redis_server: RedisServer,
    tmp_path: Path,
    channel_a: type[CacheChannel],
    behind: tuple[list[int], int],
) -> None:
    async with processes(tmp_path, redis_server.url, channel_a) as (a, held, b, clock):
        # Caught up: every message of A's heard since the read began.
        start = time.time()
        async with asyncio.timeout(5):
            while b.channel.freshness.heard_through() < start:
                await asyncio.sleep(0.01)
        clock.pinned = start
        assert await chain(b.cache) == ([1], 1)
        assert await chain(b.cache) == ([1], 0)  # served from B's cache

        # Behind: A's write is committed, its invalidation not yet published.
        held.release.clear()
        writing = asyncio.create_task(a.cache.transact_write([event(2)]))
        await held.committed.wait()
        clock.pinned = time.time()  # B's read begins after the commit
        await _until_heard_after(b, a, time.monotonic() + 0.3)  # heartbeats went by
        assert await chain(b.cache) == behind
        held.release.set()
        await writing
